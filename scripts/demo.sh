#!/usr/bin/env bash
# The main job: install what is missing, build the kronex command (Release preset), and bench a
# realistic solve: a 3D tensor-product B-spline mass matrix (clamped x periodic x clamped, degree
# 3), n = 128 per axis (or the n given), on the host and the device backend (the CPU device here).
# It prints each compiled plan, then per backend the time, GDOF/s, GB/s, the ratio to the memory
# floor measured in the same run, and the relative residual ||K x - b|| / ||b||.
# Usage: scripts/demo.sh [n]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target kronex_cli
n=${1:-128}
./build/release/dsl/kronex bench \
  "kron(mass(\$n, 3), mass(\$n, 3, periodic), mass(\$n, 3)).solve(random(1))" --set "n=$n" --backend all
