"""Krylov solves from Python against scipy.sparse.linalg and dense solves, with every kind of
operator and preconditioner the package takes."""
import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import kronex as kx


def problem(rng, n=(9, 8, 7)):
    """A variable-coefficient mass-like matrix A = D^1/2 (M1 ⊗ M2 ⊗ M3) D^1/2 (hermitian positive
    definite, no Kronecker structure) and its Kronecker preconditioner."""
    M = [kx.gallery.bspline_mass(k, 3) for k in n]
    Kd = sp.csr_matrix(np.kron(np.kron(M[0].toarray(), M[1].toarray()), M[2].toarray()))
    d = sp.diags(np.sqrt(1 + 0.3 * rng.uniform(size=Kd.shape[0])))
    return (d @ Kd @ d).tocsr(), kx.kron(*M), n


def relres(A, x, b):
    return np.linalg.norm(A @ x.ravel() - b.ravel()) / np.linalg.norm(b)


@pytest.mark.parametrize("method", ["cg", "bicgstab", "gmres", "minres"])
def test_methods_converge_and_agree_with_a_direct_solve(rng, method):
    A, K, n = problem(rng)
    b = rng.standard_normal(n)
    res = getattr(kx, method)(A, b, M=K.inverse(), rtol=1e-11)
    assert res.converged and res.status == "converged", res.message
    assert res.x.shape == n and res.x.dtype == np.float64
    assert relres(A, res.x, b) < 1e-10 and abs(res.relative_residual - relres(A, res.x, b)) < 1e-12
    ref = spla.spsolve(A.tocsc(), b.ravel()).reshape(n)
    assert np.linalg.norm(res.x - ref) / np.linalg.norm(ref) < 1e-8
    # The Kronecker preconditioner pays: far fewer iterations than without.
    plain = getattr(kx, method)(A, b, rtol=1e-11)
    assert res.iterations * 3 < plain.iterations, (res.iterations, plain.iterations)


def test_operator_kinds_give_the_same_solution(rng):
    A, K, n = problem(rng)
    b = rng.standard_normal(n)
    base = kx.cg(A, b, M=K.inverse(), rtol=1e-12).x
    Ad = A.toarray()
    kinds = {
        "LinearOperator": (spla.aslinearoperator(A), K.inverse()),
        "dense array": (Ad, K.inverse()),
        "function": (lambda x: (A @ x.ravel()).reshape(x.shape), K.inverse()),
        "compiled M": (A, kx.compile(K.inverse(), n)),
        "function M": (A, lambda r: K.solve(r)),
        "LinearOperator M": (A, K.inverse().aslinearoperator(n)),
    }
    for name, (op, M) in kinds.items():
        x = kx.cg(op, b, M=M, rtol=1e-12).x
        assert np.linalg.norm(x - base) / np.linalg.norm(base) < 1e-9, name
    # A kronex operator as A: a Kronecker product solved by CG gives its direct solve.
    x = kx.cg(K, b, rtol=1e-13).x
    np.testing.assert_allclose(x, K.solve(b), rtol=1e-8)


def test_initial_guess_out_and_history(rng):
    A, K, n = problem(rng)
    b = rng.standard_normal(n)
    exact = spla.spsolve(A.tocsc(), b.ravel()).reshape(n)
    x0 = exact + 1e-9 * rng.standard_normal(n)
    x0_copy = x0.copy()
    res = kx.cg(A, b, x0, M=K.inverse(), rtol=1e-6, history=True)
    np.testing.assert_array_equal(x0, x0_copy)  # x0 is not modified
    assert res.iterations == 0 and res.converged  # x0 already meets the tolerance
    assert len(res.history) == 1
    out = np.zeros(n)
    r2 = kx.cg(A, b, M=K.inverse(), rtol=1e-10, out=out, history=True)
    assert r2.x is out and len(r2.history) == r2.iterations + 1
    assert r2.history[-1] <= 1e-10 * np.linalg.norm(b)
    r3 = kx.cg(A, b, M=K.inverse(), rtol=1e-14, maxiter=3)
    assert not r3.converged and r3.status == "max_iterations" and r3.iterations == 3


