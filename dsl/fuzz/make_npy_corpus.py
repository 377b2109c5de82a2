#!/usr/bin/python3
"""Writes the seed corpus of the npy fuzz target (dsl/fuzz/corpus/npy/): small arrays of the four
accepted dtypes in 0 to 4 dimensions, C and Fortran order, an empty array, format versions 1.0, 2.0
and 3.0, and two refused dtypes (big-endian float64, int64), so the fuzzer starts from every
branch of the header parser.

Run: /usr/bin/python3 dsl/fuzz/make_npy_corpus.py   (deterministic: fixed values)
"""
import os

import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "npy")


def save(name, a, version=None, fortran=False):
    if fortran:
        a = np.asfortranarray(a)
    with open(os.path.join(OUT, name + ".npy"), "wb") as f:
        np.lib.format.write_array(f, a, version=version)


def values(n, dtype):
    v = np.arange(1, n + 1, dtype=float) / 4
    return (v - 1j * v).astype(dtype) if np.dtype(dtype).kind == "c" else v.astype(dtype)


os.makedirs(OUT, exist_ok=True)
save("f4_1d", values(3, np.float32))
save("f8_0d", np.array(2.5))
save("f8_2d", values(6, np.float64).reshape(2, 3))
save("f8_2d_fortran", values(6, np.float64).reshape(2, 3), fortran=True)
save("c8_3d", values(8, np.complex64).reshape(2, 2, 2))
save("c16_4d", values(16, np.complex128).reshape(2, 2, 2, 2))
save("f8_empty", np.zeros((0, 3)))
save("f8_version2", values(4, np.float64), version=(2, 0))
save("c16_version3", values(2, np.complex128), version=(3, 0))
save("f8_big_endian", values(3, ">f8"))
save("int64", np.arange(3, dtype=np.int64))
