#!/usr/bin/env python3
"""SciPy baseline: the operator of fastdiag_numpy.py,

    L = K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M,

assembled as one sparse matrix (scipy.sparse.kron of the banded 1D matrices) and solved by a
sparse LU (scipy.sparse.linalg.splu, SuperLU): the set-up is the factorisation, the solve one
pair of triangular solves. The residual uses the assembled matrix; fd_diff is the relative
difference to fastdiag_numpy.fd_solve on the same right-hand side, a cross-check of both.
The LU of a 3D operator fills in quickly: at degree 3, n = 16 takes about 1.5 s, n = 24 about
30 s and 0.8 GB (43 M entries in the factors). So sizes above --max-n are refused: by default 40
for degree 1 (n = 40: 17 to 28 s, 1 GB), 24 above. See benchmarks/README.md.
"""
import os
import sys

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # fastdiag_numpy, wherever this runs from
from fastdiag_numpy import (bspline_matrices, best_time, common_arguments, check_arguments,  # noqa: E402
                            fd_setup, fd_solve, print_header, print_row, write_csv)

COLUMNS = ["n", "N", "setup_s", "solve_s", "gdof_s", "residual", "fd_diff"]


def assemble_operator(K, M, sigma):
    """L as one CSC matrix; row index i·n² + j·n + k matches a C-order n×n×n tensor."""
    kron3 = lambda A, B, C: scipy.sparse.kron(scipy.sparse.kron(A, B), C)
    return (kron3(K, M, M) + kron3(M, K, M) + kron3(M, M, K) + sigma * kron3(M, M, M)).tocsc()


def run_sparse(n, degree, sigma, repeat, rng):
    K, M = bspline_matrices(n, degree)
    L = assemble_operator(K, M, sigma)
    B = rng.standard_normal((n, n, n))
    # L is symmetric positive definite: minimum degree on the pattern of L + Lᵀ suits it better
    # than splu's default COLAMD, which orders for a general matrix (degree 3, n = 24: 43 M
    # entries in the factors instead of 54 M, 22 s instead of 36 s).
    t_setup, lu = best_time(lambda: scipy.sparse.linalg.splu(L, permc_spec="MMD_AT_PLUS_A"), 1)
    t_solve, x = best_time(lambda: lu.solve(B.ravel()), repeat)
    lam, V = fd_setup(K, M)
    x_fd = fd_solve(lam, V, sigma, B).ravel()
    return dict(n=n, N=n ** 3, setup_s=t_setup, solve_s=t_solve, gdof_s=n ** 3 / t_solve / 1e9,
                residual=np.linalg.norm(B.ravel() - L @ x) / np.linalg.norm(B),
                fd_diff=np.linalg.norm(x - x_fd) / np.linalg.norm(x_fd))


def main():
    parser = common_arguments("Sparse LU of K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M (SciPy baseline), checked "
                              "against fast diagonalisation.", None)
    parser.add_argument("--max-n", type=int,
                        help="refuse larger n: the LU's fill grows far faster than N (default 40 for "
                             "degree 1, 24 above)")
    args = parser.parse_args()
    if args.max_n is None:
        args.max_n = 40 if args.degree == 1 else 24
    if args.sizes is None:
        args.sizes = [n for n in (16, 24, 32, 40) if n <= args.max_n]
    check_arguments(args)
    too_big = [n for n in args.sizes if n > args.max_n]
    if too_big:
        raise ValueError("n=%s above --max-n=%d: the sparse LU of a 3D operator would take minutes and "
                         "gigabytes; raise --max-n to try anyway" % (",".join(map(str, too_big)), args.max_n))
    rng = np.random.default_rng(args.seed)
    print_header("sparse LU (splu)", args, COLUMNS)
    rows = []
    for n in args.sizes:
        rows.append(run_sparse(n, args.degree, args.sigma, args.repeat, rng))
        print_row(rows[-1], COLUMNS)
    if args.csv:
        write_csv(args.csv, rows, COLUMNS)


if __name__ == "__main__":
    try:
        main()
    except ValueError as e:
        sys.exit("sparse_direct_scipy.py: error: %s" % e)
