"""kronex from Python against NumPy's dense reference: np.kron of the factors' matrices and
np.linalg.solve, at 1e-12 relative for double (float32: 1e-4)."""
import numpy as np
import pytest
import scipy.sparse as sp

import kronex as kx

from reference import DTYPES, dense, random_array, relerr, tol, well_conditioned


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", [(7,), (5, 6), (4, 3, 5), (3, 4, 2, 3)])
def test_solve_matches_dense_reference(rng, dtype, sizes):
    mats = [well_conditioned(rng, n, dtype) for n in sizes]
    b = random_array(rng, sizes, dtype)
    x = kx.kron(*mats).solve(b)
    ref = np.linalg.solve(dense(mats), b.ravel().astype(np.complex128)).reshape(sizes)
    assert x.dtype == np.dtype(dtype) and x.shape == sizes
    assert relerr(x, ref) < tol(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_apply_transpose_adjoint_inverse(rng, dtype):
    sizes = (4, 5, 3)
    mats = [well_conditioned(rng, n, dtype) for n in sizes]
    K = kx.kron(*mats)
    A = dense(mats)
    x = random_array(rng, sizes, dtype)
    v = x.ravel().astype(np.complex128)
    cases = {
        "apply": (K.apply(x), A @ v),
        "T.apply": (K.T.apply(x), A.T @ v),
        "H.apply": (K.H.apply(x), A.conj().T @ v),
        "T.solve": (K.T.solve(x), np.linalg.solve(A.T, v)),
        "H.solve": (K.adjoint().solve(x), np.linalg.solve(A.conj().T, v)),
        "inverse.apply": (K.inverse().apply(x), np.linalg.solve(A, v)),
        "inverse.T.apply": (K.inverse().transpose().apply(x), np.linalg.solve(A.T, v)),
        "inverse.solve": (K.inverse().solve(x), A @ v),
    }
    for name, (got, ref) in cases.items():
        assert relerr(got, ref.reshape(sizes)) < tol(dtype), name


def test_factor_sources_and_their_storage(rng):
    n = 9
    band = sp.diags([-1.0, 4.0, -1.5], [-1, 0, 1], shape=(n, n))
    periodic = band.tolil()
    periodic[0, n - 1] = -1.0
    periodic[n - 1, 0] = -1.5
    sources = {
        "dense": (rng.standard_normal((n, n)) + 2 * n * np.eye(n), "dense"),
        "dia": (band.todia(), "banded (kl=1, ku=1)"),
        "csr": (band.tocsr(), "banded (kl=1, ku=1)"),
        "periodic": (periodic.tocsr(), "periodic banded (kl=1, ku=1)"),
        "diagonal": (sp.diags([np.arange(1.0, n + 1)], [0]), "diagonal"),
        "gallery": (kx.gallery.bspline_mass(n, 3), "banded (kl=3, ku=3)"),
        "gallery periodic": (kx.gallery.bspline_mass(n, 2, periodic=True), "periodic banded (kl=2, ku=2)"),
        "identity": (kx.gallery.identity(n), "identity"),
    }
    other = rng.standard_normal((4, 4)) + 8 * np.eye(4)
    for name, (source, storage) in sources.items():
        f = kx.factor(source)
        assert f.n == n and f.storage == storage, name
        matrix = source.toarray() if hasattr(source, "toarray") else np.asarray(source)
        np.testing.assert_array_equal(f.toarray(), matrix, err_msg=name)
        b = rng.standard_normal((4, n))
        x = kx.kron(other, f).solve(b)
        ref = np.linalg.solve(np.kron(other, matrix), b.ravel()).reshape(b.shape)
        assert relerr(x, ref) < 1e-12, name


def test_gallery_matches_the_assembled_matrices():
    # The mass matrix of linear B-splines on 2 clamped elements: h/6 [[2,1],[1,4,1],[1,2]], h = 1/2.
    M = kx.gallery.bspline_mass(3, 1).toarray()
    np.testing.assert_allclose(M, np.array([[2, 1, 0], [1, 4, 1], [0, 1, 2]]) / 12, rtol=1e-14)
    L = kx.gallery.laplacian(3).toarray()
    np.testing.assert_allclose(L, 16 * np.array([[2, -1, 0], [-1, 2, -1], [0, -1, 2]]), rtol=1e-14)
    assert kx.gallery.laplacian(4, periodic=True).toarray()[0, 3] == -16


def test_real_operator_on_complex_and_integer_operands(rng):
    mats = [well_conditioned(rng, n, np.float64) for n in (4, 5)]
    K = kx.kron(*mats)
    b = random_array(rng, (4, 5), np.complex128)
    x = K.solve(b)
    assert x.dtype == np.complex128
    ref = np.linalg.solve(dense(mats), b.ravel()).reshape(b.shape)
    assert relerr(x, ref) < 1e-12
    bi = np.arange(20).reshape(4, 5)
    xi = K.solve(bi)
    assert xi.dtype == np.float64
    assert relerr(xi, np.linalg.solve(dense(mats), bi.ravel()).reshape(4, 5)) < 1e-12
    # float32 factors with a float64 operand: NumPy's promotion, computed in float64.
    K32 = kx.kron(*[m.astype(np.float32) for m in mats])
    assert K32.dtype == np.float32 and K32.solve(bi.astype(np.float64)).dtype == np.float64


def test_mixed_factor_dtypes_promote(rng):
    a = well_conditioned(rng, 3, np.float32)
    c = well_conditioned(rng, 4, np.complex128)
    K = kx.kron(a, c)
    assert K.dtype == np.complex128
    b = random_array(rng, (3, 4), np.complex128)
    ref = np.linalg.solve(np.kron(a.astype(np.complex128), c), b.ravel()).reshape(b.shape)
    assert relerr(K.solve(b), ref) < 1e-6  # a's values are float32's


def test_sums_scaled_and_compositions(rng):
    n = (5, 4, 6)
    M = [kx.gallery.bspline_mass(k, 3) for k in n]
    S = [kx.gallery.bspline_stiffness(k, 3) for k in n]
    Md = [f.toarray() for f in M]
    Sd = [f.toarray() for f in S]
    L = kx.kron(S[0], M[1], M[2]) + kx.kron(M[0], S[1], M[2]) + kx.kron(M[0], M[1], S[2]) + 0.5 * kx.kron(*M)
    Ld = dense([Sd[0], Md[1], Md[2]]) + dense([Md[0], Sd[1], Md[2]]) + dense([Md[0], Md[1], Sd[2]]) + 0.5 * dense(Md)
    b = rng.standard_normal(n)
    assert relerr(L.apply(b), (Ld @ b.ravel()).reshape(n)) < 1e-12
    assert relerr(L.solve(b), np.linalg.solve(Ld, b.ravel()).reshape(n)) < 1e-10
    # Differences, negation, division, and A @ B == A * B (composition: B first).
    K = kx.kron(*M)
    D = (L - K / 2 - (-K)) @ K
    Dd = (Ld - 0.5 * dense(Md) + dense(Md)) @ dense(Md)
    assert relerr(D.apply(b), (Dd @ b.ravel()).reshape(n)) < 1e-12
    assert relerr((L * K).apply(b), (Ld @ dense(Md) @ b.ravel()).reshape(n)) < 1e-12
    # A complex scalar makes a real operator complex.
    Z = (1 + 2j) * K
    assert Z.dtype == np.complex128
    assert relerr(Z.apply(b), ((1 + 2j) * dense(Md) @ b.ravel()).reshape(n)) < 1e-12


def test_loop_built_sum_stays_flat_and_correct(rng):
    n = (3, 4)
    K = kx.kron(kx.gallery.bspline_mass(3, 1), kx.gallery.bspline_mass(4, 1))
    L = K
    for _ in range(2000):  # would nest 2000 levels deep without flattening
        L = L + K
    b = rng.standard_normal(n)
    assert relerr(L.apply(b), 2001 * K.apply(b)) < 1e-12


def test_pseudo_inverse_of_a_singular_sum(rng):
    n = (6, 5)
    S = [kx.gallery.laplacian(k, periodic=True) for k in n]
    I = [kx.gallery.identity(k) for k in n]
    L = kx.kron(S[0], I[1]) + kx.kron(I[0], S[1])  # singular: constants are in its kernel
    Ld = dense([S[0].toarray(), np.eye(n[1])]) + dense([np.eye(n[0]), S[1].toarray()])
    b = rng.standard_normal(n)
    b -= b.mean()
    x = L.pseudo_inverse(1e-10).apply(b)
    ref = (np.linalg.pinv(Ld) @ b.ravel()).reshape(n)
    assert relerr(x, ref) < 1e-10
    with pytest.raises(kx.Error, match="pseudo-inverse"):
        L.pseudo_inverse(1e-10).solve(b)


def test_a_factors_dtype_fixes_its_values(rng):
    a = rng.standard_normal((5, 5)) + 10 * np.eye(5)
    f = kx.factor(a, dtype=np.float32)
    assert f.dtype == np.float32 and f.toarray().dtype == np.float32
    b = rng.standard_normal(5)
    # Solved in float64 (the operand's), with the float32 values, not a's.
    x = kx.kron(f).solve(b)
    assert x.dtype == np.float64
    ref = np.linalg.solve(a.astype(np.float32).astype(np.float64), b)
    assert relerr(x, ref) < 1e-13
    assert relerr(kx.kron(a).solve(b), ref) > 1e-10  # the test tells the two apart
    # A Factor converted to another dtype, and a gallery factor, the same way.
    g = kx.factor(kx.factor(a), dtype=np.float32)
    np.testing.assert_array_equal(kx.kron(g).solve(b), x)
    m32 = kx.gallery.bspline_mass(7, 3, dtype=np.float32)
    m64 = kx.gallery.bspline_mass(7, 3)
    np.testing.assert_array_equal(kx.factor(m64, dtype=np.float32).toarray(), m64.toarray().astype(np.float32))
    c = rng.standard_normal(7)
    assert relerr(kx.kron(m32).solve(c), np.linalg.solve(m32.toarray().astype(np.float64), c)) < 1e-13


def test_dtype_requests_that_would_drop_imaginary_parts_are_refused(rng):
    z = (rng.standard_normal((4, 4)) + 8 * np.eye(4)) * (1 + 1j)
    with pytest.raises(kx.DTypeError, match="imaginary"):
        kx.factor(z, dtype=np.float64)
    with pytest.raises(kx.DTypeError, match="imaginary"):
        kx.factor(sp.csr_matrix(z), dtype=np.float64)
    with pytest.raises(kx.DTypeError):
        kx.kron(z, dtype=np.float64)
    with pytest.raises(kx.DTypeError):
        kx.kron(z).astype(np.float64)
    # dtype= on kron is the operator's dtype, narrower than the factors' included.
    K = kx.kron(np.eye(3) * 3.0, dtype=np.float32)
    assert K.dtype == np.float32 and K.solve(np.ones(3, dtype=np.float32)).dtype == np.float32


def test_option_values_are_checked():
    K = kx.kron(kx.gallery.bspline_mass(6, 2))
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(kx.InvalidOperatorError, match="threads"):
            K.solve(np.ones(6), threads=bad)
    with pytest.raises(kx.InvalidOperatorError, match="min_rcond"):
        kx.compile(K.inverse(), (6,), min_rcond=-0.5)
    with pytest.raises(kx.InvalidOperatorError, match="pseudo_inverse"):
        K.pseudo_inverse(-1)
    # A higher min_rcond than the factor's condition estimate refuses it as singular.
    with pytest.raises(kx.SingularFactorError, match="mode 0"):
        kx.compile(K.inverse(), (6,), min_rcond=0.9)
