"""CuPy (and PyTorch, where installed) arrays on a real GPU, through the package's CUDA module:
results against NumPy's dense reference, zero host<->device transfers per solve, in-place use,
and arrays produced on a non-default stream. Run by scripts/gpu-check.sh on a GPU machine with
CuPy (KRONEX_TEST_CUPY=1 there: a missing CuPy or GPU fails instead of skipping); skipped
elsewhere. test_device_arrays.py checks the same paths on the CPU device everywhere."""
import os

import numpy as np
import pytest

import kronex as kx
from reference import DTYPES, dense, random_array, relerr, tol, well_conditioned

if os.environ.get("KRONEX_TEST_CUPY"):
    import cupy
    assert cupy.cuda.runtime.getDeviceCount() > 0, "KRONEX_TEST_CUPY is set but CuPy sees no GPU"
else:
    cupy = pytest.importorskip("cupy")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no GPU", allow_module_level=True)
    except cupy.cuda.runtime.CUDARuntimeError:
        pytest.skip("CuPy sees no GPU", allow_module_level=True)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cupy_solve_matches_dense_reference(rng, dtype):
    sizes = (9, 7, 8)
    mats = [well_conditioned(rng, n, dtype) for n in sizes]
    b = random_array(rng, sizes, dtype)
    K = kx.kron(*mats)
    x = K.solve(cupy.asarray(b))
    assert isinstance(x, cupy.ndarray) and x.dtype == np.dtype(dtype)
    ref = np.linalg.solve(dense(mats), b.ravel().astype(np.complex128)).reshape(sizes)
    assert relerr(cupy.asnumpy(x), ref) < tol(dtype)


def test_cupy_compiled_solve_makes_no_transfer_and_works_in_place(rng):
    g = kx.gallery
    K = kx.kron(g.bspline_mass(32, 3), g.bspline_mass(24, 3, periodic=True), g.bspline_mass(16, 2))
    b = random_array(rng, K.shape, np.float64)
    db, dx = cupy.asarray(b), cupy.empty(K.shape)
    op = kx.compile(K.inverse(), db)
    assert op.device == "cuda"
    before = kx.transfers()
    op(db, out=dx)
    op(db, out=db)
    assert kx.transfers() == before
    ref = K.solve(b)
    assert relerr(cupy.asnumpy(dx), ref) < 1e-12 and relerr(cupy.asnumpy(db), ref) < 1e-12


def test_cupy_sum_on_the_device(rng):
    g = kx.gallery
    n = 12
    K, M = g.bspline_stiffness(n, 3), g.bspline_mass(n, 3)
    L = kx.kron(K, M) + kx.kron(M, K)
    b = random_array(rng, (n, n), np.float64)
    A = np.kron(K.toarray(), M.toarray()) + np.kron(M.toarray(), K.toarray())
    x = L.solve(cupy.asarray(b))
    assert relerr(cupy.asnumpy(x).ravel(), np.linalg.solve(A, b.ravel())) < 1e-10


def test_arrays_made_on_another_stream_are_waited_for(rng):
    K = kx.kron(kx.gallery.bspline_mass(64, 3), kx.gallery.bspline_mass(64, 3))
    b = random_array(rng, K.shape, np.float64)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        db = cupy.asarray(b) * 2.0  # queued on `stream`; kronex must wait for it
        x = K.solve(db)
    assert relerr(cupy.asnumpy(x), 2.0 * K.solve(b)) < 1e-12


def test_dlpack_producers_on_the_gpu(rng):
    class DLPackOnly:  # what a DLPack-only library (JAX) hands over
        def __init__(self, a):
            self.a = a

        def __dlpack__(self, stream=None):
            return self.a.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.a.__dlpack_device__()

    K = kx.kron(kx.gallery.bspline_mass(20, 3), kx.gallery.bspline_mass(12, 3, periodic=True))
    b = random_array(rng, K.shape, np.float64)
    x = cupy.empty(K.shape)
    K.solve(DLPackOnly(cupy.asarray(b)), out=x)
    assert relerr(cupy.asnumpy(x), K.solve(b)) < 1e-12


def test_host_memory_given_as_a_device_array_is_refused():
    K = kx.kron(kx.gallery.bspline_mass(4, 1))
    host = np.ones(4)

    class HostAsDevice:
        __cuda_array_interface__ = {"shape": (4,), "typestr": "<f8", "data": (host.ctypes.data, False),
                                    "version": 3, "strides": None, "stream": None}

    with pytest.raises(kx.InvalidOperatorError, match="host memory"):
        K.solve(HostAsDevice(), out=cupy.empty(4))


def test_torch_cuda_tensors(rng):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch sees no GPU")
    K = kx.kron(kx.gallery.bspline_mass(10, 3), kx.gallery.bspline_mass(8, 2))
    b = random_array(rng, K.shape, np.float64)
    x = K.solve(torch.from_numpy(b).cuda())
    assert isinstance(x, torch.Tensor) and x.is_cuda
    assert relerr(x.cpu().numpy(), K.solve(b)) < 1e-12
