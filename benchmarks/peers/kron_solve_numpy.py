#!/usr/bin/env python3
"""Side-by-side peers of kronex's host solve: kron(M, ..., M) x = b (d = 2, 3 or 4 factors, M the
mass matrix of n clamped B-splines of degree p, kronex::gallery::bspline_mass(n, p)), written
from the algorithm with NumPy/SciPy, timed next to kronex's bench_host_sweep in the same run.

  gbtrs  the textbook way: per factor, its band LU once (scipy.linalg.lapack.dgbtrf); per solve
         and per mode, a transposing copy that makes that mode's fibres the columns of a
         column-major matrix (np.moveaxis + ascontiguousarray), one dgbtrs on all of them, and
         the copy back.
  gemm   the dense-inverse variant: inv(M) per factor once; per solve, one mode product per mode
         (np.matmul on a reshaped view: one GEMM or one batch of GEMMs).

Factor k acts along axis k of the C-ordered tensor (x = vec of the tensor in C order, as kronex).
Before any timing each peer is checked against a dense solve of np.kron of small, distinct and
unsymmetric banded factors (so a wrong mode order, a transposed factor or a wrong band layout
fails), and at every timed size the two peers must agree and solve the system (residual), to
1e-10 or, for ill-conditioned high degrees, 1e-15 × the condition number.
Prints one line per n: kronex's median, each peer's median, kronex's speed-up over each.
Uses one OpenBLAS thread unless OPENBLAS_NUM_THREADS is set. See benchmarks/README.md.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS: one thread, as kronex

import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))
from fastdiag_numpy import bspline_matrices, mode_product  # noqa: E402

DEFAULT_SIZES = {2: [64, 128, 256, 512, 1024], 3: [16, 32, 48, 64, 96, 128], 4: [8, 12, 16, 24, 32]}
DEFAULT_KRONEX = os.path.join(ROOT, "build", "release", "benchmarks", "bench_host_sweep")


class PeerError(AssertionError):
    """A peer's answer is wrong (or the peers disagree)."""


# ---- factors -------------------------------------------------------------------------------
def bspline_mass(n, p):
    """kronex::gallery::bspline_mass<double>(n, p), clamped, as a dense array (band kept)."""
    return bspline_matrices(n, p)[1].toarray()


def unsymmetric_banded(n, kl, ku, rng):
    """A random diagonally dominant band matrix with kl ≠ ku: the check's factor that a transposed
    factor or a swapped band layout cannot pass."""
    A = np.zeros((n, n))
    for off in range(-kl, ku + 1):
        A += np.diag(rng.uniform(-1, 1, n - abs(off)), off)
    A += np.diag(np.full(n, kl + ku + 2.0))
    return A


def bandwidths(A):
    i, j = np.nonzero(A)
    return int(max(0, (i - j).max())), int(max(0, (j - i).max()))


# ---- peer (a): band LU per mode ------------------------------------------------------------
class GbtrsPeer:
    name = "gbtrs"

    def __init__(self, factors):
        self.lu = []
        for A in factors:
            n = A.shape[0]
            kl, ku = bandwidths(A)
            ab = np.zeros((2 * kl + ku + 1, n), order="F")  # LAPACK band storage with kl rows for the fill
            for j in range(n):
                for i in range(max(0, j - ku), min(n, j + kl + 1)):
                    ab[kl + ku + i - j, j] = A[i, j]
            lu, piv, info = lapack.dgbtrf(ab, kl, ku)
            if info != 0:
                raise PeerError("dgbtrf failed: info=%d" % info)
            self.lu.append((lu, piv, kl, ku))

    def solve(self, B):
        X = B
        for axis, (lu, piv, kl, ku) in enumerate(self.lu):
            # Transposing copy: the axis last in a C-ordered array, i.e. its fibres are the columns
            # of a column-major (n, rest) matrix, which dgbtrs solves in place.
            Y = np.ascontiguousarray(np.moveaxis(X, axis, -1))
            moved_shape = Y.shape
            Yt = Y.reshape(-1, moved_shape[-1]).T  # (n, rest), Fortran-contiguous: no copy by f2py
            Z, info = lapack.dgbtrs(lu, kl, ku, Yt, piv, overwrite_b=1)
            if info != 0:
                raise PeerError("dgbtrs failed: info=%d" % info)
            X = np.moveaxis(Z.T.reshape(moved_shape), -1, axis)
        return np.ascontiguousarray(X)


