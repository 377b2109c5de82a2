"""kronex: Kronecker-structured linear algebra, from NumPy, SciPy and GPU array code.

Solves (A1 ⊗ A2 ⊗ ... ⊗ Ad) x = b for a d-dimensional array b without forming the big matrix,
with kronex's C++ plans: banded LU, cache-blocked kernels and threads for NumPy arrays; one GEMM
per mode on the device, with no host<->device copy, for CuPy and PyTorch arrays on a GPU
(__cuda_array_interface__, DLPack). See docs/python.md.

    import numpy as np, kronex as kx
    M = kx.gallery.bspline_mass(64, 3)
    P = kx.gallery.bspline_mass(48, 3, periodic=True)
    K = kx.kron(M, P, M)
    x = K.solve(b)                     # b of shape (64, 48, 64)
    op = kx.compile(K.inverse(), b)    # factor once, then op(b, out=x) many times
    print(op)                          # the plan
"""
import collections as _collections
import numbers as _numbers

import numpy as _np

from . import _kronex
from ._kronex import (BackendUnavailableError, DeviceError, DimensionMismatchError, DTypeError, Error, Factor,
                      FileError, InvalidFactorError, InvalidOperatorError, LapackError, MPIError, NonFiniteValueError,
                      NotSeparableError, SingularFactorError, SizeLimitExceededError, TransferError)
from . import _device, gallery
from .krylov import KrylovResult, bicgstab, cg, gmres, minres

__all__ = ["Factor", "Operator", "CompiledOperator", "factor", "kron", "sparse_operator", "compile", "explain",
           "transfers", "Transfers", "gallery", "cg",
           "bicgstab", "gmres", "minres", "KrylovResult", "Error",
           "DTypeError", "DimensionMismatchError", "InvalidFactorError", "InvalidOperatorError", "FileError",
           "SizeLimitExceededError", "NonFiniteValueError", "SingularFactorError", "NotSeparableError", "LapackError",
           "BackendUnavailableError", "TransferError", "DeviceError", "MPIError"]

_VALUE_TYPES = tuple(_np.dtype(t) for t in (_np.float32, _np.float64, _np.complex64, _np.complex128))


def _value_type(dtype, what):
    """The kronex value type for NumPy dtype `dtype`: itself when it is one of the four, float64
    for integers and booleans; anything else is refused."""
    dt = _np.dtype(dtype)
    if dt in _VALUE_TYPES:
        return dt
    if dt.kind in "biu":
        return _np.dtype(_np.float64)
    raise DTypeError(f"kronex: {what} has dtype {dt}; kronex computes in float32, float64, complex64 or complex128")


def _promote(*dtypes):
    return _value_type(_np.result_type(*dtypes), "the result")


def _is_sparse(a):
    try:
        import scipy.sparse
    except ImportError:
        return False
    return scipy.sparse.issparse(a)


def _factor_type(source_dtype, dtype):
    """A factor's value type: `dtype` when given (refused when it cannot hold the values:
    complex values in a real type), else the source's."""
    src = _value_type(source_dtype, "the factor")
    if dtype is None:
        return src
    t = _value_type(dtype, "the requested dtype")
    if not _np.can_cast(src, t, "same_kind"):
        raise DTypeError(f"kronex: a {src} factor cannot be made {t} (its imaginary parts would be dropped)")
    return t


def factor(a, dtype=None):
    """A 1D factor: a kronex.Factor, a square NumPy array (dense storage) or any scipy.sparse
    matrix (stored as its sparsity allows: diagonal, banded, periodic banded with corners, or
    dense). The values are copied, rounded to the factor's dtype (the source's, or `dtype`):
    changing `a` later does not change the factor, and a float32 factor solved in float64 has
    its float32 values."""
    if isinstance(a, Factor):
        t = _factor_type(a.dtype, dtype)
        return a if t == a.dtype else _kronex._converted_factor(a, t.name)
    if _is_sparse(a):
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            raise InvalidFactorError(f"kronex: a factor must be a square matrix; got a sparse matrix of shape {a.shape}")
        t = _factor_type(a.dtype, dtype)
        coo = a.tocoo()
        return _kronex._entries_factor(a.shape[0], _np.ascontiguousarray(coo.row, dtype=_np.int64),
                                       _np.ascontiguousarray(coo.col, dtype=_np.int64),
                                       _np.ascontiguousarray(coo.data, dtype=_np.complex128), t.name)
    arr = _np.asarray(a)
    t = _factor_type(arr.dtype, dtype)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise InvalidFactorError(f"kronex: a factor must be a square matrix; got an array of shape {arr.shape}")
    return _kronex._dense_factor(_np.ascontiguousarray(arr, dtype=_np.complex128), t.name)


