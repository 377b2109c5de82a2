#!/usr/bin/env python3
"""The kronex command, end to end (run by ctest with KRONEX_BIN set to the executable).

Round trips: factors and tensors are written from Python (scipy.io.mmwrite, numpy.save), solved
with `kronex run ... --out x.npy`, and compared with a dense numpy reference (np.kron +
np.linalg.solve) at 1e-12 relative, real and complex, symmetric/hermitian and general, coordinate
and array formats, on the host and the device backend. Then exit codes, error output, atomic
outputs, explain --json and bench --json/--plot.
Randomised inputs use a fixed seed, printed at the start."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np
import scipy.io
import scipy.sparse

KRONEX = os.environ.get("KRONEX_BIN", "kronex")
SEED = int(os.environ.get("KRONEX_TEST_SEED", "20261130"))
DEVICE = os.environ.get("KRONEX_TEST_DEVICE", "1") == "1"
BACKENDS = ["host", "device"] if DEVICE else ["host"]


def kronex(*args, cwd=None, stdin=None, env=None):
    return subprocess.run([KRONEX, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300,
                          env=None if env is None else {**os.environ, **env})


def rel(a, b):
    return np.linalg.norm((a - b).ravel()) / np.linalg.norm(b.ravel())


def banded(rng, n, kl, ku, complex_=False, periodic=False, symmetric=False, hermitian=False):
    """A diagonally dominant band matrix (wrapping around the corners when periodic)."""
    A = np.zeros((n, n), dtype=complex if complex_ else float)
    for i in range(n):
        for d in range(-kl, ku + 1):
            j = i + d
            if periodic:
                j %= n
            elif not 0 <= j < n:
                continue
            v = rng.uniform(-1, 1) + (1j * rng.uniform(-1, 1) if complex_ else 0)
            A[i, j] = v
    if symmetric:
        A = (A + A.T) / 2
    if hermitian:
        A = (A + A.conj().T) / 2
    A += np.diag(np.full(n, 2.0 * (kl + ku + 1)))
    return A


class Base(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="kronex-cli-")
        self.rng = np.random.default_rng(SEED)

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def read(self, name):
        with open(self.path(name)) as f:
            return f.read()

    def ok(self, *args, **kw):
        r = kronex(*args, cwd=self.dir, **kw)
        self.assertEqual(r.returncode, 0, msg="kronex %s\nstdout:\n%s\nstderr:\n%s" % (args, r.stdout, r.stderr))
        return r

    def fails(self, code, *args, **kw):
        r = kronex(*args, cwd=self.dir, **kw)
        self.assertEqual(r.returncode, code, msg="kronex %s\nstdout:\n%s\nstderr:\n%s" % (args, r.stdout, r.stderr))
        return r


class RoundTrips(Base):
    def solve_and_compare(self, factors, program, b, op=lambda K: K, apply=False):
        """Runs `program` (which reads b.npy) on each backend; compares with numpy."""
        np.save(self.path("b.npy"), b)
        K = factors[0]
        for F in factors[1:]:
            K = np.kron(K, F)
        K = op(K)
        expected = (K @ b.ravel() if apply else np.linalg.solve(K, b.ravel())).reshape(b.shape)
        for backend in BACKENDS:
            out = "x-%s.npy" % backend
            r = self.ok("run", program, "--backend", backend, "--out", out, "--check")
            x = np.load(self.path(out))
            self.assertEqual(x.shape, b.shape)
            self.assertEqual(x.dtype, b.dtype)
            self.assertLess(rel(x, expected), 1e-12, msg="%s on %s" % (program, backend))
            self.assertIn("check", r.stdout)

    def test_real_general_and_symmetric_coordinate(self):
        A = banded(self.rng, 9, 2, 1)
        B = banded(self.rng, 7, 1, 1, symmetric=True)
        scipy.io.mmwrite(self.path("A.mtx"), scipy.sparse.coo_matrix(A))
        scipy.io.mmwrite(self.path("B.mtx"), scipy.sparse.coo_matrix(B), symmetry="symmetric")
        b = self.rng.uniform(-1, 1, (9, 7))
        self.solve_and_compare([A, B], 'kron(mtx("A.mtx"), mtx("B.mtx")).solve(npy("b.npy"))', b)

    def test_periodic_band_array_format_3d(self):
        A = banded(self.rng, 10, 2, 2, periodic=True)
        B = banded(self.rng, 6, 1, 1)
        C = self.rng.uniform(-1, 1, (5, 5)) + 6 * np.eye(5)
        scipy.io.mmwrite(self.path("A.mtx"), scipy.sparse.coo_matrix(A))
        scipy.io.mmwrite(self.path("B.mtx"), B)  # dense array: the "array" format
        np.save(self.path("C.npy"), C)
        b = self.rng.uniform(-1, 1, (10, 6, 5))
        self.solve_and_compare([A, B, C], 'kron(mtx("A.mtx"), mtx("B.mtx"), npy("C.npy")).solve(npy("b.npy"))', b)
        # Transposed.
        self.solve_and_compare([A, B, C], 'kron(mtx("A.mtx"), mtx("B.mtx"), npy("C.npy")).transpose().solve(npy("b.npy"))',
                               b, op=lambda K: K.T)

    def test_complex_hermitian_and_general(self):
        A = banded(self.rng, 8, 1, 2, complex_=True, hermitian=True)
        B = banded(self.rng, 6, 2, 1, complex_=True)
        scipy.io.mmwrite(self.path("A.mtx"), scipy.sparse.coo_matrix(A), symmetry="hermitian")
        scipy.io.mmwrite(self.path("B.mtx"), scipy.sparse.coo_matrix(B))
        b = self.rng.uniform(-1, 1, (8, 6)) + 1j * self.rng.uniform(-1, 1, (8, 6))
        program = 'kron(mtx("A.mtx"), mtx("B.mtx")).%s(npy("b.npy"))'
        self.solve_and_compare([A, B], program % "solve", b)
        self.solve_and_compare([A, B], 'kron(mtx("A.mtx"), mtx("B.mtx")).adjoint().solve(npy("b.npy"))', b,
                               op=lambda K: K.conj().T)
        self.solve_and_compare([A, B], program % "apply", b, apply=True)

    def test_real_factor_promoted_to_complex_and_nested(self):
        A = banded(self.rng, 7, 1, 1, symmetric=True)
        B = banded(self.rng, 5, 1, 1, complex_=True)
        scipy.io.mmwrite(self.path("A.mtx"), scipy.sparse.coo_matrix(A), symmetry="symmetric")
        scipy.io.mmwrite(self.path("B.mtx"), scipy.sparse.coo_matrix(B))
        b = self.rng.uniform(-1, 1, (7, 5)) + 0j
        # K^-1 (K b) = b: two stages, the inner one an apply.
        program = 'K = kron(mtx("A.mtx", complex128), mtx("B.mtx")); K.solve(K.apply(npy("b.npy")))'
        np.save(self.path("b.npy"), b)
        for backend in BACKENDS:
            self.ok("run", program, "--backend", backend, "--out", "x.npy")
            self.assertLess(rel(np.load(self.path("x.npy")), b), 1e-12)

    def test_program_file_and_stdin(self):
        A = banded(self.rng, 6, 1, 1)
        scipy.io.mmwrite(self.path("A.mtx"), scipy.sparse.coo_matrix(A))
        b = self.rng.uniform(-1, 1, (6, 6))
        np.save(self.path("b.npy"), b)
        with open(self.path("p.kx"), "w") as f:
            f.write('# a program file\nA = mtx("A.mtx")\nkron(A, A)\n  .solve(npy("b.npy"))\n')
        expected = np.linalg.solve(np.kron(A, A), b.ravel()).reshape(b.shape)
        self.ok("run", "-f", "p.kx", "--out", "x1.npy")
        self.ok("run", "-f", "-", "--out", "x2.npy", stdin=self.read("p.kx"))
        for name in ("x1.npy", "x2.npy"):
            self.assertLess(rel(np.load(self.path(name)), expected), 1e-12)


class OperatorSums(Base):
    """Operator arithmetic: sums, multiples and compositions against dense numpy references."""

    def write_mtx(self, name, A):
        scipy.io.mmwrite(self.path(name), scipy.sparse.coo_matrix(A), symmetry="symmetric")

    def run_to(self, program, *extra):
        r = self.ok("run", program, "--out", "x.npy", *extra)
        return r, np.load(self.path("x.npy"))

    def test_sum_solve_apply_and_composition_match_numpy(self):
        # Per axis a symmetric indefinite K and a symmetric positive definite M: separable.
        K1 = banded(self.rng, 7, 1, 1, symmetric=True) - 4 * np.eye(7)
        M1 = banded(self.rng, 7, 1, 1, symmetric=True)
        K2 = banded(self.rng, 5, 2, 2, symmetric=True) - 6 * np.eye(5)
        M2 = banded(self.rng, 5, 1, 1, symmetric=True)
        for name, A in (("K1", K1), ("M1", M1), ("K2", K2), ("M2", M2)):
            self.write_mtx(name + ".mtx", A)
        b = self.rng.uniform(-1, 1, (7, 5))
        np.save(self.path("b.npy"), b)
        defs = ('K1 = mtx("K1.mtx"); M1 = mtx("M1.mtx"); K2 = mtx("K2.mtx"); M2 = mtx("M2.mtx")\n'
                "L = kron(K1, M2) + kron(M1, K2) + 2.5e-1 * kron(M1, M2)\n")
        L = np.kron(K1, M2) + np.kron(M1, K2) + 0.25 * np.kron(M1, M2)
        r, x = self.run_to(defs + 'L.solve(npy("b.npy"))', "--check")
        self.assertLess(rel(x.ravel(), np.linalg.solve(L, b.ravel())), 1e-10)
        self.assertRegex(r.stdout, r"check   \|\|K x - b\|\| / \|\|b\|\| = \d\.\d+e-1[0-9]")
        _, y = self.run_to(defs + 'L.apply(npy("b.npy"))')
        self.assertLess(rel(y.ravel(), L @ b.ravel()), 1e-13)
        # Unary minus, a difference, a transpose and a composition (apply the right one first).
        C = np.kron(K1, M2)
        _, z = self.run_to(defs + 'C = kron(K1, M2)\n(-L.transpose() * C - 3 * C).apply(npy("b.npy"))')
        self.assertLess(rel(z.ravel(), (-L.T @ C - 3 * C) @ b.ravel()), 1e-13)
        # (L C)^-1 b = C^-1 L^-1 b.
        _, w = self.run_to(defs + 'C = kron(K1, M2)\n(L * C).solve(npy("b.npy"))')
        self.assertLess(rel(w.ravel(), np.linalg.solve(L @ C, b.ravel())), 1e-9)

    def test_gallery_sum_solves_with_a_small_residual(self):
        program = ("K = stiffness(16, 3); M = mass(16, 3)\n"
                   "L = kron(K, M, M) + kron(M, K, M) + kron(M, M, K) + 1e-2 * kron(M, M, M)\nL.solve(random(1))")
        r = self.ok("run", program, "--check")
        residual = float(re.search(r"= (\S+)", r.stdout.split("check")[1]).group(1))
        self.assertLess(residual, 1e-10)
        r = self.ok("explain", program, "--json")
        plan = json.loads(r.stdout)["stages"][0]["plan"]
        self.assertEqual(plan["expression"], "inverse(kron(f0,f1,f2)+kron(f3,f4,f5)+kron(f6,f7,f8)+0.01*kron(f9,f10,f11))")
        self.assertEqual([s["method"] for s in plan["setup"]][:3], ["sygv n=16"] * 3)

    def test_not_separable_solve_exits_2_naming_the_axis(self):
        program = ("L = kron(laplacian(7), mass(5, 1)) + kron(mass(7, 2), laplacian(5)) + kron(mass(7, 1), mass(5, 1))\n"
                   "L.solve(ones())")
        r = self.fails(2, "run", program)
        self.assertIn("<expression>:1:5: error: kronex: cannot solve", r.stderr)
        self.assertIn("axis 0 uses three different matrices", r.stderr)
        self.assertIn("     ^~~~", r.stderr)
        # Applying it is fine.
        self.ok("run", program.replace("solve", "apply"))

    def test_bench_times_sums_even_when_they_cannot_be_undone(self):
        # A separable sum's solve: timed, with its residual; the apply of a sum that is not
        # separable cannot be undone by a solve: timed all the same, residual null.
        solve = "L = kron(laplacian($n), mass($n, 1)) + kron(mass($n, 2), laplacian($n)); L.solve(random(1))"
        apply = "L = kron(laplacian(8), mass(8, 1)) + kron(mass(8, 2), laplacian(8)) + kron(mass(8, 1), mass(8, 2))\n" \
                "L.apply(random(1))"
        self.ok("bench", solve, "--sweep", "n=8,12", "--reps", "3", "--json", "s.json")
        rows = json.load(open(self.path("s.json")))["rows"]
        self.assertEqual([r["shape"] for r in rows], [[8, 8], [12, 12]])
        self.assertTrue(all(r["residual"] < 1e-12 for r in rows))
        r = self.ok("bench", apply, "--reps", "3", "--json", "a.json")
        self.assertIn("combine", r.stdout)
        self.assertIsNone(json.load(open(self.path("a.json")))["rows"][0]["residual"])

    def test_singular_periodic_sum_needs_pseudo_inverse(self):
        defs = "K = stiffness(8, 2, periodic); M = mass(8, 2, periodic); L = kron(K, M) + kron(M, K)\n"
        r = self.fails(2, "run", defs + "L.solve(random(1))")
        self.assertIn("1:%d: error: singular operator kron(K, M) + kron(M, K)" % (defs.index("kron(K, M) +") + 1), r.stderr)
        self.assertIn("use pseudo_inverse(rtol)", r.stderr)
        # The pseudo-inverse gives the minimum-norm solution: no component along the constants.
        _, x = self.run_to(defs + "L.pseudo_inverse(1e-10).apply(random(1))")
        self.assertLess(abs(x.sum()) / np.linalg.norm(x), 1e-10)
        self.assertGreater(np.linalg.norm(x), 0)

    def test_device_backend_runs_operator_sums(self):
        if not DEVICE:
            self.skipTest("no device runtime in this build")
        prog = "L = kron(laplacian(6), mass(5, 2)) + kron(mass(6, 2), laplacian(5)); L.solve(random(3))"
        _, xh = self.run_to(prog)
        _, xd = self.run_to(prog, "--backend", "device")
        self.assertLess(rel(xd, xh), 1e-10)
        # A pseudo-inverse that drops eigenvalue sums: its projections run on the device too.
        pinv = "L = kron(laplacian(6, periodic), mass(5, 1, periodic)) + kron(mass(6, 1, periodic), laplacian(5, periodic));" \
               " L.pseudo_inverse(1e-10).apply(random(2))"
        _, ph = self.run_to(pinv)
        _, pd = self.run_to(pinv, "--backend", "device")
        self.assertLess(rel(pd, ph), 1e-10)
        self.assertLess(abs(pd.sum()) / np.linalg.norm(pd), 1e-10)  # no component along the constants

    def test_rebinding_a_sum_many_times_meets_a_limit(self):
        with open(self.path("sum.kx"), "w") as f:
            f.write("K = kron(mass(8, 1))\nL = K\n" + "L = L + K\n" * 100000 + "L.solve(ones())\n")
        r = subprocess.run([KRONEX, "explain", "-f", "sum.kx"], cwd=self.dir, capture_output=True, text=True,
                           **limited(2048))
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("sum.kx:2050:7: error: too many terms", r.stderr)
        self.assertIn("the limit is 4096", r.stderr)


class ExitCodesAndErrors(Base):
    def test_help(self):
        r = self.ok("--help")
        self.assertIn("Examples:", r.stdout)
        for cmd in ("explain", "run", "bench"):
            r = self.ok(cmd, "--help")
            self.assertIn("Examples:", r.stdout)
            self.assertIn("kronex " + cmd, r.stdout)
        self.assertIn("kronex", self.ok("--version").stdout)

    def test_usage_errors_exit_2(self):
        self.fails(2)                                          # no command
        self.fails(2, "frobnicate")                            # unknown command
        self.assertIn("no program", self.fails(2, "run").stderr)
        self.assertIn("not both", self.fails(2, "run", "x", "-f", "p.kx").stderr)
        self.fails(2, "run", "kron(mass(8,3)).solve(ones())", "--backend", "gpu")
        self.fails(2, "run", "kron(mass(8,3)).solve(ones())", "--bogus")
        self.assertIn("--set n", self.fails(2, "run", "kron(mass($n,3)).solve(ones())", "--set", "n=abc").stderr)
        self.assertIn("--sweep", self.fails(2, "bench", "kron(mass($n,3)).solve(ones())", "--sweep", "n=8:4:x2").stderr)
        self.assertIn("\"missing.kx\": no such file", self.fails(2, "run", "-f", "missing.kx").stderr)

    def test_program_errors_exit_2_with_caret(self):
        r = self.fails(2, "run", "Mass = mass(8, 3)\nkron(Mass, Mas).solve(ones())")
        self.assertEqual(r.stderr, "<expression>:2:12: error: unknown name 'Mas' (did you mean 'Mass'?)\n"
                                   " 2 | kron(Mass, Mas).solve(ones())\n"
                                   "   |            ^~~\n")
        r = self.fails(2, "explain", 'kron(mtx("nope.mtx")).solve(ones())')
        self.assertIn('1:6: error: cannot use "nope.mtx"', r.stderr)
        with open(self.path("bad.mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 x 1.0\n")
        r = self.fails(2, "run", 'kron(mtx("bad.mtx")).solve(ones())')
        self.assertIn('"bad.mtx", line 4', r.stderr)
        self.assertIn("\n   |      ^" + "~" * 13 + "\n", r.stderr)  # under the 14 characters of mtx("bad.mtx")

    def test_min_rcond_sets_the_singularity_threshold(self):
        # mass(8, 3) has a reciprocal condition estimate of about 0.03: accepted by default (8 eps)
        # and below 0.01, refused above it, with the estimate and the threshold in the message.
        program = "kron(mass(8, 3)).solve(ones())"
        self.ok("run", program)
        self.ok("run", program, "--min-rcond", "0.01")
        r = self.fails(2, "run", program, "--min-rcond", "0.5")
        self.assertIn("singular factor mass(8, 3) (mode 0", r.stderr)
        self.assertIn("below the threshold 0.5 (compile_options::min_rcond)", r.stderr)
        r = self.fails(2, "bench", program, "--min-rcond", "0.5", "--reps", "1")
        self.assertIn("below the threshold 0.5", r.stderr)
        self.fails(2, "run", program, "--min-rcond", "2")  # outside [0, 1]

    def test_singular_factor_points_at_the_factor(self):
        r = self.fails(2, "run", "P = laplacian(6, periodic)\nkron(mass(8, 3), P).solve(ones())")
        self.assertIn("<expression>:1:5: error: singular factor laplacian(6, periodic) (mode 1, LAPACK info", r.stderr)
        self.assertIn("^~~~~~~~~~~~~~~~~~~~~", r.stderr)

    def test_operator_only_can_be_explained_not_run(self):
        self.ok("explain", "kron(mass(8, 3), laplacian(5)).inverse()")
        self.assertIn("ends with an operator", self.fails(2, "run", "kron(mass(8, 3))").stderr)

    def test_out_is_atomic(self):
        # The output is written to a temporary file that is renamed onto x.npy: x.npy then names a
        # new file (a new inode), and a second name for the old file (a hard link) keeps the old
        # contents. A writer that truncated and rewrote x.npy in place would change both.
        target = self.path("x.npy")
        with open(target, "w") as f:
            f.write("old contents")
        os.link(target, self.path("old.npy"))
        old_inode = os.stat(target).st_ino
        # A failing program leaves the existing file alone, and no temporary behind.
        self.fails(2, "run", "kron(mass(8, 3)).solve(npy(\"nope.npy\"))", "--out", "x.npy")
        self.assertEqual(self.read("x.npy"), "old contents")
        self.assertEqual(os.stat(target).st_ino, old_inode)
        # A missing directory is refused before any work.
        r = self.fails(2, "run", "kron(mass(8, 3)).solve(ones())", "--out", "no/such/dir/x.npy")
        self.assertIn("does not exist", r.stderr)
        self.ok("run", "kron(mass(8, 3)).solve(ones())", "--out", "x.npy")
        self.assertEqual(np.load(target).shape, (8,))
        self.assertNotEqual(os.stat(target).st_ino, old_inode)
        self.assertEqual(self.read("old.npy"), "old contents")
        self.assertEqual(sorted(os.listdir(self.dir)), ["old.npy", "x.npy"])


class ExplainAndBench(Base):
    def test_threads_change_the_plan_not_the_result(self):
        # A tensor above the threaded size: 1, 2 and 3 threads give the same bits; the plan says
        # how many; explain --json has the count.
        prog = "kron(mass(40, 3), mass(36, 2, periodic), laplacian(30)).solve(random(5))"
        results = []
        for t in ("1", "2", "3"):
            self.ok("run", prog, "--threads", t, "--out", "x%s.npy" % t)
            results.append(np.load(self.path("x%s.npy" % t)))
        np.testing.assert_array_equal(results[0], results[1])
        np.testing.assert_array_equal(results[0], results[2])
        two = self.ok("explain", prog, "--threads", "2").stdout
        one = self.ok("explain", prog, "--threads", "1").stdout
        self.assertIn("threads=2", two)
        self.assertNotIn("threads=", one)
        j = json.loads(self.ok("explain", prog, "--threads", "2", "--json").stdout)
        self.assertEqual(j["stages"][0]["plan"]["threads"], 2)
        self.fails(2, "run", prog, "--threads", "-1")

    def test_solves_choose_the_method(self):
        # n = 8 in a 2^16-value tensor: the cost model runs mode 0 as GEMMs with the dense
        # inverse and the n = 64 modes as substitutions; --solves forces either way; both results
        # solve the system. explain --json has the model's predictions per solve.
        prog = "kron(mass(8, 3), mass(64, 3), mass(64, 2, periodic)).solve(random(3))"
        default = self.ok("explain", prog).stdout
        self.assertRegex(default, r"mode 0  f0 N  gemm .*model: lu_subst \S+, gemm \S+")
        self.assertRegex(default, r"mode 1  f1 N  lu_subst")
        self.assertNotIn("gemm  (", self.ok("explain", prog, "--solves", "substitution").stdout)
        forced = self.ok("explain", prog, "--solves", "dense_inverse").stdout
        self.assertEqual(len(re.findall(r"  solve  mode \d  f\d N  gemm", forced)), 3, forced)
        j = json.loads(self.ok("explain", prog, "--json").stdout)
        steps = j["stages"][0]["plan"]["steps"]
        self.assertEqual(steps[0]["method"], "gemm")
        self.assertLess(steps[0]["model_seconds"]["gemm"], steps[0]["model_seconds"]["lu_subst"])
        results = {}
        for m in ("substitution", "dense_inverse"):
            self.ok("run", prog, "--solves", m, "--out", m + ".npy")
            results[m] = np.load(self.path(m + ".npy"))
        self.assertLess(rel(results["dense_inverse"], results["substitution"]), 1e-12)
        self.fails(2, "run", prog, "--solves", "inverse")

    def test_explain_any_size_allocates_nothing(self):
        # explain plans without factoring or allocating: a 2^36-value problem (512 GiB in double)
        # is explained on every backend in a small resident set, and a size the device cannot
        # take is refused with exit 2 naming the limit, not an out-of-memory.
        # A fresh Python process runs kronex and reports its children's peak resident set: kronex's.
        probe = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
                 "sys.stdout.write(r.stdout); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); "
                 "sys.exit(r.returncode)")
        program = "kron(mass(4096, 3), mass(4096, 3, periodic), mass(4096, 3)).solve(ones())"
        for backend in BACKENDS:
            r = subprocess.run([sys.executable, "-c", probe, KRONEX, "explain", "--backend", backend, program],
                               capture_output=True, text=True, timeout=300)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("(4096,4096,4096)", r.stdout)
            if backend == "device":
                self.assertIn("uploaded 4096x4096", r.stdout)
            # 100 MiB; 400 MiB under AddressSanitizer (its shadow memory): either is far below the
            # 512 GiB tensor or the 1 TiB of buffers the plan describes.
            peak_kib = int(r.stdout.strip().splitlines()[-1])
            limit_mib = 400 if "ASAN_OPTIONS" in os.environ else 100
            self.assertLess(peak_kib, limit_mib * 1024, backend)
        if DEVICE:
            r = self.fails(2, "explain", "--backend", "device", "kron(laplacian(40000)).solve(ones())")
            self.assertIn("max_factor_size", r.stderr)
            self.assertNotIn("out of memory", r.stderr)

    def test_explain_json_states_the_plan(self):
        # Four modes: an identity factor (skipped, no step), a fused pair (modes 2 and 3: 32 slabs
        # of 6 x 5), an unfused mode 0 (one slab only). The expected plans are worked out here by
        # hand; the text output comes from a separate run of `kronex explain`.
        program = ("K = kron(mass(8, 3), identity(4), mass(6, 2, periodic), mass(5, 1)); "
                   "K.solve(K.transpose().apply(random(3)))")
        text = self.ok("explain", program).stdout
        j = json.loads(self.ok("explain", program, "--json").stdout)
        self.assertEqual(j["value_type"], "float64")
        self.assertEqual(j["shape"], [8, 4, 6, 5])
        self.assertEqual([s["kind"] for s in j["stages"]], ["apply", "solve"])
        size = 8 * 4 * 6 * 5 * 8  # bytes of the tensor
        for s, trans, method, setup in zip(j["stages"], "TN", ["band_matvec", "lu_subst"], ["matvec", "gbtrf"]):
            plan = s["plan"]
            self.assertEqual(plan["shape"], [8, 4, 6, 5])
            self.assertEqual([f["method"].split()[0] for f in plan["setup"]], [setup, "skipped", setup, setup])
            steps = plan["steps"]
            self.assertEqual([(st["kind"], st["mode"], st["factor"], st["trans"], st["method"]) for st in steps],
                             [(s["kind"], m, m, trans, method) for m in (0, 2, 3)])
            self.assertEqual([st["view"] for st in steps], [[1, 8, 120], [32, 6, 5], [192, 5, 1]])
            self.assertEqual([st.get("fused_with_next", False) for st in steps], [False, True, False])
            # Unfused: the tensor read and written once; a fused pair reads it once and writes it once.
            self.assertEqual([st["bytes"] for st in steps], [2 * size, size, size])
            self.assertEqual(plan["bytes"], sum(st["bytes"] for st in steps))
            self.assertEqual(plan["flops"], sum(st["flops"] for st in steps))
            # The text output of the separate run holds this plan and a line for each step.
            self.assertIn(plan["text"], text)
            for i, st in enumerate(steps):
                self.assertRegex(text, r"\n    %d  %s  mode %d  f%d %s  %s  %s\(%s\)" % (
                    i, st["kind"], st["mode"], st["factor"], st["trans"], st["method"],
                    r"fused with %d  " % (i + 1) if st.get("fused_with_next") else "", ",".join(map(str, st["view"]))))

    def test_bench_sweep_json_and_plot(self):
        backend = "all" if DEVICE else "host"
        start = time.monotonic()
        r = self.ok("bench", "kron(mass($n, 3), mass($n, 2, periodic)).solve(random(1))", "--sweep", "n=8:16:x2",
                    "--backend", backend, "--reps", "4", "--json", "b.json", "--plot", "b.svg")
        wall = time.monotonic() - start
        self.assertIn("GDOF/s", r.stdout)
        self.assertIn("time/floor", r.stdout)
        self.assertEqual(r.stderr, "")  # no progress bar when stderr is not a terminal
        rows = json.loads(self.read("b.json"))["rows"]
        self.assertEqual(len(rows), 4 if DEVICE else 2)
        for row in rows:
            # The statistics are those of the recorded runs (the median is element reps / 2 of the
            # sorted times), each run took time, and all of them fit in the command's wall time.
            samples = row["samples_s"]
            self.assertEqual(row["reps"], 4)
            self.assertEqual(len(samples), 4)
            self.assertTrue(all(t > 0 for t in samples), samples)
            self.assertEqual(row["time_s"], {"median": sorted(samples)[2], "min": min(samples), "max": max(samples)})
            self.assertAlmostEqual(row["gdof_per_s"], row["unknowns"] / row["time_s"]["median"] * 1e-9)
            self.assertLess(row["residual"], 1e-12)
        self.assertLess(sum(sum(row["samples_s"]) for row in rows), wall)
        self.assertIn("wrote b.svg\n", r.stdout)
        self.assertTrue(self.read("b.svg").lstrip().startswith("<?xml"))
        self.assertEqual(sorted(os.listdir(self.dir)), ["b.json", "b.svg"])

    def test_plot_script_gets_file_names_verbatim_and_its_failure_is_reported(self):
        # A stand-in plot script records its arguments and fails: the names reach it as given
        # (no shell splits or expands them) and its exit status is reported, exit code 1.
        with open(self.path("plot.py"), "w") as f:
            f.write("import json, sys\nwith open(sys.argv[1]) as f: json.load(f)\n"
                    "with open('argv.json', 'w') as f: json.dump(sys.argv[1:], f)\nsys.exit(3)\n")
        plot = "a b;$(touch pwned)'.svg"
        r = self.fails(1, "bench", "kron(mass(8, 3)).solve(ones())", "--reps", "2", "--no-plan", "--plot", plot,
                       env={"KRONEX_PYTHON": sys.executable, "KRONEX_PLOT_SCRIPT": self.path("plot.py")})
        self.assertIn("plotting failed: %s exited with status 3" % sys.executable, r.stderr)
        rows, out = json.loads(self.read("argv.json"))
        self.assertRegex(rows, "^" + re.escape(plot) + r"\.json\.tmp-[0-9]+$")
        self.assertEqual(out, plot)
        self.assertEqual(sorted(os.listdir(self.dir)), ["argv.json", "plot.py"])  # the rows' temporary removed
        r = self.fails(1, "bench", "kron(mass(8, 3)).solve(ones())", "--reps", "2", "--no-plan", "--plot", "x.svg",
                       env={"KRONEX_PYTHON": self.path("no-such-python")})
        self.assertIn("plotting failed: cannot start %s (No such file or directory)" % self.path("no-such-python"),
                      r.stderr)


ASAN = "ASAN_OPTIONS" in os.environ  # AddressSanitizer reserves terabytes of address space


def limited(megabytes, timeout=120):
    """run() options for a child under an address-space limit (a regression fails instead of
    swapping) and a generous time limit (a regression fails instead of hanging). One BLAS
    thread: OpenBLAS hangs at exit when it cannot start its threads."""
    import resource

    def limit():
        if not ASAN:
            resource.setrlimit(resource.RLIMIT_AS, (megabytes << 20, megabytes << 20))
    return {"preexec_fn": limit, "timeout": timeout,
            "env": {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}}


class Hardening(Base):
    """Inputs that once crashed, hung, swapped or took minutes: each is refused or handled in
    bounded memory and time, exit 2 with a message naming the problem."""

    def run_limited(self, megabytes, *args, timeout=120):
        return subprocess.run([KRONEX, *args], cwd=self.dir, capture_output=True, text=True,
                              **limited(megabytes, timeout))

    def assert_exit(self, r, code, *needles):
        self.assertEqual(r.returncode, code, msg="stdout:\n%s\nstderr:\n%s" % (r.stdout[-2000:], r.stderr[-2000:]))
        for n in needles:
            self.assertIn(n, r.stderr)

    def write(self, name, text):
        with open(self.path(name), "w") as f:
            f.write(text)

    def test_rebinding_a_name_many_times_meets_a_limit(self):
        # Each line nests the value one level deeper, with no nesting in the text: this crashed
        # the evaluator's and the values' recursion (exit 139) before any limit was met.
        self.write("apply.kx", "K = kron(mass(8, 1))\ny = ones()\n" + "y = K.apply(y)\n" * 200000 + "y\n")
        r = self.run_limited(2048, "explain", "-f", "apply.kx")
        self.assert_exit(r, 2, "apply.kx:4099:5: error: too many stages", "the limit is 4096")
        self.write("transpose.kx", "K = kron(mass(8, 1))\n" + "K = K.transpose()\n" * 300000 + "K.solve(ones())\n")
        r = self.run_limited(2048, "explain", "-f", "transpose.kx")
        self.assert_exit(r, 2, "transpose.kx:258:7: error: too many methods on one operator", "the limit is 256")
        # The text itself is bounded.
        big = "# " + "x" * (8 << 20) + "\n"
        r = subprocess.run([KRONEX, "explain", "-f", "-"], input=big, cwd=self.dir, capture_output=True, text=True,
                           **limited(2048))
        self.assert_exit(r, 2, "the program in <stdin> is longer than the limit of 8388608 bytes")

    def test_long_runs_of_comment_lines_and_long_names_take_linear_time(self):
        # Quadratic before: every newline scanned ahead for a '.' continuation (200000 comment
        # lines took 39 s), and "did you mean" compared two long names in full (14 s at 100000
        # characters). The time limit is generous: either is a fraction of a second now.
        self.write("comments.kx", "K = kron(mass(8, 1))\nK\n" + "# c\n" * 400000 + ".solve(ones())\n")
        r = self.run_limited(2048, "explain", "-f", "comments.kx", timeout=60)
        self.assert_exit(r, 0)
        self.assertIn("plan inverse(kron(f0))", r.stdout)
        name = "a" * 300000
        self.write("names.kx", name + " = mass(8, 1)\nkron(" + name[1:] + "b).solve(ones())\n")
        r = self.run_limited(2048, "explain", "-f", "names.kx", timeout=60)
        self.assert_exit(r, 2, "names.kx:2:6: error: unknown name")
        self.assertNotIn("did you mean", r.stderr)

    def test_sweeps_are_bounded_and_checked(self):
        program = "kron(mass($n, 1), mass($m, 1)).solve(ones())"
        r = self.fails(2, "bench", program, "--sweep", "n=1:1000:+1", "--sweep", "m=2,3")
        self.assertIn("the sweeps give 1000 (n) x 2 (m) = 2000 points, more than the limit of 1000", r.stderr)
        r = self.fails(2, "bench", program, "--sweep", "n=2,3", "--sweep", "n=4", "--set", "m=2")
        self.assertIn("--sweep n is given twice", r.stderr)
        r = self.fails(2, "bench", program, "--sweep", "n=2,3", "--set", "n=4", "--set", "m=2")
        self.assertIn("parameter n is given by both --set and --sweep", r.stderr)
        r = self.fails(2, "run", program, "--set", "n=2", "--set", "m=2", "--set", "n=3")
        self.assertIn("--set n is given twice", r.stderr)

    @unittest.skipIf(ASAN, "an address-space limit needs a build without AddressSanitizer")
    def test_bench_holds_one_point_at_a_time(self):
        # Each point reads the 32 MiB operand again: 24 points kept until timing started needed
        # 736 MiB more than one at a time. One at a time fits in about 1.05 GiB (the host's
        # bandwidth probe alone takes 768 MiB).
        np.save(self.path("b.npy"), np.ones((64, 64, 1024)))
        r = self.run_limited(1280, "bench", "kron(mass(64, $d), mass(64, 3), mass(1024, 1)).solve(npy(\"b.npy\"))",
                             "--sweep", "d=1:24:+1", "--reps", "1", "--warmup", "0", "--no-plan", timeout=300)
        self.assert_exit(r, 0)
        self.assertEqual(len([l for l in r.stdout.splitlines() if l.startswith("d=")]), 24)

    @unittest.skipIf(ASAN, "an address-space limit needs a build without AddressSanitizer")
    def test_stages_share_one_dense_factor_and_its_factorization(self):
        # A 32 MiB dense factor used by six stages (solves, an apply, a transposed solve): held
        # once, factored once (the LU serves both solves), one program per (factor, op). Held
        # and factored once per stage, the same program needed over 1.4 GiB; it fits in 600 MiB.
        n = 2000
        rng = np.random.default_rng(SEED)
        A = rng.standard_normal((n, n)) + n * np.eye(n)
        np.save(self.path("A.npy"), A)
        program = 'K = kron(npy("A.npy"))\nK.transpose().solve(K.solve(K.apply(K.solve(K.solve(ones())))))\n'
        self.write("p.kx", program)
        r = self.run_limited(768, "run", "-f", "p.kx", "--out", "x.npy")
        self.assert_exit(r, 0)
        Ai = np.linalg.inv(A)
        expected = Ai.T @ (Ai @ (A @ (Ai @ (Ai @ np.ones(n)))))
        self.assertLess(rel(np.load(self.path("x.npy")), expected), 1e-10)

    @unittest.skipIf(ASAN, "an address-space limit needs a build without AddressSanitizer")
    def test_a_dense_npy_factor_is_held_once(self):
        # 128 MiB of zeros (a sparse file): explain reads the values (and checks them) but
        # factors nothing. Held once it fits in 256 MiB; held twice (the file's array and the
        # factor, or a copy per executable) it needed over 320 MiB.
        import numpy.lib.format as fmt
        with open(self.path("Z.npy"), "wb") as f:
            fmt.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (4096, 4096)})
            f.truncate(f.tell() + 8 * 4096 * 4096)
        r = self.run_limited(256, "explain", 'Z = npy("Z.npy")\nK = kron(Z)\nK.solve(K.apply(ones()))')
        self.assert_exit(r, 0)
        self.assertIn("dense n=4096", r.stdout)

    @unittest.skipIf(ASAN, "an address-space limit needs a build without AddressSanitizer")
    def test_requests_larger_than_the_memory_limit_are_input_errors(self):
        # Checked before anything is allocated: exit 2 naming the bytes needed and the limit
        # (the address-space limit less what kronex maps), not exit 1 "out of memory" part way.
        # The time limit catches a check made after allocating (and touching) gigabytes.
        def too_large(r, what):
            self.assert_exit(r, 2, what + " is too large: needs ")
            m = re.search(r"needs (\d+) bytes, limit (\d+) bytes", r.stderr)
            self.assertIsNotNone(m, r.stderr)
            self.assertGreater(int(m.group(1)), int(m.group(2)))
            self.assertLess(int(m.group(2)), 384 << 20)
            return int(m.group(1))
        # The tensors of a run: 2^28 values, four tensors of 2 GiB.
        r = self.run_limited(384, "run", "kron(mass(1024, 1), mass(1024, 1), mass(256, 1)).solve(ones())", timeout=30)
        self.assertGreaterEqual(too_large(r, "<expression>:1:1: error: the program"), 4 * 8 << 28)
        # A dense factor's plan: 8192 x 8192 (a sparse file of zeros, 512 MiB) refused before
        # its values are read.
        import numpy.lib.format as fmt
        with open(self.path("D.npy"), "wb") as f:
            fmt.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (8192, 8192)})
            f.truncate(f.tell() + 8 * 8192 * 8192)
        r = self.run_limited(384, "explain", 'kron(npy("D.npy")).solve(ones())', timeout=30)
        self.assertEqual(too_large(r, "the dense factor npy(\"D.npy\")"), 8 << 26)
        # An operand read from a file: refused before it is read.
        with open(self.path("b.npy"), "wb") as f:
            fmt.write_array_header_1_0(f, {"descr": "<c16", "fortran_order": False, "shape": (4096, 8192)})
            f.truncate(f.tell() + 16 * 4096 * 8192)
        r = self.run_limited(384, "run", 'kron(mass(4096, 1, complex128), mass(8192, 1, complex128)).solve(npy("b.npy"))',
                             timeout=30)
        self.assertEqual(too_large(r, "the operand npy(\"b.npy\")"), 16 << 25)
        # Within the limit, the same kinds of programs run.
        r = self.run_limited(384, "run", "kron(mass(64, 1), mass(64, 1), mass(16, 1)).solve(ones())", timeout=30)
        self.assert_exit(r, 0)

    def test_npy_header_is_checked_before_the_data_is_read(self):
        # A 2 GiB file (sparse: never written) meant for another operator: refused from its header
        # in a few megabytes, where reading it first needed twice its size.
        import numpy.lib.format as fmt
        with open(self.path("big.npy"), "wb") as f:
            fmt.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (1 << 28,)})
            f.truncate(f.tell() + (8 << 28))
        r = self.run_limited(512, "explain", 'kron(mass(8, 1)).solve(npy("big.npy"))')
        self.assert_exit(r, 2, "shape mismatch: kron(mass(8, 1)) has sizes (8,) but npy(\"big.npy\") has shape (268435456,)")
        r = self.run_limited(512, "explain", 'kron(npy("big.npy"), mass(4, 1)).solve(ones())')
        self.assert_exit(r, 2, "a dense factor must be a square, non-empty 2D array")

    def test_non_finite_values_in_files_are_input_errors(self):
        b = np.ones((4, 3))
        b[2, 1] = np.nan
        np.save(self.path("b.npy"), b)
        r = self.fails(2, "run", 'kron(mass(4, 1), mass(3, 1)).solve(npy("b.npy"))')
        self.assertIn('cannot use "b.npy": the value at index (2, 1) is nan: values must be finite', r.stderr)
        r = self.fails(2, "run", 'kron(mass(4, 1, float32), mass(3, 1, float32)).solve(npy("b.npy", float32))')
        self.assertIn("index (2, 1) is nan", r.stderr)
        A = np.eye(3)
        A[0, 2] = -np.inf
        np.save(self.path("A.npy"), np.asfortranarray(A))
        r = self.fails(2, "run", 'kron(npy("A.npy")).solve(ones())')
        self.assertIn('cannot use "A.npy": the value at index (0, 2) is -inf', r.stderr)
        self.write("A.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1.0\n2 2 nan\n")
        r = self.fails(2, "run", 'kron(mtx("A.mtx")).solve(ones())')
        self.assertIn('"A.mtx", line 4: value \'nan\' is not a finite number', r.stderr)

    def test_non_regular_files_are_refused(self):
        # A FIFO blocked the open forever; the time limit turns a regression into a failure.
        os.mkfifo(self.path("fifo"))
        for program, what in (('kron(mass(4, 1)).solve(npy("fifo"))', "an npy file"),
                              ('kron(mtx("fifo")).solve(ones())', "a Matrix Market file")):
            r = self.run_limited(2048, "explain", program, timeout=60)
            self.assert_exit(r, 2, '"fifo": is a FIFO, not %s (kronex reads regular files only)' % what)
        r = self.run_limited(2048, "explain", "-f", "fifo", timeout=60)
        self.assert_exit(r, 2, 'cannot read the program file "fifo": is a FIFO, not a program file')
        os.mkdir(self.path("dir"))
        r = self.fails(2, "explain", "-f", "dir")
        self.assertIn('"dir": is a directory, not a program file', r.stderr)
        # Standard input stays available as '-'.
        self.ok("explain", "-f", "-", stdin="kron(mass(8, 1)).solve(ones())")

    def test_empty_file_names_are_refused(self):
        program = "kron(mass(8, 1)).solve(ones())"
        self.assertIn("--out: empty file name", self.fails(2, "run", program, "--out", "").stderr)
        self.assertIn("--json: empty file name", self.fails(2, "bench", program, "--json", "").stderr)
        self.assertIn("--plot: empty file name", self.fails(2, "bench", program, "--plot", "").stderr)
        self.assertIn("-f: empty file name", self.fails(2, "run", "-f", "").stderr)
        self.assertEqual(os.listdir(self.dir), [])

    def test_long_lines_in_matrix_market_files_name_the_line_and_the_limit(self):
        with open(self.path("long.mtx"), "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n% " + "x" * (2 << 20) + "\n1 1 1\n1 1 1.0\n")
        r = self.fails(2, "explain", 'kron(mtx("long.mtx")).solve(ones())')
        self.assertIn('"long.mtx", line 2: the line is longer than the limit of 1048576 bytes', r.stderr)

    def test_matrix_market_indices_may_have_a_leading_plus(self):
        self.write("p.mtx", "%%MatrixMarket matrix coordinate real general\n+2 +2 +2\n+1 +1 +2.0\n+2 2 4.0\n")
        r = self.ok("run", 'kron(mtx("p.mtx")).solve(ones())', "--out", "x.npy")
        self.assertEqual(np.load(self.path("x.npy")).tolist(), [0.5, 0.25])


if __name__ == "__main__":
    print("kronex CLI tests: KRONEX_BIN=%s, seed %d (KRONEX_TEST_SEED), backends %s" % (KRONEX, SEED, BACKENDS))
    unittest.main(verbosity=2)
