"""Device arrays (__cuda_array_interface__, DLPack) through kronex's device backend, run without a
GPU on the CPU-device module (kronex._kronex_omp: host memory stands in for device memory, the same
plans and transfer accounting as on CUDA): results against NumPy's dense reference, zero transfers
per solve, in-place use, and every refusal. The fakes fail on any copy to the host."""
import importlib
import os

import numpy as np
import pytest
import scipy.sparse as sp

import kronex as kx
from fake_device import FakeCudaArray, FakeDLPackArray
from reference import DTYPES, dense, random_array, relerr, tol, well_conditioned


@pytest.fixture
def cpu_device():
    """Device arrays run on the CPU-device module for the test. Where ctest says it is built
    (KRONEX_TEST_DEVICE_CPU), a missing module fails instead of skipping."""
    try:
        importlib.import_module("kronex._kronex_omp")
    except ImportError:
        if os.environ.get("KRONEX_TEST_DEVICE_CPU"):
            raise
        pytest.skip("this build has no CPU-device module (kronex._kronex_omp)")
    kx._device.use_runtime("omp")
    yield
    kx._device.use_runtime("cuda")


def fake(a, **kw):
    return FakeCudaArray(np.ascontiguousarray(a), **kw)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("sizes", [(7,), (5, 6), (4, 3, 5)])
def test_device_solve_matches_dense_reference(cpu_device, rng, dtype, sizes):
    mats = [well_conditioned(rng, n, dtype) for n in sizes]
    b = random_array(rng, sizes, dtype)
    keep = b.copy()
    x = kx.kron(*mats).solve(fake(b))
    assert isinstance(x, FakeCudaArray) and x.dtype == np.dtype(dtype) and x.shape == sizes
    ref = np.linalg.solve(dense(mats), b.ravel().astype(np.complex128)).reshape(sizes)
    assert relerr(x.host, ref) < tol(dtype)
    np.testing.assert_array_equal(b, keep)  # the input is not modified


def test_every_factor_source_and_transposes_on_the_device(cpu_device, rng):
    g = kx.gallery
    mats = [g.bspline_mass(8, 3, periodic=True), sp.diags([1.0, 4.0, 1.0], [-1, 0, 1], shape=(5, 5), format="csr"),
            well_conditioned(rng, 4, np.float64)]
    K = kx.kron(*mats)
    A = dense([kx.factor(m).toarray() for m in mats])
    b = random_array(rng, K.shape, np.float64)
    v = b.ravel()
    for got, ref in ((K.solve(fake(b)), np.linalg.solve(A, v)), (K.apply(fake(b)), A @ v),
                     (K.T.solve(fake(b)), np.linalg.solve(A.T, v)), (K.T.apply(fake(b)), A.T @ v)):
        assert relerr(got.host.ravel(), ref) < 1e-12


def test_compiled_device_operator_solves_in_place_with_no_transfer(cpu_device, rng):
    K = kx.kron(kx.gallery.bspline_mass(8, 3), kx.gallery.bspline_mass(6, 2, periodic=True))
    b = random_array(rng, K.shape, np.float64)
    fb, fx = fake(b.copy()), fake(np.zeros(K.shape))
    before = kx.transfers()
    op = kx.compile(K.inverse(), fb)
    compiled = kx.transfers() - before
    assert op.device == "omp" and compiled.uploads >= 1 and compiled.downloads == 0  # each inverse, once
    before = kx.transfers()
    assert op(fb, out=fx) is fx
    op(fb, out=fb)  # in place
    assert kx.transfers() == before  # no host<->device copy in either solve
    ref = K.solve(b)
    assert relerr(fx.host, ref) < 1e-12 and relerr(fb.host, ref) < 1e-12
    assert "device" in repr(op) and "gemm" in str(op).lower()


