#!/usr/bin/env python3
"""The Python baselines in benchmarks/ (fastdiag_numpy.py, sparse_direct_scipy.py), at tiny sizes.

Their 1D matrices must be kronex's gallery matrices (checked against exact values), the fast
diagonalisation must solve L x = b (its residual), and it must agree with the sparse LU of L
assembled by scipy.sparse.kron (independent of the mode products). Runs under ctest (plain
python3, unittest) or pytest; the right-hand sides use the scripts' fixed default seed."""
import csv
import os
import subprocess
import sys
import tempfile
import unittest
from fractions import Fraction as F

import numpy as np

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")
sys.path.insert(0, BENCHMARKS)
from fastdiag_numpy import bspline_matrices  # noqa: E402


def run_script(name, *args):
    """Runs benchmarks/<name> with --csv; returns its rows as dicts of floats."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "table.csv")
        r = subprocess.run([sys.executable, os.path.join(BENCHMARKS, name), *args, "--repeat", "1", "--csv", out],
                           capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError("%s failed (%d):\n%s%s" % (name, r.returncode, r.stdout, r.stderr))
        with open(out) as f:
            return [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]


class Matrices(unittest.TestCase):
    def test_degree_1_is_p1(self):
        # P1 elements on n - 1 intervals, no boundary condition: M = h/6 [1 4 1] (h/3 at the
        # ends), K = 1/h [-1 2 -1] (1/h at the ends).
        n, h = 7, 1.0 / 6
        K, M = (A.toarray() for A in bspline_matrices(n, 1))
        off = np.eye(n, k=1) + np.eye(n, k=-1)
        ends = np.diag([1.0] + [2.0] * (n - 2) + [1.0])
        np.testing.assert_allclose(M, h / 6 * (2 * ends + off), rtol=1e-14, atol=1e-16)
        np.testing.assert_allclose(K, 1 / h * (ends - off), rtol=1e-14, atol=1e-13)

    def test_degree_2_matches_kronex_gallery(self):
        # kronex::gallery::bspline_mass<double>(6, 2) and bspline_stiffness<double>(6, 2), the
        # clamped boundary splines included (exact values; the matrices are persymmetric).
        half_mass = [[F(1, 20), F(7, 240), F(1, 240), 0, 0, 0],
                     [F(7, 240), F(1, 12), F(5, 96), F(1, 480), 0, 0],
                     [F(1, 240), F(5, 96), F(11, 80), F(13, 240), F(1, 480), 0]]
        half_stiffness = [[F(16, 3), -4, F(-4, 3), 0, 0, 0],
                          [-4, F(16, 3), F(-2, 3), F(-2, 3), 0, 0],
                          [F(-4, 3), F(-2, 3), 4, F(-4, 3), F(-2, 3), 0]]
        K, M = (A.toarray() for A in bspline_matrices(6, 2))
        for A, half in ((M, half_mass), (K, half_stiffness)):
            top = np.array(half, dtype=float)
            np.testing.assert_allclose(A, np.vstack([top, top[::-1, ::-1]]), rtol=1e-13, atol=1e-14)


class Scripts(unittest.TestCase):
    def test_fast_diagonalisation_solves(self):
        # A wrong transform (V for Vᵀ, a missed axis) or scaling (a wrong eigenvalue sum or σ)
        # leaves a residual of order 1.
        for degree, sigma in ((3, 1.0), (2, 0.25)):
            rows = run_script("fastdiag_numpy.py", "--sizes", "4,7,12", "--degree", str(degree),
                              "--sigma", str(sigma))
            self.assertEqual([(r["n"], r["N"]) for r in rows], [(4, 64), (7, 343), (12, 1728)])
            for r in rows:
                self.assertLess(r["residual"], 1e-12, r)
                self.assertGreater(r["gdof_s"], 0)

    def test_sparse_lu_agrees_with_fast_diagonalisation(self):
        # fd_diff compares with an operator assembled by scipy.sparse.kron: catches any
        # disagreement in kron order or tensor layout between the two baselines.
        for degree, sigma in ((3, 0.5), (1, 2.0)):
            rows = run_script("sparse_direct_scipy.py", "--sizes", "5,8", "--degree", str(degree),
                              "--sigma", str(sigma))
            self.assertEqual([r["n"] for r in rows], [5, 8])
            for r in rows:
                self.assertLess(r["residual"], 1e-12, r)
                self.assertLess(r["fd_diff"], 1e-10, r)

    def test_sparse_lu_refuses_large_sizes(self):
        r = subprocess.run([sys.executable, os.path.join(BENCHMARKS, "sparse_direct_scipy.py"), "--sizes", "8,48"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("n=48 above --max-n=24", r.stderr)
        self.assertEqual(r.stdout, "")  # refused before any work


if __name__ == "__main__":
    unittest.main(verbosity=2)
