#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages kronex needs to build, test and benchmark, if missing.
# Uses sudo when not run as root. Safe to run again: installs nothing when all are present.
set -euo pipefail
packages=(cmake ninja-build ccache g++ libxtensor-dev libxtensor-blas-dev libxsimd-dev
          libboost-test-dev liblapack-dev liblapacke-dev libopenblas-dev libthrust-dev libcub-dev
          libopenmpi-dev openmpi-bin
          libcli11-dev nlohmann-json3-dev python3 python3-dev python3-numpy python3-scipy python3-matplotlib
          python3-pytest pybind11-dev libdlpack-dev
          clang libclang-rt-14-dev libfuzzer-14-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "kronex: all build dependencies are installed"
  exit 0
fi
echo "kronex: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
