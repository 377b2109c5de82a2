"""Arrays that live on a device: CuPy and PyTorch arrays, and anything else with
__cuda_array_interface__ or DLPack on a CUDA device. kronex uses them in place through their raw
pointers, with its device backend (each 1D inverse on the device once, one GEMM per mode): a solve
makes no host<->device copy, and kronex.transfers() counts every copy kronex ever makes.

The device backend comes from a device module of the package: _kronex_cuda (the GPU, built when
the CUDA toolkit was found), or _kronex_omp, the CPU device of a build tree, on which host memory
stands in for device memory: use_runtime("omp") lets the tests run every device path without a
GPU. kronex never copies a device array to the host (or back) behind the user's back: what cannot
run on the device is refused with an error.
"""
import importlib
import importlib.util
import math
import sys

import numpy as _np

from . import _kronex
from ._kronex import BackendUnavailableError, DTypeError, InvalidOperatorError

# DLPack device types (dlpack.h): CUDA memory, CUDA managed memory, and host memory.
_DLPACK_CUDA = (2, 13)
_DLPACK_HOST = (1, 3, 11)  # kDLCPU, kDLCUDAHost, kDLROCMHost: memory NumPy can read

_runtime_name = "cuda"
_runtime = None


def use_runtime(name):
    """Selects the device runtime that device arrays run on: "cuda" (the default: the GPU) or
    "omp" (a build tree's CPU device: host memory stands in for device memory, for testing the
    device path without a GPU). Compiled operators keep the runtime they were compiled on."""
    global _runtime_name, _runtime
    if name not in ("cuda", "omp"):
        raise InvalidOperatorError(f"kronex: no device runtime {name!r} (cuda or omp)")
    if name != _runtime_name:
        _runtime_name, _runtime = name, None


def loaded_runtime():
    """The device module in use, or None when no device array has been solved yet."""
    return _runtime


def runtime(what, a):
    """The device module that runs on device array `a` (the `what`; None: a device plan asked for
    by shape), or BackendUnavailableError saying why there is none."""
    global _runtime
    if _runtime is not None:
        return _runtime
    if a is None:
        head = "kronex: a device plan was asked for, but "
    else:
        head = f"kronex: the {what} ({_type_name(a)}) is a device array, but "
    name = f"kronex._kronex_{_runtime_name}"
    try:
        module = importlib.import_module(name)
    except ImportError as e:
        if importlib.util.find_spec(name) is not None:  # there, but it does not load
            raise BackendUnavailableError(head + f"kronex's {_runtime_name} module does not load: {e}") from None
        if _runtime_name == "cuda":
            raise BackendUnavailableError(
                head + "this kronex package was built without a CUDA runtime (no CUDA toolkit was found when it "
                "was built), so it runs on host (NumPy) arrays only; kronex does not copy device arrays to the "
                "host behind your back (copy it explicitly, e.g. cupy.asnumpy, if a host solve is what you want)"
            ) from None
        raise BackendUnavailableError(head + f"this build has no {_runtime_name} device module "
                                      f"(_kronex_{_runtime_name})") from None
    if not module.available():
        raise BackendUnavailableError(head + f"no device is visible to kronex's {module.system()} runtime")
    _runtime = module
    return module


def _type_name(a):
    return f"{type(a).__module__}.{type(a).__name__}"


class DeviceArray:
    """A device array as kronex reads it: address, shape, dtype, whether it may be written, the
    stream its producer named (0: none), and what keeps the memory alive (a DLPack capsule)."""

    __slots__ = ("obj", "ptr", "shape", "dtype", "readonly", "stream", "owner", "dlpack_device")

    def __init__(self, obj, ptr, shape, dtype, readonly, stream, owner=None, dlpack_device=None):
        self.obj, self.ptr, self.shape, self.dtype = obj, ptr, shape, dtype
        self.readonly, self.stream, self.owner, self.dlpack_device = readonly, stream, owner, dlpack_device

    @property
    def nbytes(self):
        return math.prod(self.shape) * self.dtype.itemsize


_dtypes = {}  # typestr -> np.dtype: a call reads two arrays, and np.dtype(str) is not free


def _dtype(typestr, what, a):
    dt = _dtypes.get(typestr)
    if dt is None:
        try:
            dt = _dtypes.setdefault(typestr, _np.dtype(typestr))
        except TypeError:
            raise DTypeError(f"kronex: the {what} ({_type_name(a)}) has element type {typestr!r}, which kronex "
                             f"does not know") from None
    return dt


def _check_c_order(shape, strides, itemsize, what, a):
    """Device arrays must be C-contiguous (strides in bytes; None means C order): kronex does not
    make a contiguous copy on the device behind the user's back."""
    if strides is None:
        return
    expected, step = [], itemsize
    for n in reversed(shape):
        expected.append(step)
        step *= n
    expected.reverse()
    if any(n > 1 and s != e for n, s, e in zip(shape, strides, expected)):
        raise InvalidOperatorError(
            f"kronex: the {what} ({_type_name(a)}) is not C-contiguous: shape {tuple(shape)} has strides "
            f"{tuple(strides)} bytes, C order needs {tuple(expected)}; make it contiguous on the device "
            f"(e.g. cupy.ascontiguousarray, torch's .contiguous())")


def _from_cuda_array_interface(a, d, what):
    shape = tuple(map(int, d["shape"]))
    dt = _dtype(d["typestr"], what, a)
    if d.get("mask") is not None:
        raise InvalidOperatorError(f"kronex: the {what} ({_type_name(a)}) is a masked array; kronex needs all values")
    _check_c_order(shape, d.get("strides"), dt.itemsize, what, a)
    ptr, readonly = d["data"]
    stream = d.get("stream") if d.get("version", 0) >= 3 else None
    if stream == 0:
        raise InvalidOperatorError(f"kronex: the {what} ({_type_name(a)}) names stream 0, which "
                                   f"__cuda_array_interface__ does not allow (1 is the default stream)")
    return DeviceArray(a, int(ptr), shape, dt, bool(readonly), int(stream or 0))


