#!/usr/bin/env bash
# The whole test suite: install what is missing, then
#   1. Release build, every test (ctest): host, CPU-device, compile-fail; CUDA tests are built and
#      skipped (exit 77) unless a GPU is visible;
#   2. the install tree: install kronex, build and run a consumer project with find_package(kronex),
#      import the installed Python package;
#   3. AddressSanitizer + UndefinedBehaviorSanitizer build (-O0, line tables: a third of the
#      compile time of -O2 -g, all accesses kept; the UBSan checks on every access, null,
#      alignment and pointer-overflow, are left out: docs/architecture.md says why), every test;
#   4. the DSL's fuzz targets (clang libFuzzer + ASan), 20 s each from the seed corpora.
# Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${KRONEX_JOBS:-$(nproc)}
scripts/install-deps.sh

# The CUDA variants (runtime, *_cuda tests, benchmark) are compiled and linked whenever a CUDA
# toolkit is installed, even without a GPU: they must keep building. Their tests exit 77 (skipped)
# here and run for real with scripts/gpu-check.sh on a GPU machine.
cuda_flags=()
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
  [ -x /usr/local/cuda/bin/nvcc ] && export PATH=/usr/local/cuda/bin:$PATH
  cuda_flags=(-DKRONEX_ENABLE_CUDA=ON)
fi

# ccache (installed by install-deps.sh) keeps compiled objects between runs on one machine; paths
# are made relative to the checkout, so another clone of the same commit reuses them too.
cache_flags=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$PWD
  cache_flags=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

echo "== kronex: release build and tests"
cmake --preset release "${cuda_flags[@]}" "${cache_flags[@]}"
cmake --build --preset release -j "$jobs"
ctest --preset release -j "$jobs"

echo "== kronex: install tree and consumer project"
prefix=$PWD/build/install
rm -rf "$prefix" build/consumer
cmake --install build/release --prefix "$prefix"
cmake -S tests/install -B build/consumer -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release
cmake --build build/consumer -j "$jobs"
ctest --test-dir build/consumer --output-on-failure
# The installed Python package imports from the prefix alone and solves.
python_module=$(find "$prefix" -name '_kronex*.so' -print -quit)
if [ -n "$python_module" ]; then
  python_exe=$(sed -n 's/^KRONEX_PYTHON_EXECUTABLE:INTERNAL=//p' build/release/CMakeCache.txt)
  if [ -z "$python_exe" ]; then
    echo "kronex: the Python package was installed, but build/release/CMakeCache.txt names no Python for it" >&2
    exit 1
  fi
  (cd / && PYTHONPATH=$(dirname "$(dirname "$python_module")") "$python_exe" -c \
    "import numpy as np, kronex as kx; K = kx.kron(kx.gallery.bspline_mass(8, 3), np.eye(3) * 2); b = np.ones((8, 3)); assert np.allclose(K.apply(K.solve(b)), b)")
  # The installed CUDA module (where CUDA was built) loads: it finds the toolkit's libraries.
  if [ -n "$(find "$prefix" -name '_kronex_cuda*.so' -print -quit)" ]; then
    (cd / && PYTHONPATH=$(dirname "$(dirname "$python_module")") "$python_exe" -c \
      "import kronex._kronex_cuda as m; print('kronex: installed CUDA module loads; GPU visible:', m.available())")
  fi
fi
if [ -x "$prefix/bin/kronex" ]; then   # the installed command runs and finds its plot script
  "$prefix/bin/kronex" explain 'kron(mass(8, 3), laplacian(6)).solve(ones())' >/dev/null
  test -f "$prefix/share/kronex/kronex-plot.py"
fi

echo "== kronex: AddressSanitizer + UBSan build and tests"
cmake --preset asan "${cache_flags[@]}"
cmake --build --preset asan -j "$jobs"
ctest --preset asan -j "$jobs" --label-exclude compile_fail   # compile-fail tests ran above

echo "== kronex: fuzzing the DSL parser, the Matrix Market reader and the npy reader"
scripts/fuzz.sh "${KRONEX_FUZZ_SECONDS:-20}"
