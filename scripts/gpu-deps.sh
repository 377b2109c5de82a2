#!/usr/bin/env bash
# Prepares what the GPU check carries to a bare GPU machine: the Debian 12 (amd64) packages that
# kronex's CUDA targets build on, as .deb files in one git-ignored folder. Run it here (a Debian 12
# machine whose apt can download); scripts/gpu-check.sh unpacks the folder on the GPU machine
# into a private prefix (dpkg-deb -x, never into /) and builds against it.
#
#   scripts/gpu-deps.sh [DIR]      DIR defaults to build/gpu-deps; the .debs go to DIR/debs,
#                                  their list (package, version, bytes) to DIR/MANIFEST
#
# The set is what the CUDA tests, the CUDA benchmarks and kronex-cuda need, and nothing more:
#   xtensor, xtl, xsimd        the library's headers (xsimd: xtensor's optional SIMD headers, small)
#   xtensor-blas               the dense reference every test checks against
#   liblapack3, libblas3 (+ their -dev .so links), libgfortran5, libquadmath0
#                              the host LAPACK that factors the 1D matrices (reference LAPACK:
#                              small; the device inverses are computed once, at compile time)
#   liblapacke-dev             for lapack.h only (kronex declares LAPACK through it)
#   libboost1.74-dev (headers), libboost-test1.74-dev, libboost-test1.74.0
#                              Boost.Test for the test programs; the headers are the largest piece
#   libcli11-dev, nlohmann-json3-dev
#                              the kronex command (kronex-cuda); nlohmann-json for the Python package too
#   pybind11-dev, libdlpack-dev
#                              the Python package's CUDA module (header-only), built where CuPy is
# Not carried: MPI (the GPU check builds no MPI target), Thrust/CUB (CUDA brings CCCL), OpenMP and
# OpenBLAS (the CPU device is not built there), Python and its packages (the image has NumPy; its
# own python3 development headers must match it, so they cannot be carried).
#
# The carried libraries need glibc >= 2.34 and libstdc++ >= GCC 11 (GLIBCXX_3.4.29) on the GPU
# machine; gpu-check.sh checks both before it builds.
#
# Exit status: 0 when every package was downloaded and the folder is within the size limit
# (KRONEX_GPU_DEPS_LIMIT_MIB, default 40); 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build/gpu-deps}
limit_mib=${KRONEX_GPU_DEPS_LIMIT_MIB:-40}
packages=(libxtensor-dev xtl-dev libxsimd-dev libxtensor-blas-dev
          liblapack3 liblapack-dev libblas3 libblas-dev libgfortran5 libquadmath0 liblapacke-dev
          libboost1.74-dev libboost-test1.74-dev libboost-test1.74.0
          libcli11-dev nlohmann-json3-dev pybind11-dev libdlpack-dev)

if [ "$(dpkg --print-architecture 2>/dev/null)" != amd64 ]; then
  echo "gpu-deps: this must run on an amd64 Debian 12 machine (the GPU machine is x86-64)" >&2
  exit 1
fi
. /etc/os-release
if [ "${VERSION_CODENAME:-}" != bookworm ]; then
  echo "gpu-deps: warning: this is ${PRETTY_NAME:-an unknown system}, not Debian 12 (bookworm): the packages are its own" >&2
fi

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/debs.new"
mkdir -p "$dir/debs.new"
# apt downloads as the unprivileged _apt user when it can write there; otherwise it warns and
# downloads as root. A world-writable staging folder avoids the warning.
chmod 777 "$dir/debs.new"
if ! (cd "$dir/debs.new" && apt-get download -q "${packages[@]}"); then
  echo "gpu-deps: apt-get download failed; run 'apt-get update' first (as root), then again" >&2
  rm -rf "$dir/debs.new"
  exit 1
fi
chmod 755 "$dir/debs.new"
rm -rf "$dir/debs"
mv "$dir/debs.new" "$dir/debs"

{
  echo "# kronex GPU-check dependencies: Debian packages for scripts/gpu-check.sh (made by scripts/gpu-deps.sh)"
  for deb in "$dir"/debs/*.deb; do
    printf '%s %s %s\n' "$(dpkg-deb -f "$deb" Package)" "$(dpkg-deb -f "$deb" Version)" "$(stat -c %s "$deb")"
  done
} >"$dir/MANIFEST"

count=$(find "$dir/debs" -name '*.deb' | wc -l)
bytes=$(du -sb "$dir" | cut -f1)
mib=$(((bytes + 1048575) / 1048576))
echo "gpu-deps: $count packages in $dir ($mib MiB; limit $limit_mib MiB)"
if [ "$count" -ne ${#packages[@]} ]; then
  echo "gpu-deps: expected ${#packages[@]} packages, got $count" >&2
  exit 1
fi
if [ "$bytes" -gt $((limit_mib * 1048576)) ]; then
  echo "gpu-deps: $dir is over the $limit_mib MiB limit" >&2
  exit 1
fi
echo "gpu-deps: carry '${dir#"$PWD"/}' to the GPU machine with the working tree (see scripts/gpu-check.sh)"
