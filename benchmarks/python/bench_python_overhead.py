#!/usr/bin/env python3
"""What calling kronex from Python costs: one compiled solve, op(b, out=x), timed from Python
and, on the same arrays and the same compiled plan, in C++ (the C++ call's own loop, no Python
in between), for 3D clamped B-spline mass factors (p = 3, float64) at several sizes.

    PYTHONPATH=build/release/python python3 benchmarks/python/bench_python_overhead.py

Per size: the median time per call from Python and from C++, the difference (the Python
overhead) in microseconds and in percent, GDOF/s and GB/s of the Python call, and its ratio to
the memory-bandwidth floor (3 passes of 16 bytes per unknown at the triad bandwidth measured in
the same run, as bench_host_solve reports it). One thread unless --threads.

With --device the same on device arrays, through the package's device module: --device cuda on
CuPy arrays (a GPU), --device omp on a build tree's CPU device (host memory handed over as a
device array: what the device path costs in Python, without a GPU). The floor is then the
triad's on the host (omp) or left out (cuda).
"""
import argparse
import importlib
import sys
import time

import numpy as np

import kronex as kx
from kronex import _kronex


def python_seconds(op, b, x, repeats):
    t = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        op(b, out=x)
        t.append(time.perf_counter() - t0)
    return float(np.median(t))


class HostAsDevice:
    """A NumPy array handed over as a device array (__cuda_array_interface__): what the CPU device
    reads, host memory standing in for device memory."""

    def __init__(self, a):
        self.a = a
        self.__cuda_array_interface__ = {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                                         "version": 3, "strides": None, "stream": None}


def device_arrays(kind, b):
    """b and an output like it, as device arrays of `kind`, with their addresses."""
    if kind == "cuda":
        try:
            import cupy
        except ImportError:
            sys.exit("bench_python_overhead: --device cuda needs CuPy")
        db, dx = cupy.asarray(b), cupy.empty_like(cupy.asarray(b))
        return db, dx, db.data.ptr, dx.data.ptr
    x = np.empty_like(b)
    return HostAsDevice(b), HostAsDevice(x), b.ctypes.data, x.ctypes.data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 32, 64, 128])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="alternations of the two timings (default 5)")
    parser.add_argument("--device", choices=["omp", "cuda"], help="device arrays (see above)")
    args = parser.parse_args()
    if args.device:
        kx._device.use_runtime(args.device)
        if args.device == "omp":  # the CPU device module lives in build trees only
            try:
                importlib.import_module("kronex._kronex_omp")
            except ImportError:
                sys.exit("bench_python_overhead: --device omp needs a build tree's kronex._kronex_omp")

    triad = _kronex._triad_bandwidth(args.threads)
    print(f"triad bandwidth ({args.threads} thread{'s' if args.threads > 1 else ''}): {triad / 1e9:.1f} GB/s"
          + (f"; device arrays: {args.device}" if args.device else ""))
    print(f"{'problem':<26}{'python':>11}{'C++':>11}{'overhead':>11}{'':>8}{'GDOF/s':>8}{'GB/s':>7}{'t/floor':>9}")
    for n in args.sizes:
        M = kx.gallery.bspline_mass(n, 3)
        b = np.random.default_rng(0).standard_normal((n, n, n))
        x = np.empty_like(b)
        if args.device:
            b, x, b_ptr, x_ptr = device_arrays(args.device, b)
        op = kx.compile(kx.kron(M, M, M).inverse(), b, threads=args.threads)
        # Enough calls per timing for about 0.2 s, at least 20.
        t0 = time.perf_counter()
        op(b, out=x)
        repeats = max(20, int(0.2 / max(time.perf_counter() - t0, 1e-7)))
        py, cpp = [], []
        for _ in range(args.rounds):  # alternated, so that machine noise hits both alike
            py.append(python_seconds(op, b, x, repeats))
            if args.device:
                runs = op._module.time_runs(op._c, b_ptr, x_ptr, repeats)
            else:
                runs = op._c.time_runs(b, x, repeats)
            cpp.append(runs[len(runs) // 2])
        t_py, t_cpp = float(np.median(py)), float(np.median(cpp))
        dofs = n ** 3
        bytes_moved = 3 * 16 * dofs
        floor = bytes_moved / triad
        ratio = "" if args.device == "cuda" else f"{t_py / floor:>9.2f}"
        print(f"{f'{n}^3 clamped p=3 float64':<26}{t_py * 1e6:>9.1f}us{t_cpp * 1e6:>9.1f}us"
              f"{(t_py - t_cpp) * 1e6:>9.2f}us{(t_py / t_cpp - 1) * 100:>7.1f}%{dofs / t_py / 1e9:>8.3f}"
              f"{bytes_moved / t_py / 1e9:>7.1f}{ratio}")


if __name__ == "__main__":
    main()
