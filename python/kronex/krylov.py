"""Krylov solvers (CG, BiCGSTAB, GMRES, MINRES): kronex's own, run in C++ with the GIL released,
for operators that are not Kronecker products, preconditioned by kronex operators.

    res = kx.cg(A, b, x0, M=K.inverse(), rtol=1e-10)

A and M may each be a kronex Operator (compiled once for b), a CompiledOperator, any
scipy.sparse matrix (multiplied in C++, no Python call per iteration), a dense N x N NumPy array,
a scipy LinearOperator (its matvec is called on flat vectors), or a function f(x) -> y called on
arrays shaped like b. The stopping test is SciPy's: ||b - A x|| <= max(rtol ||b||, atol).
"""
import numpy as _np

from . import _kronex

__all__ = ["KrylovResult", "cg", "bicgstab", "gmres", "minres"]


class KrylovResult:
    """What a Krylov solve returns: the solution x and how it got there."""

    __slots__ = ("x", "converged", "status", "iterations", "relative_residual", "history", "message")

    def __init__(self, x, d):
        self.x = x
        self.converged = d["converged"]
        self.status = d["status"]  # "converged", "max_iterations", "indefinite_operator", ...
        self.iterations = d["iterations"]
        self.relative_residual = d["relative_residual"]  # ||b - A x|| / ||b||, recomputed at exit
        self.history = d["history"]  # with history=True: the tested residual norm at every check
        self.message = d["message"]

    def __repr__(self):
        return f"<kronex.KrylovResult {self.message}>"


def _is_sparse(a):
    try:
        import scipy.sparse
    except ImportError:
        return False
    return scipy.sparse.issparse(a)


def _known_dtype(a):
    """The dtype an operand forces on the solve, or None for a function."""
    from . import CompiledOperator, Operator
    if isinstance(a, (Operator, CompiledOperator)) or _is_sparse(a) or isinstance(a, _np.ndarray):
        return a.dtype
    if hasattr(a, "matvec") and getattr(a, "dtype", None) is not None:
        return a.dtype
    return None


def _map(a, role, shape, dtype, threads):
    """What _kronex._krylov takes for A or M."""
    from . import CompiledOperator, InvalidOperatorError, Operator, compile
    n = int(_np.prod(shape))
    if a is None:
        return None
    if isinstance(a, Operator):
        return ("compiled", compile(a, shape, dtype=dtype, threads=threads)._c)
    if isinstance(a, CompiledOperator):
        return ("compiled", a._c)
    if _is_sparse(a) or isinstance(a, _np.ndarray) or hasattr(a, "matvec"):
        if a.ndim != 2 or tuple(a.shape) != (n, n):
            raise _kronex.DimensionMismatchError(
                f"kronex: the {role} has shape {tuple(a.shape)} but b has {n} values (shape {tuple(shape)}): "
                f"it must be {n} x {n}")
    if _is_sparse(a):
        from . import _csr_arrays
        return ("csr",) + _csr_arrays(a, role)
    if isinstance(a, _np.ndarray):
        dense = a
        return ("function", lambda v: dense @ v, True)
    if hasattr(a, "matvec"):
        return ("function", a.matvec, True)
    if callable(a):
        return ("function", a, False)
    raise InvalidOperatorError(f"kronex: the {role} must be a kronex Operator, a scipy.sparse matrix, a NumPy array, "
                               f"a LinearOperator or a function; got {type(a).__name__}")


def _solve(method, A, b, x0, M, rtol, atol, maxiter, restart, check_every, history, out, threads):
    from . import DTypeError, _device, _operand, _promote
    for a, what in ((b, "right-hand side"), (x0, "x0"), (out, "out")):
        if a is not None:
            _device.refuse(a, what, "kronex's Krylov solvers run")
    barr = _np.asarray(b)
    types = [barr.dtype] + [t for t in (_known_dtype(A), _known_dtype(M)) if t is not None]
    if x0 is not None:
        types.append(_np.asarray(x0).dtype)
    t = _promote(*types)
    b_in = _operand(barr, t, barr.shape, "right-hand side")
    if out is None:
        if x0 is None:
            x = _np.zeros(barr.shape, dtype=t)
        else:  # x0 is not modified: a copy, made once (by the conversion when there is one)
            x = _operand(x0, t, barr.shape, "x0")
            if _np.may_share_memory(x, x0):
                x = x.copy()
    else:
        if not isinstance(out, _np.ndarray) or out.dtype != t:
            raise DTypeError(f"kronex: out must be a NumPy array of dtype {t}")
        _kronex._check_shape(list(out.shape), list(barr.shape), "out")
        if x0 is None:
            out[...] = 0
        elif x0 is not out:
            out[...] = _operand(x0, t, barr.shape, "x0")
        x = out
    if _np.may_share_memory(b_in, x):
        b_in = b_in.copy()  # the solver reads b while it writes x
    d = _kronex._krylov(method, t.name, _map(A, "operator", barr.shape, t, threads),
                        _map(M, "preconditioner", barr.shape, t, threads), b_in, x, float(rtol), float(atol),
                        None if maxiter is None else int(maxiter), int(restart), int(check_every), bool(history))
    return KrylovResult(x, d)


def cg(A, b, x0=None, *, M=None, rtol=1e-5, atol=0.0, maxiter=None, check_every=1, history=False, out=None,
       threads=None):
    """Conjugate gradients for hermitian positive definite A (and M). x0: the initial guess
    (zeros by default; not modified). out: the array x is written to (x0 copied in first).
    maxiter: default 10 N. check_every: iterations between convergence tests. threads: for
    kronex operators compiled here. Returns a KrylovResult."""
    return _solve("cg", A, b, x0, M, rtol, atol, maxiter, 20, check_every, history, out, threads)


def bicgstab(A, b, x0=None, *, M=None, rtol=1e-5, atol=0.0, maxiter=None, check_every=1, history=False, out=None,
             threads=None):
    """BiCGSTAB for general A; as cg otherwise."""
    return _solve("bicgstab", A, b, x0, M, rtol, atol, maxiter, 20, check_every, history, out, threads)


def gmres(A, b, x0=None, *, M=None, rtol=1e-5, atol=0.0, maxiter=None, restart=20, check_every=1, history=False,
          out=None, threads=None):
    """Restarted GMRES (right preconditioned) for general A: restart is the subspace dimension
    between restarts, maxiter counts inner iterations; as cg otherwise."""
    return _solve("gmres", A, b, x0, M, rtol, atol, maxiter, restart, check_every, history, out, threads)


def minres(A, b, x0=None, *, M=None, rtol=1e-5, atol=0.0, maxiter=None, check_every=1, history=False, out=None,
           threads=None):
    """MINRES for hermitian (maybe indefinite) A, with a hermitian positive definite M; maxiter
    default 5 N; as cg otherwise."""
    return _solve("minres", A, b, x0, M, rtol, atol, maxiter, 20, check_every, history, out, threads)
