"""Realistic 1D factors for tests, examples and benchmarks (kronex::gallery in C++).

bspline_mass(n, p):      M_ij = ∫ N_i N_j over [0, 1], n B-splines of degree p (banded; with
                         periodic=True the splines wrap around: banded with corners)
bspline_stiffness(n, p): K_ij = ∫ N_i' N_j' (singular: constants are in its kernel)
laplacian(n):            the finite-difference -d²/dx² (clamped: Dirichlet; periodic: singular)
identity(n)
"""
import numpy as _np

from . import _kronex

__all__ = ["bspline_mass", "bspline_stiffness", "laplacian", "identity"]


def _type(dtype):
    from . import _value_type
    return _value_type(dtype, "the requested dtype").name


def bspline_mass(n, degree, periodic=False, dtype=_np.float64):
    return _kronex._gallery_factor("bspline_mass", int(n), int(degree), bool(periodic), _type(dtype))


def bspline_stiffness(n, degree, periodic=False, dtype=_np.float64):
    return _kronex._gallery_factor("bspline_stiffness", int(n), int(degree), bool(periodic), _type(dtype))


def laplacian(n, periodic=False, dtype=_np.float64):
    return _kronex._gallery_factor("laplacian", int(n), 0, bool(periodic), _type(dtype))


def identity(n, dtype=_np.float64):
    return _kronex._identity_factor(int(n), _type(dtype))