def _csr_arrays(a, what):
    """A SciPy sparse matrix as _kronex takes it: indptr, indices (int64), data (complex128) and
    its dtype's name."""
    t = _value_type(a.dtype, what)
    c = a.tocsr()
    return (_np.ascontiguousarray(c.indptr, dtype=_np.int64), _np.ascontiguousarray(c.indices, dtype=_np.int64),
            _np.ascontiguousarray(c.data, dtype=_np.complex128), t.name)


def sparse_operator(a, shape):
    """An assembled N x N sparse matrix (any scipy.sparse matrix) acting on arrays of `shape`
    (N = the product of shape, C order), as kronex::sparse_operator in C++: a lazy Operator that
    combines with Kronecker products (S + 0.25 * kron(M, M, M)) and is applied (a csr_spmv step
    of the plan), or solved by a Krylov solver, never by a direct solve (NotSeparableError)."""
    if not _is_sparse(a):
        raise InvalidOperatorError(f"kronex: sparse_operator needs a scipy.sparse matrix, not {type(a).__name__}")
    if not isinstance(shape, tuple):
        raise InvalidOperatorError(f"kronex: sparse_operator needs the shape it acts on as a tuple, not {shape!r}")
    n = int(_np.prod(shape))
    if a.ndim != 2 or tuple(a.shape) != (n, n):
        raise DimensionMismatchError(f"kronex: a sparse matrix of shape {tuple(a.shape)} cannot act on arrays of shape "
                                     f"{shape}: it must be {n} x {n}")
    return Operator(_kronex._sparse_operator(list(shape), *_csr_arrays(a, "the sparse matrix")))


Factor.dtype = property(lambda f: _np.dtype(f._dtype), doc="Its value type (a NumPy dtype).")


def kron(*factors, dtype=None):
    """The Kronecker product A1 ⊗ ... ⊗ Ad of 1 to 6 factors (anything kronex.factor takes), as a
    lazy Operator. Its dtype is the factors' widest, or `dtype` (which must hold every factor:
    complex factors make no real operator)."""
    fs = [factor(f) for f in factors]
    if dtype is not None:
        t = _value_type(dtype, "the requested dtype")
        for f in fs:
            _factor_type(f.dtype, t)
    else:
        t = _promote(*[f.dtype for f in fs]) if fs else _np.dtype(_np.float64)  # no factors: refused by kronex
    return Operator(_kronex._kron(fs, t.name))


def _operand(b, dtype, shape, what):
    """b as a C-contiguous array of `dtype`: b itself when it is one already, else converted once
    (a complex b for a real operator is refused, not truncated)."""
    if _device.is_device_array(b, what):
        raise InvalidOperatorError(f"kronex: the {what} ({type(b).__module__}.{type(b).__name__}) is a device array, "
                                   f"but this operator was compiled for NumPy arrays; compile it for device arrays "
                                   f"(kronex.compile(expr, b) with b on the device)")
    arr = _np.asarray(b)
    if arr.dtype == object or arr.dtype.kind not in "biufc":
        raise DTypeError(f"kronex: the {what} has dtype {arr.dtype}; kronex needs numbers")
    _kronex._check_shape(list(arr.shape), list(shape), what)
    if arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.aligned:
        return arr
    if not _np.can_cast(arr.dtype, dtype, "same_kind"):
        raise DTypeError(f"kronex: the {what} has dtype {arr.dtype}, which {dtype} cannot hold; "
                         f"compile for {_promote(arr.dtype, dtype)} instead")
    return _np.ascontiguousarray(arr, dtype=dtype)


