"""Bad input gets a kronex.Error subclass naming the problem, before any work."""
import numpy as np
import pytest
import scipy.sparse as sp

import kronex as kx


def test_error_hierarchy():
    assert issubclass(kx.Error, RuntimeError)
    for e in (kx.DimensionMismatchError, kx.InvalidFactorError, kx.InvalidOperatorError, kx.NonFiniteValueError):
        assert issubclass(e, kx.Error) and issubclass(e, ValueError)
    assert issubclass(kx.DTypeError, kx.Error) and issubclass(kx.DTypeError, TypeError)
    assert issubclass(kx.SingularFactorError, kx.Error)


def test_wrong_shapes_name_both():
    K = kx.kron(kx.gallery.bspline_mass(6, 2), kx.gallery.bspline_mass(5, 2))
    with pytest.raises(kx.DimensionMismatchError, match=r"\(6,4\).*\(6,5\)"):
        K.solve(np.ones((6, 4)))
    with pytest.raises(kx.DimensionMismatchError, match="rank"):
        K.solve(np.ones(30))
    op = kx.compile(K.inverse(), (6, 5))
    with pytest.raises(kx.DimensionMismatchError, match=r"\(5,6\).*\(6,5\)"):
        op(np.ones((5, 6)))
    with pytest.raises(kx.DimensionMismatchError, match="output"):
        op(np.ones((6, 5)), out=np.empty((6, 4)))
    with pytest.raises(kx.DimensionMismatchError, match=r"\(6,5\).*\(5,5\)"):
        K + kx.kron(kx.gallery.bspline_mass(5, 2), kx.gallery.bspline_mass(5, 2))


def test_wrong_dtypes():
    K = kx.kron(kx.gallery.bspline_mass(6, 2))
    op = kx.compile(K.inverse(), (6,))
    with pytest.raises(kx.DTypeError, match="complex128"):
        op(np.ones(6, dtype=np.complex128))  # would drop the imaginary part
    with pytest.raises(kx.DTypeError, match="float32.*float64"):
        op(np.ones(6), out=np.empty(6, dtype=np.float32))
    with pytest.raises(kx.DTypeError, match="object"):
        K.solve(np.array([1, "a", None, 2, 3, 4], dtype=object))
    with pytest.raises(kx.DTypeError, match="object"):
        kx.factor(np.array([[1, None], [None, 1]], dtype=object))
    with pytest.raises(kx.DTypeError):
        kx.gallery.bspline_mass(6, 2, dtype=np.float16)


def test_out_must_be_writable_and_contiguous():
    K = kx.kron(kx.gallery.bspline_mass(6, 2), kx.gallery.bspline_mass(4, 2))
    op = kx.compile(K.inverse(), (6, 4))
    frozen = np.empty((6, 4))
    frozen.flags.writeable = False
    with pytest.raises(kx.InvalidOperatorError, match="read-only"):
        op(np.ones((6, 4)), out=frozen)
    with pytest.raises(kx.InvalidOperatorError, match="C-contiguous"):
        op(np.ones((6, 4)), out=np.empty((4, 6)).T)


def test_bad_factors():
    with pytest.raises(kx.InvalidFactorError, match=r"square.*\(3, 4\)"):
        kx.kron(np.ones((3, 4)))
    with pytest.raises(kx.InvalidFactorError, match="square"):
        kx.factor(sp.eye(3, 4))
    with pytest.raises(kx.InvalidFactorError):
        kx.factor(np.ones(3))
    with pytest.raises(kx.InvalidOperatorError, match="1 to 6 factors"):
        kx.kron(*[np.eye(2)] * 7)
    with pytest.raises(kx.InvalidOperatorError, match="1 to 6"):
        kx.kron()


def test_non_finite_values():
    a = np.eye(4) * 3
    a[1, 2] = np.nan
    with pytest.raises(kx.InvalidFactorError, match=r"A\(1, 2\)"):
        kx.kron(a).solve(np.ones(4))
    K = kx.kron(kx.gallery.bspline_mass(4, 1), kx.gallery.bspline_mass(3, 1))
    b = np.ones((4, 3))
    b[2, 1] = np.inf
    with pytest.raises(kx.NonFiniteValueError, match=r"\(2, 1\)"):
        K.solve(b)
    op = kx.compile(K.inverse(), b)
    assert not np.isfinite(op(b)).all()  # compiled calls do not check unless asked
    with pytest.raises(kx.NonFiniteValueError):
        op(b, check_finite=True)


def test_singular_factor_names_mode_and_info():
    K = kx.kron(kx.gallery.bspline_mass(5, 2), np.zeros((3, 3)))
    with pytest.raises(kx.SingularFactorError, match="mode 1") as e:
        K.solve(np.ones((5, 3)))
    assert e.value.mode == 1 and e.value.info == 1


def test_sum_without_separable_structure_says_so():
    rng = np.random.default_rng(1)
    A = [rng.standard_normal((4, 4)) + 8 * np.eye(4) for _ in range(3)]
    L = kx.kron(A[0], A[1]) + kx.kron(A[1], A[2]) + kx.kron(A[2], A[0])
    L.apply(np.ones((4, 4)))  # applying is fine
    with pytest.raises(kx.NotSeparableError):
        L.solve(np.ones((4, 4)))


def test_unaligned_arrays_are_copied_or_refused():
    K = kx.kron(kx.gallery.bspline_mass(6, 2))
    op = kx.compile(K.inverse(), (6,))
    raw = np.zeros(6 * 8 + 1, dtype=np.uint8)
    unaligned = raw[1:].view(np.float64)  # C-contiguous float64, not 8-byte aligned
    assert not unaligned.flags.aligned
    unaligned[:] = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(op(unaligned), op(np.arange(1.0, 7.0)))  # read from an aligned copy
    with pytest.raises(kx.InvalidOperatorError, match="aligned"):
        op(np.ones(6), out=unaligned)