def _from_dlpack(a, what):
    # kronex is the consumer: it asks the producer to order its work before the legacy default
    # stream (1), and waits for that stream before reading.
    capsule = a.__dlpack__(stream=1)
    owner, ptr, shape, strides, typestr, device_type = _kronex._dlpack_view(capsule, what)
    dt = _dtype(typestr, what, a)
    _check_c_order(shape, None if strides is None else [s * dt.itemsize for s in strides], dt.itemsize, what, a)
    return DeviceArray(a, ptr, tuple(shape), dt, False, 1, owner, device_type)


def _protocol(a, what):
    """How `a` reaches device memory: its __cuda_array_interface__ (a dict), "dlpack" (DLPack on a
    CUDA device), or None for host memory (NumPy, or anything np.asarray reads). The interface is
    read once: it is a property that builds a new dict each time."""
    if isinstance(a, _np.ndarray):
        return None
    cai = getattr(a, "__cuda_array_interface__", None)  # PyTorch raises AttributeError for a CPU tensor
    if cai is not None:
        return cai
    if hasattr(a, "__dlpack_device__") and hasattr(a, "__dlpack__"):
        try:
            kind = int(a.__dlpack_device__()[0])
        except Exception:  # not a DLPack producer after all
            return None
        if kind in _DLPACK_CUDA:
            return "dlpack"
        if kind not in _DLPACK_HOST:
            raise BackendUnavailableError(f"kronex: the {what} ({_type_name(a)}) lives on DLPack device type "
                                          f"{kind}, which kronex cannot run on (host memory or CUDA)")
    return None


def is_device_array(a, what="array"):
    """Whether `a` lives on a CUDA device (checked without taking it over)."""
    return _protocol(a, what) is not None


def describe(a, what):
    """`a` as a DeviceArray when it lives on a CUDA device (__cuda_array_interface__, or DLPack
    with a CUDA device type), else None (host memory, used as a NumPy array)."""
    kind = _protocol(a, what)
    if kind is None:
        return None
    if kind == "dlpack":
        return _from_dlpack(a, what)
    return _from_cuda_array_interface(a, kind, what)


def refuse(a, what, context):
    """Raises BackendUnavailableError when `a` is a device array: `context` runs on host arrays
    only, and kronex copies nothing between host and device behind the user's back."""
    if is_device_array(a, what):
        raise BackendUnavailableError(
            f"kronex: the {what} ({_type_name(a)}) is a device array, but {context} on host (NumPy) arrays only; "
            f"copy it to the host explicitly (e.g. cupy.asnumpy) if that is what you want")


def empty_like(a):
    """A new array like device array `a`, from its own library (cupy.empty_like,
    torch.empty_like)."""
    library = sys.modules.get(type(a).__module__.partition(".")[0])
    make = getattr(library, "empty_like", None)
    if make is None:
        raise InvalidOperatorError(f"kronex: kronex cannot allocate a result like {_type_name(a)}; pass out=")
    return make(a)


def check(d, dtype, shape, what, writable=False):
    """A device operand against what the operator was compiled for, before any work."""
    if d.dtype != dtype:
        raise DTypeError(f"kronex: the {what} has dtype {d.dtype} but the operator was compiled for {dtype}; kronex "
                         f"does not convert device arrays (convert it on the device, e.g. .astype)")
    if d.shape != tuple(shape):
        _kronex._check_shape(list(d.shape), list(shape), what)  # raises, naming both shapes
    if writable and d.readonly:
        raise InvalidOperatorError(f"kronex: the {what} ({_type_name(d.obj)}) is read-only")


def check_memory(d, module, what):
    """A DLPack tensor's memory must be the runtime's: CUDA memory for the CUDA runtime, host
    memory for the CPU device."""
    if d.dlpack_device is None:
        return
    wanted = _DLPACK_CUDA if module.system() == "cuda" else _DLPACK_HOST
    if d.dlpack_device not in wanted:
        raise InvalidOperatorError(f"kronex: the {what} ({_type_name(d.obj)}) gave a DLPack tensor on device type "
                                   f"{d.dlpack_device}, which kronex's {module.system()} runtime cannot read")


def run(op, module, b, out, d_in=None):
    """x = op(b) on device arrays; out (written in place, may be b) or a new array like b. d_in:
    b already described."""
    if d_in is None:
        d_in = describe(b, "input")
    if d_in is None:
        raise InvalidOperatorError(f"kronex: this operator was compiled for device arrays; the input "
                                   f"({_type_name(b)}) is in host memory")
    check(d_in, op.dtype, op.shape, "input")
    check_memory(d_in, module, "input")
    if out is None:
        out = empty_like(b)
    d_out = describe(out, "output")
    if d_out is None:
        raise InvalidOperatorError(f"kronex: this operator was compiled for device arrays; the output "
                                   f"({_type_name(out)}) is in host memory")
    check(d_out, op.dtype, op.shape, "output", writable=True)
    check_memory(d_out, module, "output")
    if d_out.ptr != d_in.ptr and d_out.ptr < d_in.ptr + d_in.nbytes and d_in.ptr < d_out.ptr + d_out.nbytes:
        raise InvalidOperatorError("kronex: the output overlaps the input without being it; pass out=b to solve "
                                   "in place, or a separate array")
    module.run(op._c, d_in.ptr, d_out.ptr, d_in.stream, d_out.stream)
    return out