def test_sums_and_their_fast_diagonalisation_on_the_device(cpu_device, rng):
    g = kx.gallery
    n = (7, 6)
    Kx, Ky, Mx, My = g.bspline_stiffness(n[0], 3), g.bspline_stiffness(n[1], 3), g.bspline_mass(n[0], 3), g.bspline_mass(n[1], 3)
    L = kx.kron(Kx, My) + kx.kron(Mx, Ky) + 0.5 * kx.kron(Mx, My)
    A = sum(c * np.kron(a.toarray(), b.toarray()) for c, a, b in ((1, Kx, My), (1, Mx, Ky), (0.5, Mx, My)))
    b = random_array(rng, n, np.float64)
    op = kx.compile(L.inverse(), fake(b))
    before = kx.transfers()
    x = op(fake(b))
    assert kx.transfers() == before
    assert relerr(x.host.ravel(), np.linalg.solve(A, b.ravel())) < 1e-10
    assert relerr(L.apply(fake(b)).host.ravel(), A @ b.ravel()) < 1e-12


def test_dlpack_arrays_on_the_device(cpu_device, rng):
    M = kx.gallery.bspline_mass(6, 3)
    K = kx.kron(M, M)
    b = random_array(rng, K.shape, np.float64)
    fb = FakeDLPackArray(b.copy())
    x = K.solve(fb)
    assert isinstance(x, FakeDLPackArray) and relerr(x.host, K.solve(b)) < 1e-12
    assert fb.streams == [1]  # kronex asked the producer to order its work before the default stream
    K.solve(fb, out=fb)
    assert relerr(fb.host, K.solve(b)) < 1e-12
    with pytest.raises(kx.DTypeError, match="DLPack element type"):
        K.solve(FakeDLPackArray(np.ones(K.shape, dtype=np.int64)))


def test_device_plans_match_the_kronex_command(cpu_device):
    if "KRONEX_BIN" not in os.environ:
        pytest.skip("the kronex command is not built")
    import json
    import subprocess
    g = kx.gallery
    cases = [("kron(mass(8, 3), mass(6, 2, periodic)).solve(ones())",
              kx.kron(g.bspline_mass(8, 3), g.bspline_mass(6, 2, periodic=True)).inverse()),
             ("K = kron(stiffness(6, 3), mass(5, 3)) + kron(mass(6, 3), stiffness(5, 3)); K.solve(ones())",
              (kx.kron(g.bspline_stiffness(6, 3), g.bspline_mass(5, 3))
               + kx.kron(g.bspline_mass(6, 3), g.bspline_stiffness(5, 3))).inverse())]
    for program, expr in cases:
        out = subprocess.run([os.environ["KRONEX_BIN"], "explain", "--json", "--backend", "device", program],
                             capture_output=True, text=True, check=True).stdout
        cli = json.loads(out)["stages"][0]["plan"]
        assert kx.explain(expr, fake(np.zeros(expr.shape)), as_dict=True) == cli, program
        assert kx.explain(expr, expr.shape, device=True, as_dict=True) == cli, program
        assert kx.explain(expr, expr.shape, as_dict=True) != cli  # the host plan is another plan


