"""Compiled operators: zero copies, in-place solves, plans, threads and the GIL."""
import gc
import json
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import kronex as kx


def mass_operator(n=(8, 6, 7), dtype=np.float64):
    return kx.kron(kx.gallery.bspline_mass(n[0], 3, dtype=dtype),
                   kx.gallery.bspline_mass(n[1], 2, periodic=True, dtype=dtype),
                   kx.gallery.bspline_mass(n[2], 3, dtype=dtype))


def test_compiled_call_writes_out_in_place_and_leaves_b_alone(rng):
    K = mass_operator()
    b = rng.standard_normal(K.shape)
    b0 = b.copy()
    op = kx.compile(K.inverse(), b)
    x = np.empty_like(b)
    out = op(b, out=x)
    assert out is x
    np.testing.assert_array_equal(b, b0)  # the input is not modified
    np.testing.assert_array_equal(x, K.solve(b))
    # No copy of b is made for a C-contiguous float64 b: a solve in place (out=b) gives the same.
    y = b.copy()
    assert op(y, out=y) is y
    np.testing.assert_array_equal(y, x)


def test_solve_out_is_used_without_copies(rng):
    K = mass_operator()
    b = rng.standard_normal(K.shape)
    x = np.zeros_like(b)
    r = K.solve(b, out=x)
    assert r is x and np.shares_memory(r, x)
    assert not np.shares_memory(r, b)
    r2 = K.solve(b, out=b)  # in place
    assert r2 is b
    np.testing.assert_array_equal(b, x)


def test_non_contiguous_and_other_dtype_inputs_are_converted_once(rng):
    K = mass_operator()
    big = rng.standard_normal((16, 6, 7))
    view = big[::2]  # not C-contiguous
    op = kx.compile(K.inverse(), K.shape)
    expect = op(np.ascontiguousarray(view))
    np.testing.assert_array_equal(op(view), expect)
    np.testing.assert_array_equal(op(view.astype(np.float32)), op(view.astype(np.float32).astype(np.float64)))
    # A Fortran-ordered array is the same tensor in another layout.
    np.testing.assert_array_equal(op(np.asfortranarray(view)), expect)


def test_out_overlapping_b_reads_b_first(rng):
    # A dense apply (a GEMM) reads all of b while it writes out: without the copy, out = b
    # shifted by one value would be garbage.
    n = 300
    K1 = kx.kron(rng.standard_normal((n, n)))
    buf = rng.standard_normal(n + 1)
    expect = K1.apply(buf[:n].copy())
    op = kx.compile(K1, (n,))
    op(buf[:n], out=buf[1:])  # overlaps b without being b
    np.testing.assert_allclose(buf[1:], expect, rtol=1e-12)


def test_plans_print_and_as_dicts(rng):
    K = mass_operator()
    op = kx.compile(K.inverse(), K.shape)
    text = str(op)
    assert text.startswith("plan inverse(kron(f0,f1,f2)) on (8,6,7)")
    p = op.plan()
    assert p["expression"] == "inverse(kron(f0,f1,f2))" and p["shape"] == [8, 6, 7]
    assert p["value_type"] == "double" and p["instantiated"] is True
    assert [s["mode"] for s in p["steps"] if s["kind"] == "solve"] == [0, 1, 2]
    assert p["text"].rstrip("\n") == text
    e = kx.explain(K.inverse(), (80, 60, 70)[:0] or K.shape, as_dict=True)
    assert e["instantiated"] is False and e["expression"] == p["expression"]
    assert kx.explain(K.inverse(), K.shape).startswith("plan inverse(kron(f0,f1,f2))")
    # explain needs no factorization: a singular factor is only found by compile.
    S = kx.kron(kx.gallery.laplacian(6, periodic=True))
    assert "plan" in kx.explain(S.inverse(), (6,))
    with pytest.raises(kx.SingularFactorError):
        kx.compile(S.inverse(), (6,))


def test_compiled_operator_keeps_its_factors_alive(rng):
    a = rng.standard_normal((5, 5)) + 10 * np.eye(5)
    expect = np.linalg.solve(np.kron(a, a), np.ones(25)).reshape(5, 5)
    op = kx.compile(kx.kron(a, kx.factor(a)).inverse(), (5, 5))
    a[:] = np.nan  # factors were copied when made
    del a
    gc.collect()
    np.testing.assert_allclose(op(np.ones((5, 5))), expect, rtol=1e-13)