def test_complex_solves_and_promotion(rng):
    A, K, n = problem(rng)
    Az = (A * (1 + 0.5j)).tocsr()
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    res = kx.gmres(Az, b, M=K.inverse(), rtol=1e-11)  # a real preconditioner in a complex solve
    assert res.x.dtype == np.complex128 and res.converged
    assert relres(Az, res.x, b) < 1e-10
    res32 = kx.cg(A.astype(np.float32), b.real.astype(np.float32), M=K.inverse().astype(np.float32), rtol=1e-5)
    assert res32.x.dtype == np.float32 and res32.converged


def test_krylov_errors(rng):
    A, K, n = problem(rng)
    b = rng.standard_normal(n)
    with pytest.raises(kx.DimensionMismatchError, match="504"):
        kx.cg(A[:10, :10], b)
    with pytest.raises(kx.DimensionMismatchError):
        kx.cg(A, b, M=kx.kron(*[kx.gallery.bspline_mass(k, 3) for k in (9, 8, 6)]).inverse())
    with pytest.raises(kx.DTypeError, match="complex"):
        kx.cg(A, b, M=lambda r: r * 1j)  # complex values in a real solve
    with pytest.raises(kx.DimensionMismatchError, match="returned 3 values"):
        kx.cg(A, b, M=lambda r: np.ones(3))

    class Boom(Exception):
        pass

    def fails(r):
        raise Boom("from the preconditioner")

    with pytest.raises(Boom):  # the function's own exception comes back
        kx.cg(A, b, M=fails)
    with pytest.raises(kx.InvalidOperatorError, match="operator"):
        kx.cg("A", b)
    res = kx.cg(-A, b)  # not positive definite: CG says so
    assert not res.converged and res.status == "indefinite_operator"


def test_sparse_operators_combine_with_kronecker_products(rng):
    A, K, n = problem(rng)
    N = A.shape[0]
    Kd = np.kron(np.kron(*[f.toarray() for f in K.factors[:2]]), K.factors[2].toarray())
    S = kx.sparse_operator(A, n)
    L = S + 0.25 * K - kx.sparse_operator(sp.eye(N) * 1e-9, n)
    Ld = A.toarray() + 0.25 * Kd - 1e-9 * np.eye(N)
    x = rng.standard_normal(n)
    assert np.linalg.norm(L.apply(x).ravel() - Ld @ x.ravel()) < 1e-12 * np.linalg.norm(Ld @ x.ravel())
    assert "csr_spmv" in str(kx.compile(L, n))
    # A complex sparse matrix: transposes and adjoints use its entries, and the sum turns complex.
    Z = sp.random(N, N, density=0.02, random_state=3) * (1 + 2j) + sp.eye(N)
    Lz = kx.sparse_operator(Z, n) + K
    Lzd = Z.toarray() + Kd
    assert Lz.dtype == np.complex128
    for got, ref in ((Lz.apply(x), Lzd @ x.ravel()), (Lz.T.apply(x), Lzd.T @ x.ravel()),
                     (Lz.H.apply(x), Lzd.conj().T @ x.ravel())):
        assert np.linalg.norm(got.ravel() - ref) < 1e-12 * np.linalg.norm(ref)
    # No direct solve; a Krylov solve of the sum, preconditioned by its Kronecker part.
    with pytest.raises(kx.NotSeparableError, match="Krylov"):
        L.solve(x)
    res = kx.cg(L, x, M=K.inverse(), rtol=1e-11)
    assert res.converged
    np.testing.assert_allclose(res.x.ravel(), np.linalg.solve(Ld, x.ravel()), rtol=1e-8, atol=1e-8 * np.abs(res.x).max())
    with pytest.raises(kx.DimensionMismatchError, match="504 x 504"):
        kx.sparse_operator(A[:10, :10], n)
    with pytest.raises(kx.InvalidOperatorError, match="scipy.sparse"):
        kx.sparse_operator(A.toarray(), n)
