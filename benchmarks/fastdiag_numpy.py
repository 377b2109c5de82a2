#!/usr/bin/env python3
"""NumPy/SciPy baseline: fast diagonalisation of the 3D operator

    L = K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M

with K, M the 1D stiffness and mass matrices of n clamped B-splines of degree p on [0, 1], the
same matrices as kronex's gallery (stiffness(n, p) and mass(n, p) in the kronex command).

Set-up, per axis: K V = M V Λ by scipy.linalg.eigh(K, M), which normalises V so that VᵀMV = I.
Then L = (V⊗V⊗V)⁻ᵀ (Λ⊕Λ⊕Λ + σ) (V⊗V⊗V)⁻¹, so a solve is three mode products with Vᵀ, a division
by λi + λj + λk + σ, and three mode products with V. The residual is checked against L applied
mode by mode with the sparse 1D matrices. Prints one line per n; see benchmarks/README.md.
"""
import argparse
import csv
import math
import os
import sys
import time

import numpy as np
import scipy
import scipy.linalg
import scipy.sparse
from scipy.interpolate import BSpline

COLUMNS = ["n", "N", "setup_s", "solve_s", "gdof_s", "residual"]


def bspline_matrices(n, p):
    """(K, M) as sparse CSR: kronex::gallery::bspline_stiffness and bspline_mass, clamped.

    Open uniform knots, n - p elements; (p+1)-point Gauss-Legendre quadrature per element is exact
    for these polynomial integrands, as in kronex's assembly."""
    if p < 1 or n < p + 1:
        raise ValueError("clamped B-splines need degree >= 1 (the stiffness of degree 0 is zero) and "
                         "n >= degree + 1, got n=%d, degree=%d" % (n, p))
    ne = n - p
    breaks = np.linspace(0.0, 1.0, ne + 1)
    knots = np.concatenate([np.zeros(p), breaks, np.ones(p)])
    gx, gw = np.polynomial.legendre.leggauss(p + 1)  # on [-1, 1]
    h = 1.0 / ne
    x = (breaks[:-1, None] + 0.5 * h * (gx + 1.0)).ravel()
    w = np.tile(0.5 * h * gw, ne)
    splines = BSpline(knots, np.eye(n), p)  # identity coefficients: column i of splines(x) is N_i(x)
    B, D = splines(x), splines.derivative()(x)
    M, K = B.T @ (w[:, None] * B), D.T @ (w[:, None] * D)
    # Keep the band only: the exact sparsity of kronex's banded factors (bandwidth p).
    band = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= p
    return scipy.sparse.csr_matrix(np.where(band, K, 0.0)), scipy.sparse.csr_matrix(np.where(band, M, 0.0))


def mode_product(A, X, axis):
    """A applied along one axis of X (the mode product), as one GEMM or one batch of GEMMs;
    A may be sparse (then along a copy of X with that axis first)."""
    if scipy.sparse.issparse(A):
        Y = A @ np.moveaxis(X, axis, 0).reshape(X.shape[axis], -1)
        return np.moveaxis(Y.reshape((A.shape[0],) + X.shape[:axis] + X.shape[axis + 1:]), 0, axis)
    left, n = math.prod(X.shape[:axis]), X.shape[axis]
    right = math.prod(X.shape[axis + 1:])
    out_shape = X.shape[:axis] + (A.shape[0],) + X.shape[axis + 1:]
    if right == 1:  # last axis: one GEMM with the rows of X (a batch of matrix-vector products otherwise)
        return (X.reshape(left, n) @ A.T).reshape(out_shape)
    return np.matmul(A, X.reshape(left, n, right)).reshape(out_shape)


def apply_operator(K, M, sigma, X):
    """L X, mode by mode: L = K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M on a 3D tensor X (C order)."""
    MX = mode_product(M, X, 2)
    MMX = mode_product(M, MX, 1)  # M along axes 1 and 2, shared by two terms
    return (mode_product(K, MMX, 0) + mode_product(M, mode_product(K, MX, 1), 0)
            + mode_product(M, mode_product(M, mode_product(K, X, 2), 1), 0) + sigma * mode_product(M, MMX, 0))


def fd_setup(K, M):
    """Per-axis generalised eigenpairs (all axes share K and M): λ and V with VᵀMV = I."""
    return scipy.linalg.eigh(K.toarray(), M.toarray())


