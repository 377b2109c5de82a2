#!/usr/bin/python3
"""Writes the fixture files of tests/dsl (test_matrix_market, test_npy) into this directory.

Each Matrix Market file <name>.mtx is written by scipy.io.mmwrite, and the dense matrix it
represents by numpy.save as <name>_dense.npy, so the C++ tests compare the reader with an
independent truth. The script checks that scipy reads every .mtx back exactly (asking mmwrite for
17 significant digits; its default of 16 does not round-trip), so the C++ comparison is exact too.

Run: /usr/bin/python3 tests/dsl/data/make_fixtures.py   (deterministic: fixed seed)
"""
import os

import numpy as np
import scipy.io
import scipy.sparse

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261130)


def path(name):
    return os.path.join(HERE, name)


def values(shape, dtype=float):
    v = rng.uniform(-1, 1, shape)
    if dtype == complex:
        v = v + 1j * rng.uniform(-1, 1, shape)
    return v


def sparse_mask(shape, density):
    return rng.uniform(0, 1, shape) < density


def mtx(name, dense, field=None, symmetry="general", array=False, comment=""):
    """dense: the truth; written as coordinate (sparse) or array (dense) Matrix Market."""
    target = dense if array else scipy.sparse.coo_matrix(dense)
    # 17 significant digits ("%.16e") round-trip a double; scipy 1.10 prints precision+1 digits in
    # arrays but only `precision` in coordinate files, and its default (16) loses the last bit.
    precision = 16 if array else 17
    scipy.io.mmwrite(path(name + ".mtx"), target, comment=comment, field=field, precision=precision,
                     symmetry=symmetry)
    np.save(path(name + "_dense.npy"), dense)
    back = scipy.io.mmread(path(name + ".mtx"))
    back = back if isinstance(back, np.ndarray) else back.toarray()
    assert back.shape == dense.shape and np.array_equal(back, dense), name + ": mmread does not give the matrix back exactly"


def band(n, kl, ku, periodic, dtype=float):
    a = np.zeros((n, n), dtype=dtype)
    for i in range(n):
        for d in range(-kl, ku + 1):
            j = i + d
            if periodic:
                j %= n
            if 0 <= j < n:
                a[i, j] = values((), dtype) + (4 if d == 0 else 0)
    return a


# --- Matrix Market -------------------------------------------------------------------------------
g = values((4, 5)) * sparse_mask((4, 5), 0.6)
mtx("real_general", g, comment="a 4 x 5 real matrix")

s = values((5, 5)) * sparse_mask((5, 5), 0.5)
s = np.tril(s) + np.tril(s, -1).T
mtx("real_symmetric", s, symmetry="symmetric")

c = values((4, 4), complex) * sparse_mask((4, 4), 0.6)
mtx("complex_general", c)

h = values((5, 5), complex) * sparse_mask((5, 5), 0.5)
h = np.tril(h, -1) + np.tril(h, -1).conj().T + np.diag(values(5))
mtx("complex_hermitian", h, symmetry="hermitian")

k = values((5, 5)) * sparse_mask((5, 5), 0.6)
k = np.tril(k, -1) - np.tril(k, -1).T
mtx("skew_symmetric", k, symmetry="skew-symmetric")

ints = rng.integers(-9, 10, (4, 4)).astype(float)
mtx("integer", ints, field="integer")

p = sparse_mask((6, 6), 0.3).astype(float)
np.fill_diagonal(p, 1.0)
mtx("pattern", p, field="pattern")

mtx("array_general", values((3, 4)), array=True)
a = values((4, 4))
mtx("array_symmetric", np.tril(a) + np.tril(a, -1).T, symmetry="symmetric", array=True)
mtx("array_skew", np.tril(a, -1) - np.tril(a, -1).T, symmetry="skew-symmetric", array=True)

# Storage choices (tests/dsl/test_matrix_market.cpp asserts the kind and kl, ku of each).
mtx("periodic_tridiagonal", band(8, 1, 1, True))        # periodic kl=ku=1, 3 <= 8/2: banded
mtx("periodic_pentadiagonal", band(10, 2, 2, True), symmetry="general")  # periodic kl=ku=2, 5 <= 5
mtx("periodic_complex", band(9, 1, 2, True, complex))   # periodic kl=1, ku=2, 4 <= 4
mtx("clamped_band", band(9, 2, 1, False))               # clamped kl=2, ku=1, 4 <= 4: banded
mtx("wide_band", band(7, 1, 2, False))                  # clamped kl=1, ku=2, 4 > 3: dense
mtx("diagonal", np.diag(values(5)))
d = values((6, 6)) * sparse_mask((6, 6), 0.7) + 4 * np.eye(6)
mtx("dense", d)

# --- npy ---------------------------------------------------------------------------------------
base = values((3, 4))
np.save(path("f32_1d.npy"), values(5).astype(np.float32))
np.save(path("f64_2d.npy"), base)
np.save(path("f64_2d_fortran.npy"), np.asfortranarray(base))  # same values, Fortran order on disk
np.save(path("c64_3d.npy"), values((2, 3, 4), complex).astype(np.complex64))
np.save(path("c128_4d.npy"), values((2, 3, 2, 2), complex))
np.save(path("f64_0d.npy"), np.float64(0.1))
np.save(path("int64.npy"), np.arange(6, dtype=np.int64))
np.save(path("f64_big_endian.npy"), base.astype(">f8"))
assert np.load(path("f64_2d_fortran.npy")).flags.f_contiguous
