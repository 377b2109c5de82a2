#!/usr/bin/env python3
"""examples/precondition.cpp and its kronex programs (examples/precondition/*.kx) run the same
experiment: the C++ program assembles the variable-coefficient operators, writes them as Matrix
Market files, and solves with CG; each kronex program reads a file back and solves one row of the
table. Both go through kronex::compile_krylov from x = 0 with b = 1 on the same matrices (written
with 17 digits), so each host row's iterations and status must be equal, and both true residuals
must meet rtol. When the example has a device runtime, each row is solved on device tensors too:
converged, and within the iterations that a different but equally exact preconditioner
arithmetic allows (the device applies a Kronecker inverse as GEMMs with the inverse matrices, the
host by LU: 1 + 1/8 of the host's count); each kronex program, run with --backend device, must
then give its device row's iterations exactly. Run by ctest with PRECONDITION_BIN, KRONEX_BIN and
EXAMPLES_DIR set."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

PRECONDITION = os.environ["PRECONDITION_BIN"]
KRONEX = os.environ["KRONEX_BIN"]
EXAMPLES = os.environ["EXAMPLES_DIR"]
N = 6  # small: the test checks agreement, not speed

# The table's rows, in order, and the program that solves each.
PROGRAMS = ["mass_none", "mass_jacobi", "mass_kron", "helmholtz_jacobi", "helmholtz_sum"]


def table_rows(text):
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 8 and cells[3].isdigit():
            rows.append({"problem": cells[0], "preconditioner": cells[1], "backend": cells[2],
                         "iterations": int(cells[3]), "status": cells[4], "residual": float(cells[7])})
    return rows


class PreconditionExample(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="kronex-precondition-")
        out = subprocess.run([PRECONDITION, str(N), "2", "--write", cls.dir], capture_output=True, text=True,
                             timeout=300)
        assert out.returncode == 0, out.stderr
        rows = table_rows(out.stdout)
        cls.rows = [r for r in rows if r["backend"] == "host"]
        cls.device_rows = [r for r in rows if r["backend"] != "host"]

    def test_the_table_has_every_row_and_every_solve_converged(self):
        self.assertEqual([r["problem"] for r in self.rows], ["mass"] * 3 + ["Helmholtz"] * 2)
        for r in self.rows:
            self.assertEqual(r["status"], "converged", r)
            self.assertLessEqual(r["residual"], 1e-10, r)
        # What the example is for: the Kronecker preconditioners beat Jacobi, which beats nothing.
        it = [r["iterations"] for r in self.rows]
        self.assertLess(it[2], it[1])
        self.assertLess(it[1], it[0])
        self.assertLess(it[4], it[3])

    def test_device_rows_solve_the_same_problems(self):
        if not self.device_rows:
            self.skipTest("the example was built without a device runtime")
        self.assertEqual([(r["problem"], r["preconditioner"]) for r in self.device_rows],
                         [(r["problem"], r["preconditioner"]) for r in self.rows])
        for host, dev in zip(self.rows, self.device_rows):
            self.assertEqual(dev["status"], "converged", dev)
            self.assertLessEqual(dev["residual"], 1e-10, dev)
            self.assertLessEqual(abs(dev["iterations"] - host["iterations"]), 1 + host["iterations"] // 8, (host, dev))

    def test_each_kronex_program_solves_its_row_the_same_way(self):
        self.check_programs(self.rows, [])

    def test_each_kronex_program_solves_its_device_row_the_same_way(self):
        if not self.device_rows:
            self.skipTest("the example was built without a device runtime")
        self.check_programs(self.device_rows, ["--backend", "device"])

    def check_programs(self, rows, backend):
        for name, row in zip(PROGRAMS, rows):
            with self.subTest(program=name, backend=row["backend"]):
                out = subprocess.run([KRONEX, "run", "-f", os.path.join(EXAMPLES, name + ".kx"), "--set", "n=%d" % N,
                                      *backend], cwd=self.dir, capture_output=True, text=True, timeout=300)
                self.assertEqual(out.returncode, 0, out.stderr)
                m = re.search(r"iterations (\d+)\s+converged", out.stdout)
                self.assertIsNotNone(m, out.stdout)
                self.assertEqual(int(m.group(1)), row["iterations"], out.stdout)
                r = re.search(r"relative residual[^=]*=\s*([0-9.eE+-]+)", out.stdout)
                self.assertIsNotNone(r, out.stdout)
                self.assertLessEqual(float(r.group(1)), 1e-10)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