def fd_solve(lam, V, sigma, B):
    """L⁻¹ B = (V⊗V⊗V) (Λ⊕Λ⊕Λ + σ)⁻¹ (Vᵀ⊗Vᵀ⊗Vᵀ) B."""
    Y = B
    for axis in range(3):
        Y = mode_product(V.T, Y, axis)
    # The eigenvalue sums by broadcasting, never stored between solves (as a matrix-free solver
    # would); the n×n plane first, so only one n³ temporary is made.
    Y /= lam[:, None, None] + (lam[:, None] + lam[None, :] + sigma)
    for axis in range(3):
        Y = mode_product(V, Y, axis)
    return Y


def relative_residual(K, M, sigma, X, B):
    return np.linalg.norm(B - apply_operator(K, M, sigma, X)) / np.linalg.norm(B)


def check_arguments(args):
    """Refuse what the matrices or the timing cannot take, before any output."""
    # The stiffness matrices hold the constants in their kernel (no boundary condition), so
    # λ = 0 is an eigenvalue and L is singular at σ = 0 (indefinite for σ < 0).
    if not args.sigma > 0:
        raise ValueError("--sigma must be > 0: the clamped stiffness matrices are singular, got %g" % args.sigma)
    if args.degree < 1:
        raise ValueError("--degree must be >= 1 (the stiffness of degree 0 is zero), got %d" % args.degree)
    if min(args.sizes) < args.degree + 1:
        raise ValueError("every n must be >= degree + 1 = %d, got --sizes %s"
                         % (args.degree + 1, ",".join(map(str, args.sizes))))
    if args.repeat < 1:
        raise ValueError("--repeat must be >= 1, got %d" % args.repeat)


def best_time(fn, repeat):
    """(best wall time over `repeat` calls, last result)."""
    best, result = math.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def run_fd(n, degree, sigma, repeat, rng):
    K, M = bspline_matrices(n, degree)
    B = rng.standard_normal((n, n, n))
    t_setup, (lam, V) = best_time(lambda: fd_setup(K, M), repeat)
    t_solve, X = best_time(lambda: fd_solve(lam, V, sigma, B), repeat)
    return dict(n=n, N=n ** 3, setup_s=t_setup, solve_s=t_solve, gdof_s=n ** 3 / t_solve / 1e9,
                residual=relative_residual(K, M, sigma, X, B))


def size_list(text):
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers such as 16,24,32, got %r" % text)


def common_arguments(description, default_sizes):
    """The options both baselines share."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", type=size_list, default=default_sizes,
                        help="comma-separated n (default %s)"
                             % (",".join(map(str, default_sizes)) if default_sizes else "16,24,32,40 up to --max-n"))
    parser.add_argument("--degree", type=int, default=3, help="B-spline degree p >= 1 (default 3; 1 = P1)")
    parser.add_argument("--sigma", type=float, default=1.0, help="the mass term's weight σ > 0 (default 1)")
    parser.add_argument("--repeat", type=int, default=5, help="timed solves per size, best kept (default 5)")
    parser.add_argument("--seed", type=int, default=20261201, help="right-hand side seed (default 20261201)")
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    return parser


def print_header(title, args, columns):
    threads = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS") or "unset"
    print("# %s: degree %d, sigma %g, best of %d, seed %d; numpy %s, scipy %s, OPENBLAS_NUM_THREADS=%s"
          % (title, args.degree, args.sigma, args.repeat, args.seed, np.__version__, scipy.__version__, threads))
    print(" ".join("%12s" % c for c in columns), flush=True)


def print_row(row, columns):
    print(" ".join("%12d" % row[c] if isinstance(row[c], int) else "%12.4g" % row[c] for c in columns), flush=True)


def write_csv(path, rows, columns):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows({c: repr(r[c]) if isinstance(r[c], float) else r[c] for c in columns} for r in rows)


def main():
    args = common_arguments("Fast diagonalisation of K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M (NumPy/SciPy baseline).",
                            [32, 48, 64, 96, 128, 192]).parse_args()
    check_arguments(args)
    rng = np.random.default_rng(args.seed)
    print_header("fast diagonalisation", args, COLUMNS)
    rows = []
    for n in args.sizes:
        rows.append(run_fd(n, args.degree, args.sigma, args.repeat, rng))
        print_row(rows[-1], COLUMNS)
    if args.csv:
        write_csv(args.csv, rows, COLUMNS)


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        sys.exit("fastdiag_numpy.py: error: %s" % e)
