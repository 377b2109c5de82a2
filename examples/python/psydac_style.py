#!/usr/bin/env python3
"""The 3D B-spline mass solve that psydac does with KroneckerLinearSolver, written with kronex,
and timed against a pure NumPy/SciPy version of the same algorithm in the same run.

    M = M1 ⊗ M2 ⊗ M3, Mk the mass matrix of n B-splines of degree p on [0, 1] (the second
    axis periodic: its matrix has corners), solve M x = b for a random b of shape (n, n, n).

NumPy/SciPy: per factor, an LU once (LAPACK's band LU, dgbtrf, for the clamped factors; a dense
LU, scipy.linalg.lu_factor, for the periodic one, whose corners a band solver cannot hold); per
solve and per axis, the axis moved to the front and made contiguous, one LU solve on all its
lines at once, and moved back. kronex: kx.kron(...).inverse() compiled once, then op(b, out=x).

    PYTHONPATH=build/release/python python3 examples/python/psydac_style.py --n 96 --degree 3

Prints both times (medians), kronex's speed-up, and the relative difference of the two
solutions (the script fails if it exceeds 1e-10).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads OpenBLAS: one thread each
import numpy as np  # noqa: E402
import scipy.linalg  # noqa: E402
from scipy.linalg import lapack  # noqa: E402

import kronex as kx  # noqa: E402


class NumpyKroneckerSolver:
    """The textbook Kronecker solve: one 1D LU solve per axis on all lines at once."""

    def __init__(self, matrices, periodic):
        self.solvers = []
        for a, wraps in zip(matrices, periodic):
            if wraps:
                lu = scipy.linalg.lu_factor(a)
                self.solvers.append(lambda rhs, lu=lu: scipy.linalg.lu_solve(lu, rhs))
            else:
                self.solvers.append(self._banded(a))

    @staticmethod
    def _banded(a):
        n = a.shape[0]
        kl = ku = max(abs(i - j) for i, j in zip(*np.nonzero(a)))
        ab = np.zeros((2 * kl + ku + 1, n))  # LAPACK's band storage, kl extra rows for the LU's fill
        for j in range(n):
            for i in range(max(0, j - ku), min(n, j + kl + 1)):
                ab[kl + ku + i - j, j] = a[i, j]
        lub, piv, info = lapack.dgbtrf(ab, kl, ku)
        assert info == 0, info

        def solve(rhs):
            x, info = lapack.dgbtrs(lub, kl, ku, rhs, piv)
            assert info == 0, info
            return x
        return solve

    def solve(self, b):
        x = b
        for axis, solve in enumerate(self.solvers):
            moved = np.moveaxis(x, axis, 0)
            lines = np.asfortranarray(moved.reshape(moved.shape[0], -1))
            x = np.moveaxis(solve(lines).reshape(moved.shape), 0, axis)
        return np.ascontiguousarray(x)


def median_time(f, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=64, help="B-splines per axis (default 64)")
    parser.add_argument("--degree", type=int, default=3, help="B-spline degree (default 3)")
    parser.add_argument("--repeats", type=int, default=5, help="timed solves each (default 5)")
    parser.add_argument("--threads", type=int, default=1, help="kronex's threads (default 1)")
    args = parser.parse_args()

    periodic = (False, True, False)
    factors = [kx.gallery.bspline_mass(args.n, args.degree, periodic=p) for p in periodic]
    b = np.random.default_rng(0).standard_normal((args.n,) * 3)

    op = kx.compile(kx.kron(*factors).inverse(), b, threads=args.threads)
    x = np.empty_like(b)
    op(b, out=x)
    t_kronex = median_time(lambda: op(b, out=x), args.repeats)

    reference = NumpyKroneckerSolver([f.toarray() for f in factors], periodic)
    y = reference.solve(b)
    t_numpy = median_time(lambda: reference.solve(b), args.repeats)

    diff = np.linalg.norm(x - y) / np.linalg.norm(y)
    print(f"3D B-spline mass solve, n={args.n}, degree {args.degree}, axis 1 periodic, float64, "
          f"{args.repeats} solves each (medians)")
    kronex_label = f"kronex ({args.threads} thread{'s' if args.threads > 1 else ''}):"
    print(f"  {kronex_label:<24}{t_kronex * 1e3:9.3f} ms")
    print(f"  {'NumPy/SciPy (1 thread):':<24}{t_numpy * 1e3:9.3f} ms")
    print(f"  kronex speed-up: {t_numpy / t_kronex:.1f}x; relative difference of the solutions {diff:.1e}")
    if not diff <= 1e-10:
        print("error: the two solutions differ", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
