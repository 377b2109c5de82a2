"""NumPy's dense reference for the tests: the Kronecker product of the factors' matrices
(np.kron) and np.linalg.solve, with random operands and the tolerances kronex is held to
(1e-12 relative for double, 1e-4 for single precision)."""
import numpy as np

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.dtype(np.float32), np.dtype(np.complex64)) else 1e-12


def dense(factors):
    A = np.ones((1, 1))
    for f in factors:
        A = np.kron(A, f)
    return A


def relerr(x, ref):
    return np.linalg.norm((x - ref).ravel()) / np.linalg.norm(ref.ravel())


def random_array(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def well_conditioned(rng, n, dtype):
    return (random_array(rng, (n, n), dtype) + 2 * n * np.eye(n)).astype(dtype)
