#!/usr/bin/env bash
# The main job: install what is missing, build the Release preset, run the 3D demo
# (plan, check against apply, time against the memory floor). Usage: scripts/demo.sh [n]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release --target demo
./build/release/examples/demo "${1:-128}"
