#!/usr/bin/env python3
"""Krylov solves in the kronex command, checked against scipy.sparse.linalg (run by ctest with
KRONEX_BIN set to the executable).

The problem: a variable-coefficient 3D B-spline mass matrix, M_ij = integral of c N_i N_j with
c = 1 + 0.9 sin(2 pi x) sin(2 pi y) sin(2 pi z), on a tensor-product clamped quadratic B-spline
basis of (7, 6, 8) functions, assembled here by Gauss quadrature and written as Matrix Market; the
1D mass matrices (c = 1) are written too. kronex (`mtx_operator`) and SciPy solve it with no
preconditioner, with Jacobi and with the Kronecker product of the 1D mass matrices (in SciPy a
LinearOperator applying the same Kronecker inverse, mode by mode).

How SciPy's iterations are counted (scipy 1.10, Debian 12; its tolerance argument is `tol`, and
atol=0 is passed to avoid the legacy default):
- cg, bicgstab: the number of `callback` calls, each solve stopping at SciPy's own test
  ||r|| <= tol ||b|| (the recursively updated residual, as kronex tests).
- gmres: SciPy 1.10 preconditions on the left, kronex on the right. The right-preconditioned
  solve is SciPy's unpreconditioned gmres on the operator A M (y, then x = M y), whose residual
  is b - A x; counted by the `callback_type='pr_norm'` calls (one per inner iteration).
- minres: SciPy tests its own quantities (||r|| / (||A|| ||x||) ...), not ||r|| <= tol ||b||. So
  it runs to a tighter tolerance and its iterations are counted as the first callback iterate
  x_k with ||b - A x_k|| <= rtol ||b||.
SciPy's own count moves with rounding where a solve takes hundreds of iterations (the
unpreconditioned solves, condition number about 1.2e3): the same SciPy solve with A applied as a
dense matrix stops some iterations apart (bicgstab most). So the counts must agree within +-1 (cg,
minres) or +-2 (bicgstab, gmres) of the range of SciPy's two counts; for the preconditioned
solves the two counts are equal and that is the plain +-1 / +-2. The unpreconditioned solves get
2 % of SciPy's count more: the spread of SciPy's two counts does not bound how far rounding moves
them (on one machine both SciPy solves of minres took 244 iterations and kronex's 247; on others
kronex's count was within 1).
Solutions agree within 10 rtol in the norm both solvers test, ||A (x_kronex - x_scipy)|| / ||b||
(each solve's error is only bounded through its residual; the unpreconditioned systems have
condition numbers in the thousands), and kronex's printed residual is numpy's ||b - A x|| / ||b||."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import scipy
import scipy.io
import scipy.sparse
import scipy.sparse.linalg
from scipy.interpolate import BSpline

KRONEX = os.environ.get("KRONEX_BIN", "kronex")
# With a device runtime in the command (the CPU device in kronex's build), every solve is checked
# on the device backend too.
DEVICE = os.environ.get("KRONEX_TEST_DEVICE", "1") == "1"
BACKENDS = ["host", "device"] if DEVICE else ["host"]
SEED = int(os.environ.get("KRONEX_TEST_SEED", "20261201"))
SHAPE = (7, 6, 8)
DEGREE = 2
RTOL = 1e-10
# The iteration counts may differ by this much (rounding moves a solve across the tolerance).
SLACK = {"cg": 1, "minres": 1, "bicgstab": 2, "gmres": 2}


def kronex(*args, cwd=None):
    return subprocess.run([KRONEX, *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def basis_1d(n, p):
    """Clamped B-splines of degree p, n of them on [0, 1]: quadrature points, weights, values."""
    t = np.concatenate([np.zeros(p), np.linspace(0, 1, n - p + 1), np.ones(p)])
    g, w = np.polynomial.legendre.leggauss(p + 2)
    edges = np.linspace(0, 1, n - p + 1)
    x = np.concatenate([(a + b) / 2 + (b - a) / 2 * g for a, b in zip(edges[:-1], edges[1:])])
    wx = np.concatenate([(b - a) / 2 * w for a, b in zip(edges[:-1], edges[1:])])
    B = BSpline.design_matrix(x, t, p).toarray()
    assert B.shape == (x.size, n)
    return x, wx, B


def assemble():
    """The variable-coefficient 3D mass matrix (sparse) and the three 1D mass matrices."""
    pts = [basis_1d(n, DEGREE) for n in SHAPE]
    M1 = [B.T @ (w[:, None] * B) for _, w, B in pts]
    (x, wx, Bx), (y, wy, By), (z, wz, Bz) = pts
    X, Y, Z = np.meshgrid(x, y, z, indexing="ij")
    c = 1 + 0.9 * np.sin(2 * np.pi * X) * np.sin(2 * np.pi * Y) * np.sin(2 * np.pi * Z)
    W = (wx[:, None, None] * wy[None, :, None] * wz[None, None, :]) * c
    # Rows of D: quadrature points (x slowest), columns: basis functions in C order (axis 0 slowest).
    D = np.kron(np.kron(Bx, By), Bz)
    A = D.T @ (W.ravel()[:, None] * D)
    A = (A + A.T) / 2  # exactly symmetric
    A[np.abs(A) < 1e-300] = 0
    return scipy.sparse.csr_matrix(A), M1


def kron_inverse_operator(M1):
    """The LinearOperator x -> (M1 x M2 x M3)^-1 x, mode by mode."""
    inv = [np.linalg.inv(M) for M in M1]
    N = int(np.prod(SHAPE))

    def apply(v):
        X = np.asarray(v).reshape(SHAPE)
        return np.einsum("ia,jb,kc,abc->ijk", inv[0], inv[1], inv[2], X).ravel()

    return scipy.sparse.linalg.LinearOperator((N, N), matvec=apply, dtype=float)


def scipy_solve(method, A, b, M, restart, rtol):
    """(x, iterations) as described in the module's docstring."""
    la = scipy.sparse.linalg
    n_calls = [0]
    if method in ("cg", "bicgstab"):
        def count(xk):
            n_calls[0] += 1
        f = la.cg if method == "cg" else la.bicgstab
        x, info = f(A, b, tol=rtol, atol=0.0, maxiter=10 * b.size, M=M, callback=count)
        assert info == 0, info
        return x, n_calls[0]
    if method == "gmres":
        N = b.size
        Mop = la.aslinearoperator(M) if M is not None else la.aslinearoperator(scipy.sparse.identity(N))
        AM = la.LinearOperator((N, N), matvec=lambda v: A @ (Mop @ v), dtype=float)

        def count(pr_norm):
            n_calls[0] += 1
        y, info = la.gmres(AM, b, tol=rtol, atol=0.0, restart=restart, maxiter=10 * N, callback=count,
                           callback_type="pr_norm")
        assert info == 0, info
        return Mop @ y, n_calls[0]
    # minres: iterates, then the first one meeting ||b - A x_k|| <= rtol ||b||
    iterates = []
    x, info = la.minres(A, b, tol=rtol * 1e-6, maxiter=5 * b.size, M=M, callback=lambda xk: iterates.append(xk.copy()))
    bn = np.linalg.norm(b)
    for k, xk in enumerate(iterates, start=1):
        if np.linalg.norm(b - A @ xk) <= rtol * bn:
            return xk, k
    raise AssertionError("scipy minres never met the tolerance")


