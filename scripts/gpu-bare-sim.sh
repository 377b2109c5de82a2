#!/usr/bin/env bash
# Rehearses the GPU check on a simulated bare GPU machine, here, without a GPU: a minimal Debian 12
# root (debootstrap, variant minbase) with only what the GPU machine's image is known to have —
# a C++ compiler for nvcc, cmake, ninja, python3 with NumPy, and the CUDA toolkit (this machine's
# /usr/local/cuda, bind-mounted read-only) — and no network. No kronex build dependency is
# installed there: the run must get every one of them from the carried folder (scripts/gpu-deps.sh).
#
#   scripts/gpu-bare-sim.sh [--fresh]
#
# It (1) makes the root once, in $KRONEX_BARE_ROOT (default /var/tmp/kronex-bare; --fresh makes
# it again), and checks that none of kronex's dependencies is in it; (2) copies what the device
# tool copies — the working tree's tracked and untracked, not ignored, files — plus the carried
# folder build/gpu-deps (made by scripts/gpu-deps.sh if missing) into the root; (3) runs
# scripts/gpu-check.sh there, in its own mount and network namespaces (no network interface but a
# downed loopback), as the GPU machine would, with KRONEX_GPU_CHECK_SIMULATION=1: the CUDA tests,
# the benchmark and kronex-cuda then stop where a GPU is needed (exit 77, or "no device"), and the
# check reports "ready" instead of passing. Logs and the summary go to $KRONEX_BARE_OUT (default
# build/gpu-sim/out).
#
# Needs root (debootstrap, chroot, mounts) and the Debian mirror for step 1 only. Slow: making the
# root takes a few minutes, and the build runs on this machine's cores (about 15 minutes on 2).
# Not part of CI. Exit status: gpu-check.sh's (0: ready), or 1 when the setup fails.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$PWD
root=${KRONEX_BARE_ROOT:-/var/tmp/kronex-bare}
out=${KRONEX_BARE_OUT:-$src/build/gpu-sim/out}
mirror=${KRONEX_BARE_MIRROR:-http://deb.debian.org/debian}
image_packages=g++,cmake,ninja-build,python3,python3-numpy
say() { echo "== gpu-bare-sim: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "gpu-bare-sim: must run as root (debootstrap, chroot, mounts)" >&2; exit 1; }
[ -x /usr/local/cuda/bin/nvcc ] || { echo "gpu-bare-sim: no CUDA toolkit at /usr/local/cuda" >&2; exit 1; }

# --- 1. the bare root -------------------------------------------------------------------------
if [ "${1:-}" = --fresh ]; then rm -rf "$root"; fi
if [ ! -f "$root/.kronex-bare-ready" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap
  rm -rf "$root"
  mkdir -p "$root"
  say "debootstrap --variant=minbase bookworm $root (with $image_packages)"
  debootstrap --variant=minbase --include="$image_packages" bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -n 20 "$root.log"; echo "gpu-bare-sim: debootstrap failed (log: $root.log)" >&2; exit 1; }
  touch "$root/.kronex-bare-ready"
fi
# What the GPU image lacks must be absent here too, or the rehearsal proves nothing: no header and
# no link-time library of kronex's dependencies. (Debian's python3-numpy brings the BLAS/LAPACK
# runtime libraries, liblapack.so.3 and libblas.so.3, which a pip NumPy does not; nothing can link
# against them without the -dev links, and gpu-check.sh puts the carried ones first on the loader
# path and logs which ones the binaries use.)
present=()
for f in usr/include/xtensor usr/include/xtl usr/include/xtensor-blas usr/include/xsimd usr/include/boost \
         usr/include/lapack.h usr/include/cblas.h usr/include/CLI usr/include/nlohmann usr/include/thrust \
         usr/include/mpi.h usr/include/x86_64-linux-gnu/openmpi usr/lib/x86_64-linux-gnu/liblapack.so \
         usr/lib/x86_64-linux-gnu/libblas.so usr/lib/x86_64-linux-gnu/libboost_unit_test_framework.so.1.74.0 \
         usr/share/cmake/xtensor usr/lib/x86_64-linux-gnu/cmake/Boost-1.74.0; do
  [ -e "$root/$f" ] && present+=("/$f")
done
if [ ${#present[@]} -gt 0 ]; then
  echo "gpu-bare-sim: the root has what the GPU image lacks: ${present[*]}; run with --fresh" >&2
  exit 1
fi
say "root $root: $(chroot "$root" sh -c 'g++ --version | head -n 1; cmake --version | head -n 1; echo ninja $(ninja --version); python3 -c "import numpy; print(\"numpy\", numpy.__version__)"' | paste -sd ';' -)"

# --- 2. what travels --------------------------------------------------------------------------
[ -d build/gpu-deps/debs ] || scripts/gpu-deps.sh
work=$root/work
rm -rf "$work"
mkdir -p "$work/kronex" "$work/out"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
  tar --null -T - -cf - | tar -xf - -C "$work/kronex"
mkdir -p "$work/kronex/build"
cp -a build/gpu-deps "$work/kronex/build/"
say "copied the working tree ($(du -sh "$work/kronex" --exclude=build | cut -f1)) and build/gpu-deps ($(du -sh build/gpu-deps | cut -f1))"

# --- 3. the check, with no network ------------------------------------------------------------
rc=0
unshare --mount --net -- bash -c '
  set -e
  root=$1
  mkdir -p "$root/usr/local/cuda" "$root/proc" "$root/dev"
  mount --bind /usr/local/cuda "$root/usr/local/cuda"
  mount -o remount,bind,ro "$root/usr/local/cuda"
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  exec chroot "$root" env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    OUT=/work/out KRONEX_GPU_CHECK_SIMULATION=1 KRONEX_GPU_CHECK_BUDGET="${KRONEX_GPU_CHECK_BUDGET:-5400}" \
    KRONEX_GPU_BUILD_LIMIT="${KRONEX_GPU_BUILD_LIMIT:-4800}" KRONEX_JOBS="${KRONEX_JOBS:-$(nproc)}" \
    bash /work/kronex/scripts/gpu-check.sh
' gpu-bare-sim "$root" || rc=$?
rm -rf "$out"
mkdir -p "$(dirname "$out")"
cp -a "$work/out" "$out"
say "gpu-check.sh exited $rc; logs and summary in $out"
exit "$rc"
