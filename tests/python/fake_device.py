"""Host memory presented as device memory, for the tests of kronex's device path on the CPU-device
module (kronex._kronex_omp), on which host memory stands in for device memory. Any copy to the host
would go through __array__, which fails the test; empty_like is what kronex finds as this
"library's" allocator, as it finds cupy.empty_like."""
import numpy as np


class FakeCudaArray:
    """__cuda_array_interface__ (version 3) over a NumPy array."""

    def __init__(self, host, *, stream=None, readonly=False, strides=None, mask=None, version=3):
        self.host = host
        self.stream, self.readonly, self.strides, self.mask, self.version = stream, readonly, strides, mask, version

    @property
    def shape(self):
        return self.host.shape

    @property
    def dtype(self):
        return self.host.dtype

    @property
    def __cuda_array_interface__(self):
        d = {"shape": self.host.shape, "typestr": self.host.dtype.str, "data": (self.host.ctypes.data, self.readonly),
             "version": self.version, "strides": self.strides}
        if self.version >= 3:
            d["stream"] = self.stream
        if self.mask is not None:
            d["mask"] = self.mask
        return d

    def __array__(self, dtype=None):
        raise AssertionError("kronex copied a device array to the host")


class FakeDLPackArray:
    """DLPack on "CUDA" (device type 2) whose capsule holds a NumPy array: host memory, as the CPU
    device reads it. Records the streams kronex asks the producer to order its work before."""

    def __init__(self, host, device_type=2):
        self.host = host
        self.device_type = device_type
        self.streams = []

    @property
    def shape(self):
        return self.host.shape

    def __dlpack_device__(self):
        return (self.device_type, 0)

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.host.__dlpack__()

    def __array__(self, dtype=None):
        raise AssertionError("kronex copied a device array to the host")


def empty_like(a):
    if isinstance(a, FakeDLPackArray):
        return FakeDLPackArray(np.empty_like(a.host), a.device_type)
    return FakeCudaArray(np.empty_like(a.host))