class Base(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kronex-krylov-")
        cls.A, cls.M1 = assemble()
        scipy.io.mmwrite(cls.path("A.mtx"), cls.A)
        for k, M in enumerate(cls.M1):
            scipy.io.mmwrite(cls.path("M%d.mtx" % k), scipy.sparse.coo_matrix(M))
        cls.b = np.random.default_rng(SEED).uniform(-1, 1, SHAPE)
        np.save(cls.path("b.npy"), cls.b)
        with open(cls.path("A.mtx"), "rb") as f:
            cls.A_bytes = f.read()

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name)

    def run_kronex(self, code, *args):
        r = kronex(*args, cwd=self.dir)
        self.assertEqual(r.returncode, code, msg="kronex %s\nstdout:\n%s\nstderr:\n%s" % (args, r.stdout, r.stderr))
        return r

    def load_json(self, name):
        with open(self.path(name)) as f:
            return json.load(f)

    def program(self, call):
        return 'A = mtx_operator("A.mtx", %d, %d, %d)\n' % SHAPE + \
               'P = kron(mtx("M0.mtx"), mtx("M1.mtx"), mtx("M2.mtx")).inverse()\n' + call


class AgainstScipy(Base):
    PRECONDITIONERS = {"none": "", "jacobi": ", jacobi(A)", "kron": ", P"}

    def scipy_preconditioner(self, name):
        if name == "none":
            return None
        if name == "jacobi":
            return scipy.sparse.diags(1 / self.A.diagonal())
        return kron_inverse_operator(self.M1)

    def check(self, method, precond):
        # GMRES(30) without a preconditioner restarts a dozen times here; over that many cycles
        # SciPy 1.10's restarted gmres lags kronex's by a factor of about 2 in the residual (392
        # iterations against 379, the same with A dense), so that solve restarts every 100.
        restart = 100 if precond == "none" else 30
        options = ", rtol=%g, maxiter=5000" % RTOL + (", restart=%d" % restart if method == "gmres" else "")
        call = '%s(A, npy("b.npy")%s%s)' % (method, self.PRECONDITIONERS[precond], options)
        b = self.b.ravel()
        M = self.scipy_preconditioner(precond)
        xs, scipy_iterations = scipy_solve(method, self.A, b, M, restart, RTOL)
        # SciPy's own count moves with rounding: the same solve with the products summed in
        # another order (A dense). The counts must agree within the slack beyond that spread.
        _, other = scipy_solve(method, scipy.sparse.linalg.aslinearoperator(self.A.toarray()), b, M, restart, RTOL)
        low, high = min(scipy_iterations, other), max(scipy_iterations, other)
        for backend in BACKENDS:
            out = "x-%s-%s-%s.npy" % (method, precond, backend)
            r = self.run_kronex(0, "run", self.program(call), "--out", out, "--backend", backend)
            self.assertIn("backend " + ("host" if backend == "host" else "device/"), r.stdout)
            m = re.search(r"krylov  (\w+)  iterations (\d+)  converged  relative residual \|\|b - A x\|\| / \|\|b\|\| = (\S+)",
                          r.stdout)
            self.assertIsNotNone(m, msg=r.stdout)
            self.assertEqual(m.group(1), method)
            iterations, printed_residual = int(m.group(2)), float(m.group(3))
            x = np.load(self.path(out)).ravel()
            true_residual = np.linalg.norm(b - self.A @ x) / np.linalg.norm(b)
            self.assertLessEqual(true_residual, 10 * RTOL)
            self.assertAlmostEqual(printed_residual, true_residual, delta=0.01 * true_residual + 1e-300)
            label = "%s, preconditioner %s, %s: kronex %d iterations, scipy %d (%d with A dense)" % (
                method, precond, backend, iterations, scipy_iterations, other)
            print(label, file=sys.stderr)
            slack = SLACK[method] + (int(np.ceil(0.02 * high)) if precond == "none" else 0)
            self.assertGreaterEqual(iterations, low - slack, msg=label)
            self.assertLessEqual(iterations, high + slack, msg=label)
            self.assertGreater(iterations, 0)
            self.assertLessEqual(np.linalg.norm(self.A @ (x - xs)) / np.linalg.norm(b), 10 * RTOL, msg=label)
            # The input files are never modified.
            with open(self.path("A.mtx"), "rb") as f:
                self.assertEqual(f.read(), self.A_bytes)

    def test_cg(self):
        for p in self.PRECONDITIONERS:
            with self.subTest(preconditioner=p):
                self.check("cg", p)

    def test_minres(self):
        for p in self.PRECONDITIONERS:
            with self.subTest(preconditioner=p):
                self.check("minres", p)

    def test_bicgstab(self):
        for p in self.PRECONDITIONERS:
            with self.subTest(preconditioner=p):
                self.check("bicgstab", p)

    def test_gmres(self):
        for p in self.PRECONDITIONERS:
            with self.subTest(preconditioner=p):
                self.check("gmres", p)

    def test_preconditioners_cut_the_iterations(self):
        counts = {}
        for p in self.PRECONDITIONERS:
            r = self.run_kronex(0, "run", self.program('cg(A, npy("b.npy")%s, rtol=1e-8)' % self.PRECONDITIONERS[p]))
            counts[p] = int(re.search(r"iterations (\d+)", r.stdout).group(1))
        self.assertLess(counts["kron"], counts["jacobi"])
        self.assertLess(counts["jacobi"], counts["none"])