class CompiledOperator:
    """An operator compiled for one shape and dtype (kronex.compile): factored once, then
    op(b, out=x) runs the plan with no allocation and no factoring. print(op) prints the plan.
    Compiled for NumPy arrays (a host plan) or for device arrays (a device plan: op.device)."""

    __slots__ = ("_c", "_dtype", "_shape", "_module")

    def __init__(self, compiled, module=None):
        self._c = compiled
        self._dtype = _np.dtype(compiled.dtype)
        self._shape = compiled.shape  # read once: a call checks against it
        self._module = module  # the device module of a device plan, None for a host plan

    @property
    def device(self):
        """The device system its plan runs on ("cuda", or "omp" for a CPU device), or None for a
        host plan (NumPy arrays)."""
        return None if self._module is None else self._module.system()

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    def __call__(self, b, out=None, *, check_finite=False):
        """x = op(b). `b` is used in place when it is a C-contiguous array of op.dtype (else
        converted once); `out` (op.dtype, C-contiguous, op.shape) is written in place and may be
        b itself. With check_finite, a NaN or infinity in b raises NonFiniteValueError. Calls
        from several threads take turns (the plan has one workspace): compile one operator per
        thread to solve in parallel.
        A device plan takes device arrays of op.dtype, C-contiguous, used in place (out: a new
        array from b's library when None); it converts nothing, and check_finite does not apply
        (it would read b on the host)."""
        if self._module is not None:
            return _device.run(self, self._module, b, out)
        arr = _operand(b, self._dtype, self._shape, "input")
        if out is None:
            out = _np.empty(self._shape, dtype=self._dtype)
        elif not isinstance(out, _np.ndarray):
            if _device.is_device_array(out, "output"):
                raise InvalidOperatorError("kronex: the output is a device array, but this operator was compiled "
                                           "for NumPy arrays")
            raise DTypeError(f"kronex: out must be a NumPy array, not {type(out).__name__}")
        elif not out.flags.aligned:
            raise InvalidOperatorError("kronex: the output is not aligned for its dtype")
        elif out is not arr and _np.may_share_memory(arr, out) and not (
                out.__array_interface__["data"][0] == arr.__array_interface__["data"][0] and out.strides == arr.strides):
            arr = arr.copy()  # out overlaps b without being b: read b from a copy
        self._c.run(arr, out, check_finite)
        return out

    def plan(self):
        """The compiled plan as a dict: what `kronex explain --json` gives as a stage's "plan"."""
        import json
        return json.loads(self._c.plan_json())

    def __str__(self):
        return self._c.plan_text().rstrip("\n")

    def __repr__(self):
        where = "" if self._module is None else f" device={self.device}"
        return f"<kronex.CompiledOperator shape={self._shape} dtype={self._dtype.name}{where}>"


def _options(threads, min_rcond):
    if threads is None:
        threads = 0
    elif not isinstance(threads, _numbers.Integral) or isinstance(threads, bool) or threads < 0:
        raise InvalidOperatorError(f"kronex: threads must be an integer >= 0 (0 or None: OMP_NUM_THREADS), "
                                   f"got {threads!r}")
    if min_rcond is None:
        min_rcond = -1.0
    elif not isinstance(min_rcond, _numbers.Real) or not min_rcond >= 0:
        raise InvalidOperatorError(f"kronex: min_rcond must be a number >= 0 (or None: n eps), got {min_rcond!r}")
    return int(threads), float(min_rcond)


def compile(expr, like, *, dtype=None, threads=None, min_rcond=None, check_finite=True, device=False):
    """Compiles `expr` (an Operator: K.inverse() to solve, K to apply) for operands like `like`:
    an array (its shape; the dtype is the operator's and the array's promoted) or a shape, as a
    tuple (the operator's dtype, or `dtype`). Factors are factored here, once, with the GIL released.
    A device array (CuPy, PyTorch on a GPU), or a shape with device=True, gives a device plan:
    each 1D inverse is computed and copied to the device here, once.
    threads: the host plan's thread count (default: OMP_NUM_THREADS). min_rcond: the
    reciprocal condition estimate below which a factor is refused as singular (default n eps).
    check_finite: refuse factors holding NaN or infinity (InvalidFactorError)."""
    if not isinstance(expr, Operator):
        raise InvalidOperatorError(f"kronex: compile needs an Operator (kron(...), sums, inverses), not {type(expr).__name__}")
    shape, t, module, _ = _target(expr, like, dtype, device)
    n_threads, rcond = _options(threads, min_rcond)
    return _compiled(expr, False, shape, t, module, n_threads, rcond, check_finite)


def _compiled(expr, solve, shape, t, module, n_threads, rcond, check_finite):
    backend = _kronex._compile if module is None else module.compile
    return CompiledOperator(backend(expr._e, solve, list(shape), t.name, n_threads, rcond, bool(check_finite)), module)


