#!/usr/bin/env python3
"""bench_host_sweep, plot_host_sweep.py and peers/kron_solve_numpy.py at tiny sizes.

The sweep's JSON must hold every documented field with consistent values; the NumPy peers must
pass their dense check, agree with each other at n = 8 and 12, and the dense check must reject a
peer that applies its factors in the wrong mode order. KRONEX_HOST_SWEEP names the sweep binary
(ctest sets it); without it the tests that need it are skipped."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

BENCHMARKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "benchmarks")
PEERS = os.path.join(BENCHMARKS, "peers", "kron_solve_numpy.py")
sys.path.insert(0, os.path.join(BENCHMARKS, "peers"))
import kron_solve_numpy as peers  # noqa: E402

SWEEP = os.environ.get("KRONEX_HOST_SWEEP")
ROW_FIELDS = ["dim", "n", "boundary", "degree", "type", "threads", "unknowns", "reps", "median_s", "min_s", "gdof_s",
              "gb_s", "plan_bytes", "floor_bytes_per_unknown", "floor_s", "ratio", "floor2_bytes_per_unknown",
              "floor2_s", "ratio2"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (" ".join(cmd), r.returncode, r.stdout, r.stderr))
    return r.stdout


@unittest.skipUnless(SWEEP, "KRONEX_HOST_SWEEP (the bench_host_sweep binary) not set")
class Sweep(unittest.TestCase):
    def sweep(self, *args):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sweep.json")
            out = run([SWEEP, *args, "--reps", "2", "--json", path])
            with open(path) as f:
                return out, json.load(f)

    def test_json_fields(self):
        out, doc = self.sweep("--dim", "3", "--n", "6,8", "--degree", "1,2", "--type", "float,double,complex_float,complex")
        self.assertIn("triad bandwidth", out)
        self.assertIn("BLAS:", out)
        for key in ("triad_bandwidth_gb_s", "threads", "blas", "rows", "flags", "dim"):
            self.assertIn(key, doc)
        for key in ("openblas", "corename", "config", "threads", "generic_core"):
            self.assertIn(key, doc["blas"])
        self.assertGreater(doc["triad_bandwidth_gb_s"], 0)
        # 2 sizes × 2 degrees × 2 boundaries × 4 types; periodic n=6 with p=2 is allowed (n ≥ 2p+1).
        self.assertEqual(len(doc["rows"]), 32)
        sizes = {"float": 4, "double": 8, "complex<float>": 8, "complex<double>": 16}
        for r in doc["rows"]:
            for key in ROW_FIELDS:
                self.assertIn(key, r)
            self.assertEqual(r["unknowns"], r["n"] ** 3)
            self.assertEqual(r["floor_bytes_per_unknown"], 2 * 3 * sizes[r["type"]])
            self.assertEqual(r["floor2_bytes_per_unknown"], 4 * sizes[r["type"]])
            self.assertLessEqual(r["min_s"], r["median_s"])
            self.assertAlmostEqual(r["ratio"], r["median_s"] / r["floor_s"], delta=1e-4 * r["ratio"])
            self.assertAlmostEqual(r["ratio2"], r["median_s"] / r["floor2_s"], delta=1e-4 * r["ratio2"])
            self.assertEqual(r["reps"], 2)
        self.assertEqual({r["boundary"] for r in doc["rows"]}, {"clamped", "periodic"})

    def test_dimensions_2_and_4_and_skips(self):
        _, doc = self.sweep("--dim", "2", "--n", "9", "--degree", "7", "--boundary", "clamped")
        self.assertEqual([(r["dim"], r["unknowns"], r["floor_bytes_per_unknown"]) for r in doc["rows"]], [(2, 81, 32)])
        out, doc = self.sweep("--dim", "4", "--n", "4,5", "--degree", "2", "--boundary", "periodic")
        self.assertEqual([r["n"] for r in doc["rows"]], [5])  # n = 4 < 2p+1: skipped, said so
        self.assertIn("skipped", out)

    def test_threads_are_the_plans(self):
        # Each row records the threads its plan ran on (the count asked for; 1 without OpenMP).
        _, doc = self.sweep("--dim", "2", "--n", "40", "--degree", "2", "--boundary", "clamped", "--threads", "1,2")
        self.assertEqual(len(doc["rows"]), 2)
        self.assertEqual(doc["rows"][0]["threads"], 1)
        self.assertIn(doc["rows"][1]["threads"], (1, 2))

    def test_bad_command_line(self):
        for args in (["--dim", "5"], ["--type", "half"], ["--degree", "8"], ["--boundary", "open"]):
            r = subprocess.run([SWEEP, *args], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("usage:", r.stderr)

    def test_plot(self):
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib not installed")
        _, doc = self.sweep("--dim", "2", "--n", "8,12", "--degree", "1,3")
        with tempfile.TemporaryDirectory() as tmp:
            js, png = os.path.join(tmp, "s.json"), os.path.join(tmp, "s.png")
            with open(js, "w") as f:
                json.dump(doc, f)
            run([sys.executable, os.path.join(BENCHMARKS, "plot_host_sweep.py"), js, "-o", png])
            self.assertGreater(os.path.getsize(png), 1000)


class Peers(unittest.TestCase):
    def test_peers_agree_at_tiny_sizes(self):
        for dim in (2, 3, 4):
            with tempfile.TemporaryDirectory() as tmp:
                path = os.path.join(tmp, "peers.json")
                cmd = [sys.executable, PEERS, "--dim", str(dim), "--sizes", "8,12", "--repeat", "1", "--json", path]
                cmd += ["--kronex", SWEEP] if SWEEP else ["--no-kronex"]
                out = run(cmd)
                with open(path) as f:
                    doc = json.load(f)
            self.assertIn("speedup:gbtrs", out)
            for err in doc["dense_check"].values():
                self.assertLess(err, 1e-10)
            self.assertEqual([r["n"] for r in doc["rows"]], [8, 12])
            for r in doc["rows"]:
                self.assertLess(r["peer_diff"], 1e-10, r)
                self.assertLess(r["residual"], 1e-10, r)
                self.assertGreater(r["gbtrs_s"], 0)
                self.assertGreater(r["gemm_s"], 0)
                if SWEEP:
                    self.assertGreater(r["kronex_s"], 0)

    def test_dense_check_rejects_a_wrong_mode_order(self):
        class Reversed(peers.GbtrsPeer):  # factor k applied along axis d-1-k
            name = "reversed"

            def __init__(self, factors):
                super().__init__(factors[::-1])

        class Transposed(peers.GemmPeer):  # each factor's transpose
            name = "transposed"

            def __init__(self, factors):
                super().__init__([A.T for A in factors])

        for dim in (2, 3, 4):
            peers.check_against_dense(dim, 3)  # the real peers pass
            for wrong in (Reversed, Transposed):
                with self.assertRaises(peers.PeerError, msg="%s, dim %d" % (wrong.name, dim)):
                    peers.check_against_dense(dim, 3, peers=(wrong,))


if __name__ == "__main__":
    unittest.main(verbosity=2)