class HistoryAndExitCodes(Base):
    def test_history_json_holds_every_check(self):
        r = self.run_kronex(0, "run", self.program('cg(A, npy("b.npy"), P, rtol=1e-9, check_every=2)'),
                            "--history", "h.json", "--check")
        self.assertIn("wrote   h.json", r.stdout)
        h = self.load_json("h.json")
        it = int(re.search(r"iterations (\d+)", r.stdout).group(1))
        self.assertEqual(h["method"], "cg")
        self.assertTrue(h["converged"])
        self.assertEqual(h["status"], "converged")
        self.assertEqual(h["iterations"], it)
        self.assertEqual(h["rtol"], 1e-9)
        self.assertEqual(h["check_every"], 2)
        # Checks at iteration 0, every second iteration, and the last one.
        self.assertEqual(len(h["history"]), (it + 1) // 2 + 1)
        bn = np.linalg.norm(self.b)
        self.assertAlmostEqual(h["history"][0], bn, delta=1e-12 * bn)  # x = 0: r = b
        self.assertLessEqual(h["history"][-1], 1e-9 * bn)
        self.assertTrue(all(v > 1e-9 * bn for v in h["history"][:-1]))
        self.assertEqual(h["program"], self.program('cg(A, npy("b.npy"), P, rtol=1e-9, check_every=2)'))
        self.assertGreater(h["relative_residual"], 0)
        # Not a Krylov program: --history is a usage error.
        self.run_kronex(2, "run", "kron(mass(6, 2)).solve(ones())", "--history", "h2.json")
        self.assertFalse(os.path.exists(self.path("h2.json")))

    def test_not_converged_exits_3_after_writing_the_result(self):
        r = self.run_kronex(3, "run", self.program('gmres(A, npy("b.npy"), rtol=1e-12, maxiter=4, restart=3)'),
                            "--out", "x3.npy", "--history", "h3.json")
        self.assertIn("not converged (max_iterations)", r.stdout)
        self.assertIn("gmres did not converge", r.stderr)
        x = np.load(self.path("x3.npy"))
        self.assertEqual(x.shape, SHAPE)
        h = self.load_json("h3.json")
        self.assertFalse(h["converged"])
        self.assertEqual(h["status"], "max_iterations")
        self.assertEqual(h["iterations"], 4)
        printed = float(re.search(r"= (\S+)\n", r.stdout).group(1))
        true = np.linalg.norm(self.b.ravel() - self.A @ x.ravel()) / np.linalg.norm(self.b)
        self.assertAlmostEqual(printed, true, delta=0.01 * true)

    def test_indefinite_operator_stops_cg(self):
        r = self.run_kronex(3, "run", self.program('cg(-1 * kron(mtx("M0.mtx"), mtx("M1.mtx"), mtx("M2.mtx")), ones())'))
        self.assertIn("indefinite_operator", r.stdout)


class BenchAndExplain(Base):
    def test_bench_reports_iterations_and_time_per_iteration(self):
        r = self.run_kronex(0, "bench", self.program('cg(A, npy("b.npy"), P, rtol=1e-10)'), "--reps", "3", "--warmup",
                            "1", "--json", "bench.json")
        self.assertIn("iterations", r.stdout)
        self.assertIn("per-iter[ms]", r.stdout)
        j = self.load_json("bench.json")
        (row,) = j["rows"]
        k = row["krylov"]
        self.assertEqual(k["method"], "cg")
        self.assertTrue(k["converged"])
        runs = self.run_kronex(0, "run", self.program('cg(A, npy("b.npy"), P, rtol=1e-10)'))
        self.assertEqual(k["iterations"], int(re.search(r"iterations (\d+)", runs.stdout).group(1)))
        self.assertEqual(row["reps"], 3)
        self.assertAlmostEqual(k["time_per_iteration_s"], row["time_s"]["median"] / k["iterations"])
        self.assertEqual(k["time_to_solution_s"], row["time_s"]["median"])
        self.assertNotIn("floor_s", row)

    def test_bench_of_an_unconverged_solve_exits_3(self):
        r = self.run_kronex(3, "bench", self.program('cg(A, ones(), maxiter=2)'), "--reps", "2")
        self.assertIn("max_iterations", r.stdout)

    def test_bench_on_every_backend(self):
        if not DEVICE:
            self.skipTest("no device runtime in this build")
        prog = self.program('cg(A, npy("b.npy"), P, rtol=1e-10)')
        r = self.run_kronex(0, "bench", prog, "--backend", "all", "--reps", "2", "--warmup", "0", "--json", "all.json")
        self.assertIn("krylov cg on (7, 6, 8) [host, float64]", r.stdout)
        self.assertRegex(r.stdout, r"krylov cg on \(7, 6, 8\) \[device/\w+, float64\]")
        rows = self.load_json("all.json")["rows"]
        self.assertEqual([row["backend"].split("/")[0] for row in rows], ["host", "device"])
        # The same solve on both: the iteration counts agree within one (the device sums its
        # inner products in another order), and each converged.
        counts = [row["krylov"]["iterations"] for row in rows]
        self.assertLessEqual(abs(counts[0] - counts[1]), 1, msg=str(counts))
        for row in rows:
            self.assertTrue(row["krylov"]["converged"])
            self.assertLessEqual(row["krylov"]["relative_residual"], 1e-9)
        # explain prints the device plans of the preconditioner.
        e = self.run_kronex(0, "explain", prog, "--backend", "device")
        self.assertRegex(e.stdout, r"plan inverse\(kron\(f0,f1,f2\)\) on \(7,6,8\):\(48,8,1\) \[device \w+, double\]")
        self.assertIn("per run=0", e.stdout)

    def test_explain_prints_the_preconditioner_plan(self):
        r = self.run_kronex(0, "explain", self.program('minres(A, ones(), P, rtol=1e-7)'))
        self.assertIn("krylov minres on (7, 6, 8) [host, float64]  rtol=1e-07", r.stdout)
        self.assertIn("assembled 336 x 336", r.stdout)
        self.assertIn("preconditioner: P", r.stdout)
        self.assertIn("plan inverse(kron(f0,f1,f2))", r.stdout)
        j = json.loads(self.run_kronex(0, "explain", self.program('gmres(A, ones(), P, restart=7)'), "--json").stdout)
        self.assertEqual(j["krylov"]["method"], "gmres")
        self.assertEqual(j["krylov"]["restart"], 7)
        self.assertEqual([s["kind"] for s in j["stages"]], ["preconditioner"])

    def test_kronecker_operators_and_sums_as_a(self):
        # A Kronecker sum (not separable-solvable issues aside) as the operator, its fast
        # diagonalisation inverse as the preconditioner: one iteration.
        prog = ('K = kron(mtx("M0.mtx"), mtx("M1.mtx"), mtx("M2.mtx"))\n'
                'L = K + 0.5 * K\n'
                'cg(L, npy("b.npy"), L.inverse(), rtol=1e-12)')
        r = self.run_kronex(0, "run", prog, "--out", "xs.npy")
        self.assertIn("iterations 1  converged", r.stdout)
        K = scipy.sparse.kron(scipy.sparse.kron(self.M1[0], self.M1[1]), self.M1[2]).toarray()
        x = np.load(self.path("xs.npy")).ravel()
        self.assertLess(np.linalg.norm(1.5 * K @ x - self.b.ravel()) / np.linalg.norm(self.b), 1e-11)


class Errors(Base):
    def error(self, program, message, marker, nth=1, args=()):
        """Exit code 2, `message`, and the caret at the nth occurrence of `marker` in the program."""
        r = self.run_kronex(2, "run", program, *args)
        self.assertIn(message, r.stderr)
        offset = -1
        for _ in range(nth):
            offset = program.index(marker, offset + 1)
        line = program.count("\n", 0, offset) + 1
        column = offset - (program.rfind("\n", 0, offset) + 1) + 1
        m = re.search(r":(\d+):(\d+): error:", r.stderr)
        self.assertIsNotNone(m, msg=r.stderr)
        self.assertEqual((int(m.group(1)), int(m.group(2))), (line, column), msg=r.stderr)
        caret_line = r.stderr.rstrip("\n").split("\n")[-1]
        self.assertEqual(caret_line.index("^") - caret_line.index("|") - 1, column, msg=r.stderr)
        return r

    def test_errors_point_at_the_call(self):
        A = 'mtx_operator("A.mtx", 7, 6, 8)'
        self.error('cg(%s, ones(), rtl=1e-3)' % A, "unknown option 'rtl' of cg (did you mean 'rtol'?)", "rtl")
        self.error('cg(%s, ones(), restart=5)' % A, "restart is an option of gmres only", "restart")
        self.error('cg(%s)' % A, "cg takes 2 or 3 arguments", "cg")
        self.error('minres(%s, ones(), ones(), ones())' % A, "minres takes 2 or 3 arguments", "ones()", 3)
        self.error('cg(%s, ones(), rtol=1e-3, rtol=1e-4)' % A, "the option rtol is given twice", "rtol", 2)
        self.error('cg(%s, rtol=1e-3, ones())' % A, "positional argument after the options", "ones")
        self.error('cg(%s, ones(), rtol=-1)' % A, "rtol must be a finite number >= 0", "-1")
        self.error('cg(%s, ones(), maxiter=1.5)' % A, "maxiter must be an integer", "1.5")
        self.error('cg(%s, ones(), check_every=0)' % A, "check_every must be between 1", "0)")
        self.error('bicgstab(%s, ones(), kron(mass(7, 2), mass(6, 2), mass(9, 2)))' % A,
                   "shape mismatch: the preconditioner", "kron")
        self.error('gmres(mtx_operator("A.mtx", 8, 6, 8), npy("b.npy"))', "holds a 336 x 336 matrix", "mtx_operator")
        self.error('cg(kron(mass(7, 2), mass(6, 2)), npy("b.npy"))', "shape mismatch", "npy")
        self.error('%s.solve(ones())' % A, "use a Krylov solver", "solve")
        self.error('kron(mass(8, 2)).solve(ones(), rtol=1e-3)', "named argument 'rtol=' is not taken here", "rtol")
        self.error('mass(8, rtol=2)', "named argument 'rtol=' is not taken here", "rtol")
        self.error('cg(%s, kron(mass(7, 2), mass(6, 2), mass(8, 2)).solve(ones()))' % A, "not another stage's result",
                   "kron")
        self.error('cg(kron(mass(7, 2)), mass(7, 2))', "argument 2 of cg must be the right-hand side", "mass", 2)
        self.error('jacobi(kron(mass(7, 2)))', "argument 1 of jacobi must be an assembled operator", "kron")
        self.error('cg(%s, ones(), kron(mass(7, 2, float32), mass(6, 2, float32), mass(8, 2, float32)))' % A,
                   "value type mismatch", "kron")
        self.error('x = cg(%s, ones())\nkron(mass(7, 2), mass(6, 2), mass(8, 2)).solve(x)' % A,
                   "a Krylov solve must be the last statement", "x)")
        self.error('cg(%s.inverse(), ones())' % A, "cannot invert %s: an assembled operator has no Kronecker" % A,
                   "inverse")
        self.error('%s + kron(mass(7, 2), mass(6, 2))' % A,
                   "the sum of operators with different sizes: %s has sizes (7, 6, 8), kron(mass(7, 2), mass(6, 2)) "
                   "has sizes (7, 6)" % A, "+")
        self.error('%s - kron(mass(7, 2, float32), mass(6, 2, float32), mass(8, 2, float32))' % A,
                   "the difference of operators with different value types", "-")

    def test_a_sum_that_cannot_be_solved_directly_is_solved_with_a_krylov_method(self):
        L = "L = kron(laplacian(7), mass(5, 1)) + kron(mass(7, 2), laplacian(5)) + kron(mass(7, 1), mass(5, 1))\n"
        self.error(L + "L.solve(ones())", "use a Krylov solver", "kron")
        P = "(kron(laplacian(7), mass(5, 1)) + kron(mass(7, 1), laplacian(5))).inverse()"
        r = self.run_kronex(0, "run", L + "cg(L, ones(), %s, rtol=1e-10)" % P, "--out", "xl.npy")
        self.assertIn("converged", r.stdout)
        # L x, computed by kronex's own apply of the sum, is b = ones.
        self.run_kronex(0, "run", L + 'L.apply(npy("xl.npy"))', "--out", "yl.npy")
        y = np.load(self.path("yl.npy"))
        self.assertEqual(y.shape, (7, 5))
        self.assertLess(np.linalg.norm(y - 1) / np.linalg.norm(np.ones((7, 5))), 1e-9)

    def test_file_errors_name_the_file(self):
        self.error('cg(mtx_operator("missing.mtx", 4), ones())', 'cannot use "missing.mtx"', "mtx_operator")
        with open(self.path("bad.mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 x 1.0\n")
        self.error('cg(mtx_operator("bad.mtx", 2), ones())', 'cannot use "bad.mtx", line 4', "mtx_operator")
        with open(self.path("zero.mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 1 1.0\n")
        self.error('Z = mtx_operator("zero.mtx", 2)\ncg(Z, ones(), jacobi(Z))', "diagonal entry of row 1 is zero", "jacobi")


class AssembledOperatorsInArithmetic(Base):
    """An assembled operator in operator arithmetic (A + K, c A, A K, K A, transposes): applied (a
    csr_spmv step of the plan) on every backend, checked against SciPy's product; refused by
    .solve (use a Krylov solver); accepted as a Krylov solver's operator."""

    DEFS = ('A = mtx_operator("A.mtx", %d, %d, %d)\n' % SHAPE +
            'K = kron(mtx("M0.mtx"), mtx("M1.mtx"), mtx("M2.mtx"))\n')
    error = Errors.error

    def kron_matrix(self):
        return scipy.sparse.kron(scipy.sparse.kron(self.M1[0], self.M1[1]), self.M1[2]).tocsr()

    def applied(self, expression, out, backend):
        r = self.run_kronex(0, "run", self.DEFS + expression + '.apply(npy("b.npy"))', "--out", out,
                            "--backend", backend)
        self.assertIn("backend " + ("host" if backend == "host" else "device/"), r.stdout)
        y = np.load(self.path(out))
        self.assertEqual(y.shape, SHAPE)
        return y.ravel()

    def check_close(self, got, want):
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 1e-13)

    def test_apply_matches_scipy(self):
        A, K, b = self.A, self.kron_matrix(), self.b.ravel()
        J = scipy.sparse.diags(1 / self.A.diagonal())
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                self.check_close(self.applied("(A + 0.5 * K)", "sum.npy", backend), (A + 0.5 * K) @ b)
                self.check_close(self.applied("(K * A - 2 * A)", "composition.npy", backend), (K @ A - 2 * A) @ b)
                self.check_close(self.applied("(A * K + 0.5 * K).transpose()", "transpose.npy", backend),
                                 (A @ K + 0.5 * K).T @ b)
                self.check_close(self.applied("(jacobi(A) * K)", "jacobi.npy", backend), (J @ K) @ b)
                self.check_close(self.applied("A", "bare.npy", backend), A @ b)
                self.check_close(self.applied("(-A)", "negated.npy", backend), -(A @ b))

    def test_the_plan_shows_the_spmv_step(self):
        r = self.run_kronex(0, "explain", self.DEFS + '(A + 0.5 * K).transpose().apply(npy("b.npy"))')
        self.assertIn("plan sparse_operator(7,6,8)^T+0.5*kron(f0,f1,f2)^T on (7,6,8)", r.stdout)
        self.assertIn("apply  csr_spmv sparse_operator(7,6,8)^T", r.stdout)
        # The transpose of the leaf alone (A is symmetric here: only the plan tells it).
        r = self.run_kronex(0, "explain", self.DEFS + '(A.transpose() * K).apply(ones())')
        self.assertIn("plan sparse_operator(7,6,8)^T*kron(f0,f1,f2) on (7,6,8)", r.stdout)
        # The bare apply: one csr_spmv step.
        r = self.run_kronex(0, "explain", self.DEFS + 'A.apply(ones())')
        self.assertIn("plan sparse_operator(7,6,8) on (7,6,8)", r.stdout)
        self.assertIn("apply  csr_spmv sparse_operator(7,6,8)  ", r.stdout)

    def test_solve_and_inverse_point_at_the_call(self):
        self.error(self.DEFS + '(A + 0.5 * K).solve(npy("b.npy"))',
                   "cannot solve with A + 0.5 * K: it has an assembled operator, which has no Kronecker structure to "
                   "solve with (it is applied, not solved); use a Krylov solver: cg(A, b [, P])", "solve")
        self.error(self.DEFS + 'L = K * A\nL.inverse().apply(ones())', "cannot invert K * A", "inverse")
        self.error(self.DEFS + '(A + K).pseudo_inverse(1e-8).apply(ones())', "cannot pseudo-invert A + K",
                   "pseudo_inverse")

    @unittest.skipUnless(DEVICE, "no device runtime in this kronex")
    def test_the_device_plan_uploads_the_matrix_once(self):
        r = self.run_kronex(0, "explain", self.DEFS + '(A + 0.5 * K).apply(npy("b.npy"))', "--backend", "device")
        self.assertRegex(r.stdout, r"plan sparse_operator\(7,6,8\)\+0\.5\*kron\(f0,f1,f2\) on \(7,6,8\):\(48,8,1\) "
                                   r"\[device \w+, double\]")
        self.assertIn("apply  csr_spmv sparse_operator(7,6,8)", r.stdout)
        self.assertIn("per run=0", r.stdout)

    def test_a_sum_with_an_assembled_operator_is_a_krylov_operator(self):
        want = scipy.sparse.linalg.spsolve((self.A + 0.5 * self.kron_matrix()).tocsc(), self.b.ravel())
        for backend in BACKENDS:
            with self.subTest(backend=backend):
                out = "xk-%s.npy" % backend
                r = self.run_kronex(0, "run", self.DEFS + 'cg(A + 0.5 * K, npy("b.npy"), K.inverse(), rtol=1e-12)',
                                    "--out", out, "--backend", backend)
                self.assertIn("converged", r.stdout)
                x = np.load(self.path(out)).ravel()
                self.assertLess(np.linalg.norm(x - want) / np.linalg.norm(want), 1e-9)


if __name__ == "__main__":
    print("kronex Krylov CLI tests: KRONEX_BIN=%s, scipy %s, seed %d" % (KRONEX, scipy.__version__, SEED))
    unittest.main(verbosity=2)