def _target(expr, like, dtype, device, exact=False):
    """What to compile for: the operands' shape, the value type, the device module (None: the
    host) and `like` read as a device array (None for a host array or a shape). exact: `like` is
    the operand itself, so a device array must already have the value type (kronex converts no
    device array), checked here, before anything is factored."""
    module, d = None, None
    if isinstance(like, tuple):  # a shape (a list is an operand, as np.asarray reads it)
        shape = tuple(int(n) for n in like)
        t = expr.dtype
        if device:
            module = _device.runtime("plan", None)
    else:
        d = _device.describe(like, "operand")
        if d is not None:
            shape, t = d.shape, _promote(expr.dtype, d.dtype)
            if exact and t != d.dtype:  # the shape is checked by the compile, before any factoring
                _device.check(d, t, d.shape, "input")
            module = _device.runtime("operand", like)
        else:
            if device:
                raise InvalidOperatorError("kronex: device=True goes with a shape; an array chooses by where it "
                                           "lives (a host array gives a host plan)")
            arr = _np.asarray(like)
            if arr.dtype == object or arr.dtype.kind not in "biufc":
                raise DTypeError(f"kronex: the operand has dtype {arr.dtype}; kronex needs numbers")
            shape, t = arr.shape, _promote(expr.dtype, arr.dtype)
    if dtype is not None:
        t = _value_type(dtype, "the requested dtype")
        if not _np.can_cast(expr.dtype, t, "same_kind"):
            raise DTypeError(f"kronex: a {expr.dtype} operator cannot be compiled for {t}")
    return shape, t, module, d


def explain(expr, like, *, dtype=None, threads=None, min_rcond=None, as_dict=False, device=False):
    """The plan kronex.compile(expr, like) would make, from its check and plan phases only
    (nothing is factored or allocated, so any size can be explained): the printed text, or with
    as_dict the same content as `kronex explain --json`. A device array as `like`, or device=True,
    explains the device plan."""
    if not isinstance(expr, Operator):
        raise InvalidOperatorError(f"kronex: explain needs an Operator, not {type(expr).__name__}")
    shape, t, module, _ = _target(expr, like, dtype, device)
    n_threads, rcond = _options(threads, min_rcond)
    backend = _kronex._explain if module is None else module.explain
    text, js = backend(expr._e, False, list(shape), t.name, n_threads, rcond)
    if as_dict:
        import json
        return json.loads(js)
    return text


class Transfers(_collections.namedtuple("Transfers", "uploads downloads upload_bytes download_bytes")):
    """kronex's host<->device copies: uploads (host to device), downloads, and their bytes."""

    __slots__ = ()

    @property
    def calls(self):
        return self.uploads + self.downloads

    @property
    def bytes(self):
        return self.upload_bytes + self.download_bytes

    def __sub__(self, other):
        return Transfers(*(a - b for a, b in zip(self, other)))


def transfers():
    """Every host<->device copy kronex has made in this process (cumulative: take differences
    around the code you measure). Compiling for device arrays uploads the factors' inverses once;
    a solve on device arrays makes none. All zero while no device plan has been compiled."""
    module = _device.loaded_runtime()
    return Transfers(0, 0, 0, 0) if module is None else Transfers(*module.transfers())