# ---- peer (b): dense inverses, one GEMM (batch) per mode ----------------------------------
class GemmPeer:
    name = "gemm"

    def __init__(self, factors):
        self.inv = [scipy.linalg.inv(A) for A in factors]

    def solve(self, B):
        X = B
        for axis, Ainv in enumerate(self.inv):
            X = mode_product(Ainv, X, axis)
        return X


PEERS = (GbtrsPeer, GemmPeer)


# ---- checks --------------------------------------------------------------------------------
def dense_kron(factors):
    K = factors[0]
    for A in factors[1:]:
        K = np.kron(K, A)
    return K


def apply_kron(factors, X):
    for axis, A in enumerate(factors):
        X = mode_product(A, X, axis)
    return X


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def tolerance(factors):
    """1e-10, or 1e-15 × the Kronecker product's 2-norm condition number (the product of the
    factors') where that is larger: high degrees (cond M ≈ 1.3e3 at degree 7, 27 at degree 3)."""
    cond = {}  # by object: the timed cases repeat one factor
    kappa = math.prod(cond.setdefault(id(A), float(np.linalg.cond(A))) for A in factors)
    return max(1e-10, 1e-15 * kappa)


def check_factors(dim, degree, rng):
    """Distinct factors of one size (so that a peer applying one along the wrong axis computes a
    wrong answer rather than failing on a shape): B-spline masses of two degrees and unsymmetric
    bands with kl ≠ ku (a transposed factor or a swapped band layout fails too)."""
    n = {2: 16, 3: 12, 4: 6}[dim]
    other = degree - 1 if degree > 1 else degree + 1
    make = [lambda: bspline_mass(n, min(degree, n - 1)), lambda: unsymmetric_banded(n, 1, 2, rng),
            lambda: bspline_mass(n, min(other, n - 1)), lambda: unsymmetric_banded(n, 2, 1, rng)]
    return [make[k]() for k in range(dim)]


def check_against_dense(dim, degree, peers=PEERS, tol=None, seed=7):
    """Each peer on check_factors against np.linalg.solve with the dense Kronecker product (n ≤ 16
    per mode, ≤ 1728 unknowns). Raises PeerError."""
    rng = np.random.default_rng(seed)
    factors = check_factors(dim, degree, rng)
    sizes = tuple(A.shape[0] for A in factors)
    tol = tolerance(factors) if tol is None else tol
    B = rng.uniform(-1, 1, sizes)
    x_ref = np.linalg.solve(dense_kron(factors), B.ravel()).reshape(sizes)
    errors = {}
    for Peer in peers:
        err = rel(Peer(factors).solve(B.copy()), x_ref)
        errors[Peer.name] = err
        if not err < tol:
            raise PeerError("peer %s disagrees with the dense solve: relative error %.3g (dim %d, sizes %s)"
                            % (Peer.name, err, dim, sizes))
    return errors