def test_threads_give_the_same_bits(rng):
    K = mass_operator((40, 36, 48))
    b = rng.standard_normal(K.shape)
    one = kx.compile(K.inverse(), b, threads=1)
    two = kx.compile(K.inverse(), b, threads=2)
    assert "threads=2" in str(two)
    np.testing.assert_array_equal(one(b), two(b))


def test_two_python_threads_solve_different_systems_at_once(rng):
    ops, inputs, expect = [], [], []
    for k in range(2):
        K = mass_operator((20 + k, 18, 22))
        b = rng.standard_normal(K.shape)
        ops.append(kx.compile(K.inverse(), b, threads=1))
        inputs.append(b)
        expect.append(ops[-1](b))
    results = [None, None]

    def work(k):
        for _ in range(20):
            results[k] = ops[k](inputs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(2):
        np.testing.assert_array_equal(results[k], expect[k])


def test_the_gil_is_released_while_an_operator_runs(rng):
    # While one thread is inside a long call, a pure-Python thread keeps running. With the GIL
    # held it could record time stamps only around the call's ends, while the two threads hand
    # the GIL over (a switch interval or two), never in the middle: the window checked leaves
    # out 4 switch intervals at each end of calls of at least 12.
    switch = sys.getswitchinterval()
    n = 1500
    a = rng.standard_normal((n, n))
    m = 128
    while True:  # a dense apply (one GEMM) of about 32 switch intervals
        b = rng.standard_normal((n, m))
        op = kx.compile(kx.kron(a, np.eye(m)), b)
        x = np.empty_like(b)
        t0 = time.perf_counter()
        op(b, out=x)
        if time.perf_counter() - t0 > 32 * switch or m >= 16384:
            break
        m *= 2
    stamps, stop = [], threading.Event()

    def ticker():
        while not stop.is_set():
            stamps.append(time.perf_counter())

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    inside = {}
    for _ in range(4):
        t0 = time.perf_counter()
        op(b, out=x)
        t1 = time.perf_counter()
        if t1 - t0 >= 12 * switch:
            inside[t1 - t0] = sum(1 for s in list(stamps) if t0 + 4 * switch < s < t1 - 4 * switch)
    stop.set()
    t.join()
    assert inside, "no call was long enough to tell"
    assert min(inside.values()) > 0, f"no Python progress during calls of (seconds: stamps) {inside}"


def test_one_compiled_operator_shared_by_two_threads(rng):
    # A plan has one workspace: concurrent calls must take turns, not mix their lines.
    n = 200
    a = rng.standard_normal((n, n)) + n * np.eye(n)
    op = kx.compile(kx.kron(a, np.eye(64)).inverse(), (n, 64))
    inputs = [rng.standard_normal((n, 64)) for _ in range(2)]
    expect = [op(b) for b in inputs]
    wrong = [0, 0]

    def work(k):
        x = np.empty((n, 64))
        for _ in range(100):
            op(inputs[k], out=x)
            wrong[k] += not np.array_equal(x, expect[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == [0, 0]


@pytest.mark.skipif("KRONEX_BIN" not in os.environ, reason="the kronex command is not built")
def test_plans_match_the_kronex_command():
    # Python compiles exactly the plans C++ does: the same programs through `kronex explain --json`.
    g = kx.gallery
    cases = [
        ("kron(mass(8, 3), mass(6, 2, periodic), stiffness(7, 3)).solve(ones())",
         kx.kron(g.bspline_mass(8, 3), g.bspline_mass(6, 2, periodic=True), g.bspline_stiffness(7, 3)).inverse()),
        ("K = kron(stiffness(6, 3), mass(5, 3)) + kron(mass(6, 3), stiffness(5, 3)) + 0.5 * kron(mass(6, 3), mass(5, 3));"
         " K.solve(ones())",
         (kx.kron(g.bspline_stiffness(6, 3), g.bspline_mass(5, 3)) + kx.kron(g.bspline_mass(6, 3), g.bspline_stiffness(5, 3))
          + 0.5 * kx.kron(g.bspline_mass(6, 3), g.bspline_mass(5, 3))).inverse()),
        ("kron(laplacian(9), identity(4)).transpose().apply(ones())",
         kx.kron(g.laplacian(9), g.identity(4)).T),
    ]
    for program, expr in cases:
        out = subprocess.run([os.environ["KRONEX_BIN"], "explain", "--json", "--threads", "1", program],
                             capture_output=True, text=True, check=True).stdout
        cli = json.loads(out)["stages"][0]["plan"]
        mine = kx.explain(expr, expr.shape, threads=1, as_dict=True)
        assert mine == cli, program