class Operator:
    """A lazy operator: a Kronecker product (kronex.kron), or sums, scalar multiples and
    compositions of them, maybe transposed, inverted or pseudo-inverted. Nothing is factored
    until it is solved, applied or compiled."""

    __slots__ = ("_e",)

    def __init__(self, expression):
        self._e = expression

    @property
    def shape(self):
        """The factors' sizes: the shape of the arrays it acts on."""
        return self._e.shape

    @property
    def dtype(self):
        return _np.dtype(self._e.dtype)

    @property
    def factors(self):
        """Its factors, each once."""
        return self._e.factors

    def astype(self, dtype):
        """The same operator computing in another dtype: a real operator as a complex one, or in
        another precision (a complex operator has no real dtype)."""
        t = _value_type(dtype, "the requested dtype")
        if t == self.dtype:
            return self
        if not _np.can_cast(self.dtype, t, "same_kind"):
            raise DTypeError(f"kronex: a {self.dtype} operator cannot compute in {t}")
        return Operator(_kronex._as_type(self._e, t.name))

    def transpose(self):
        return Operator(_kronex._method(self._e, "transpose", -1.0))

    def adjoint(self):
        return Operator(_kronex._method(self._e, "adjoint", -1.0))

    T = property(transpose, doc="The transpose.")
    H = property(adjoint, doc="The adjoint (conjugate transpose).")

    def inverse(self):
        return Operator(_kronex._method(self._e, "inverse", -1.0))

    def pseudo_inverse(self, rtol):
        """The pseudo-inverse of a sum of Kronecker products (fast diagonalisation), dropping
        eigenvalue sums below rtol times the largest."""
        return Operator(_kronex._method(self._e, "pseudo_inverse", float(rtol)))

    def solve(self, b, out=None, *, threads=None, min_rcond=None, check_finite=True):
        """x with K x = b: compiles K.inverse() for b and runs it once. out: as CompiledOperator.
        check_finite (default) refuses NaN and infinity in the factors and in b (in a NumPy b;
        a device array is not read on the host). A device array b solves on the device."""
        return self._run(True, b, out, threads, min_rcond, check_finite)

    def apply(self, x, out=None, *, threads=None, check_finite=False):
        """y = K x."""
        return self._run(False, x, out, threads, None, check_finite)

    def _run(self, solve, b, out, threads, min_rcond, check_finite):
        if not _device.is_device_array(b, "input"):
            if out is not None and _device.is_device_array(out, "output"):
                raise InvalidOperatorError("kronex: the output is a device array but the input is not; kronex "
                                           "copies nothing between host and device behind your back")
            b = _np.asarray(b)  # once (a list, or anything else NumPy reads)
        shape, t, module, d = _target(self, b, None, False, exact=True)
        n_threads, rcond = _options(threads, min_rcond)
        compiled = _compiled(self, solve, shape, t, module, n_threads, rcond, check_finite)
        if module is not None:
            return _device.run(compiled, module, b, out, d)  # b read once (a DLPack capsule is taken once)
        return compiled(b, out, check_finite=check_finite)

    def aslinearoperator(self, shape, dtype=None, *, threads=None):
        """This operator as a scipy.sparse.linalg.LinearOperator on flat vectors of arrays of
        `shape`: kronex inside SciPy's solvers (M=K.inverse().aslinearoperator(b.shape)). It is
        compiled once (its adjoint too, on the first rmatvec)."""
        from scipy.sparse.linalg import LinearOperator
        shape = tuple(int(n) for n in shape)
        t = self.dtype if dtype is None else _value_type(dtype, "the requested dtype")
        op = compile(self, shape, dtype=t, threads=threads)
        adjoint = []
        n = int(_np.prod(shape))

        def matvec(v):
            return op(_np.reshape(v, shape)).reshape(v.shape)

        def rmatvec(v):
            if not adjoint:
                adjoint.append(compile(self.H, shape, dtype=t, threads=threads))
            return adjoint[0](_np.reshape(v, shape)).reshape(v.shape)

        return LinearOperator((n, n), matvec=matvec, rmatvec=rmatvec, dtype=t)

    # Algebra, as in C++: A + B, A - B, -A, c * A, A * c, A / c, A @ B and A * B (compositions).
    def _other(self, other):
        if not isinstance(other, Operator):
            return None
        t = _promote(self.dtype, other.dtype)
        return self.astype(t), other.astype(t)

    def __add__(self, other):
        pair = self._other(other)
        if pair is None:
            return NotImplemented
        return Operator(_kronex._sum(pair[0]._e, pair[1]._e, 1.0))

    def __sub__(self, other):
        pair = self._other(other)
        if pair is None:
            return NotImplemented
        return Operator(_kronex._sum(pair[0]._e, pair[1]._e, -1.0))

    def __neg__(self):
        return self._scaled(-1.0)

    def __pos__(self):
        return self

    def _scaled(self, c):
        if not isinstance(c, _numbers.Number) or isinstance(c, bool):
            return NotImplemented
        t = _promote(self.dtype, _np.result_type(c))
        if t.kind != "c" and self.dtype.kind != "c":
            t = self.dtype  # a real scalar keeps a float32 operator float32
        return Operator(_kronex._scaled(self.astype(t)._e, complex(c)))

    def __mul__(self, other):
        if isinstance(other, Operator):
            return self @ other
        return self._scaled(other)

    def __rmul__(self, other):
        return self._scaled(other)

    def __truediv__(self, other):
        if not isinstance(other, _numbers.Number) or isinstance(other, bool):
            return NotImplemented
        return self._scaled(1 / other)

    def __matmul__(self, other):
        pair = self._other(other)
        if pair is None:
            return NotImplemented
        return Operator(_kronex._product(pair[0]._e, pair[1]._e))

    def __repr__(self):
        try:
            text = self._e.text()
        except Error as e:  # an expression that cannot be compiled (pseudo-inverse of an inverse)
            text = f"<invalid: {e}>"
        return f"kronex.Operator({text}, shape={self.shape}, dtype={self.dtype.name})"