def test_device_operands_are_checked_before_any_work(cpu_device):
    M = kx.gallery.bspline_mass(5, 2)
    singular = kx.kron(M, np.zeros((4, 4)))
    # A wrong dtype or shape is reported, not the singular factor that factoring would find.
    with pytest.raises(kx.DTypeError, match="float32.*float64"):
        singular.solve(fake(np.ones((5, 4), dtype=np.float32)))
    with pytest.raises(kx.DimensionMismatchError, match=r"\(5,3\)"):
        singular.solve(fake(np.ones((5, 3))))
    with pytest.raises(kx.SingularFactorError) as e:  # raised in the device module, same class
        singular.solve(fake(np.ones((5, 4))))
    assert e.value.mode == 1
    K = kx.kron(M, kx.gallery.bspline_mass(4, 2))
    op = kx.compile(K.inverse(), (5, 4), device=True)
    b = np.ones((5, 4))
    with pytest.raises(kx.DTypeError, match="does not convert device arrays"):
        op(fake(b.astype(np.complex128)))
    with pytest.raises(kx.InvalidOperatorError, match="not C-contiguous"):
        op(FakeCudaArray(b, strides=(8, 40)))
    with pytest.raises(kx.InvalidOperatorError, match="read-only"):
        op(fake(b), out=fake(np.zeros((5, 4)), readonly=True))
    with pytest.raises(kx.InvalidOperatorError, match="masked"):
        op(fake(b, mask=0))
    with pytest.raises(kx.InvalidOperatorError, match="stream 0"):
        op(fake(b, stream=0))
    big = np.zeros(40)
    with pytest.raises(kx.InvalidOperatorError, match="overlaps"):
        op(FakeCudaArray(big[:20].reshape(5, 4)), out=FakeCudaArray(big[4:24].reshape(5, 4)))
    with pytest.raises(kx.InvalidOperatorError, match="compiled for device arrays"):
        op(b)
    with pytest.raises(kx.InvalidOperatorError, match="compiled for device arrays"):
        op(fake(b), out=np.zeros((5, 4)))
    with pytest.raises(kx.InvalidOperatorError, match="device=True goes with a shape"):
        kx.compile(K.inverse(), b, device=True)
    host_op = kx.compile(K.inverse(), (5, 4))
    assert host_op.device is None
    with pytest.raises(kx.InvalidOperatorError, match="compiled for NumPy arrays"):
        host_op(fake(b))
    with pytest.raises(kx.InvalidOperatorError, match="compiled for NumPy arrays"):
        host_op(b, out=fake(np.zeros((5, 4))))
    with pytest.raises(kx.InvalidOperatorError, match="the input is not"):
        K.solve(b, out=fake(np.zeros((5, 4))))
    # Strides that are C order anyway, and an older interface version without streams, are fine.
    x = op(FakeCudaArray(b, strides=(32, 8), version=2))
    assert relerr(x.host, K.solve(b)) < 1e-12


def test_krylov_solvers_refuse_device_arrays(cpu_device):
    K = kx.kron(kx.gallery.bspline_mass(5, 2), kx.gallery.bspline_mass(4, 2))
    b = np.ones((5, 4))
    with pytest.raises(kx.BackendUnavailableError, match="Krylov solvers run on host"):
        kx.cg(K, fake(b))
    with pytest.raises(kx.BackendUnavailableError, match="compiled for device arrays"):
        kx.cg(kx.compile(K, (5, 4), device=True), b)


def test_without_a_usable_cuda_runtime_device_arrays_get_a_clear_error():
    # The default runtime is CUDA. Here a fake over host memory stands for a GPU array: without
    # the CUDA module, or without a GPU, kronex says so; with both, it refuses host memory given
    # as device memory. It never copies (the fake's __array__ fails).
    try:
        cuda = importlib.import_module("kronex._kronex_cuda")
    except ImportError:
        cuda = None
        assert not os.environ.get("KRONEX_TEST_DEVICE_CUDA_BUILT"), "the CUDA module was built but does not import"
    K = kx.kron(kx.gallery.bspline_mass(4, 1), kx.gallery.bspline_mass(3, 1))
    for call in (lambda a: K.solve(a), lambda a: K.apply(a), lambda a: kx.compile(K, a)(a)):
        if cuda is None:
            with pytest.raises(kx.BackendUnavailableError, match="built without a CUDA runtime"):
                call(fake(np.ones((4, 3))))
        elif not cuda.available():
            with pytest.raises(kx.BackendUnavailableError, match="no device is visible"):
                call(fake(np.ones((4, 3))))
        else:
            with pytest.raises(kx.InvalidOperatorError, match="host memory"):
                call(fake(np.ones((4, 3))))
    with pytest.raises(kx.BackendUnavailableError, match="DLPack device type 4"):
        K.solve(FakeDLPackArray(np.ones((4, 3)), device_type=4))
    # DLPack on the host (type 1) is an ordinary host array, read as NumPy reads it.
    assert kx._device.describe(FakeDLPackArray(np.ones((4, 3)), device_type=1), "input") is None