# ---- timing --------------------------------------------------------------------------------
def median_time(fn, repeat):
    fn()  # warm-up
    t = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[len(t) // 2]


def run_kronex(binary, dim, sizes, degree, repeat):
    """{n: median seconds} from kronex's bench_host_sweep (clamped, double) for these cases."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "kronex.json")
        cmd = [binary, "--dim", str(dim), "--n", ",".join(map(str, sizes)), "--degree", str(degree),
               "--boundary", "clamped", "--type", "double", "--reps", str(repeat), "--json", out]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise SystemExit("kron_solve_numpy: %s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
        with open(out) as f:
            doc = json.load(f)
    header = [line for line in r.stdout.splitlines() if line.startswith(("BLAS", "WARNING", "OpenBLAS"))]
    return {row["n"]: row["median_s"] for row in doc["rows"]}, header


def size_list(text):
    return [int(s) for s in text.split(",") if s]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dim", type=int, default=3, choices=(2, 3, 4))
    ap.add_argument("--sizes", type=size_list, default=None, help="1D sizes, comma separated (default by --dim)")
    ap.add_argument("--degree", type=int, default=3, help="spline degree 1..7 (default 3)")
    ap.add_argument("--repeat", type=int, default=5, help="timed solves per case, median kept (default 5)")
    ap.add_argument("--seed", type=int, default=1, help="the random right-hand side")
    ap.add_argument("--kronex", default=DEFAULT_KRONEX, help="kronex's bench_host_sweep (default %(default)s)")
    ap.add_argument("--no-kronex", action="store_true", help="time the peers only")
    ap.add_argument("--json", help="also write the rows (times, checks) as JSON")
    args = ap.parse_args(argv)
    sizes = args.sizes or DEFAULT_SIZES[args.dim]
    if not 1 <= args.degree <= 7 or min(sizes) < args.degree + 1 or args.repeat < 1:
        ap.error("need 1 <= degree <= 7, every n >= degree + 1 and repeat >= 1")

    print("kron_solve_numpy: kron(M x %d) x = b, M = bspline_mass(n, %d), clamped, double; numpy %s, scipy %s, "
          "OPENBLAS_NUM_THREADS=%s" % (args.dim, args.degree, np.__version__, scipy.__version__,
                                       os.environ.get("OPENBLAS_NUM_THREADS")))
    checks = check_against_dense(args.dim, args.degree)
    print("dense check (distinct unsymmetric factors): " + ", ".join("%s %.1e" % kv for kv in checks.items()))

    kronex_s = {}
    if not args.no_kronex:
        if not os.access(args.kronex, os.X_OK):
            raise SystemExit("kron_solve_numpy: kronex's benchmark %s not found: build it (ninja -C build/release "
                             "bench_host_sweep), pass --kronex PATH, or --no-kronex" % args.kronex)
        kronex_s, header = run_kronex(args.kronex, args.dim, sizes, args.degree, args.repeat)
        for line in header:
            print("kronex " + line)

    # speed-up: the peer's median over kronex's (above 1: kronex is faster).
    print("\n%5s %12s %11s %11s %11s %13s %12s %10s %10s" % ("n", "unknowns", "kronex[ms]", "gbtrs[ms]", "gemm[ms]",
                                                           "speedup:gbtrs", "speedup:gemm", "peer_diff", "residual"))
    rng = np.random.default_rng(args.seed)
    rows = []
    for n in sizes:
        factors = [bspline_mass(n, args.degree)] * args.dim
        B = rng.uniform(-1, 1, (n,) * args.dim)
        row = {"dim": args.dim, "n": n, "degree": args.degree, "boundary": "clamped", "type": "double",
               "unknowns": n ** args.dim}
        answers = {}
        for Peer in PEERS:
            peer = Peer(factors)
            answers[Peer.name] = peer.solve(B)
            row[Peer.name + "_s"] = median_time(lambda: peer.solve(B), args.repeat)
        row["peer_diff"] = rel(answers["gemm"], answers["gbtrs"])
        row["residual"] = rel(apply_kron(factors, answers["gbtrs"]), B)
        tol = tolerance(factors)
        if not (row["peer_diff"] < tol and row["residual"] < tol):
            raise PeerError("n=%d: peers disagree (%.3g) or do not solve (residual %.3g)"
                            % (n, row["peer_diff"], row["residual"]))
        k = kronex_s.get(n)
        row["kronex_s"] = k
        cols = ["%11.3f" % (k * 1e3) if k else "%11s" % "-", "%11.3f" % (row["gbtrs_s"] * 1e3),
                "%11.3f" % (row["gemm_s"] * 1e3)]
        cols += ["%13.2f" % (row["gbtrs_s"] / k) if k else "%13s" % "-", "%12.2f" % (row["gemm_s"] / k) if k else "%12s" % "-"]
        print("%5d %12d %s %10.1e %10.1e" % (n, row["unknowns"], " ".join(cols), row["peer_diff"], row["residual"]))
        sys.stdout.flush()
        rows.append(row)

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"dense_check": checks, "rows": rows,
                       "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS")}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
