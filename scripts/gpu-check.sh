#!/usr/bin/env bash
# The GPU check: one prepared run on a machine with an NVIDIA GPU (H100/H200, CUDA at
# /usr/local/cuda), made to work on the first call on a bare GPU machine: one with CUDA, a C++
# compiler, cmake, ninja and python3, but none of kronex's build dependencies and no network.
#
# How to run it with the device tool:
#   1. here, once (a Debian 12 machine with apt):   scripts/gpu-deps.sh
#      It writes build/gpu-deps (the .deb files of kronex's dependencies, about 20 MiB).
#   2. one call:   run(command="bash scripts/gpu-check.sh", carry=["build/gpu-deps"], timeout_s=540)
#      The folder build/gpu-deps must travel (it is git-ignored); nothing else is needed. The run
#      takes under 8 minutes (the phases share a 450 s budget); allow 540 s. Results come back
#      under $OUT/gpu-check: summary.txt first, then one log per phase and the benchmark's CSV.
#   3. rehearse it here first, without a GPU: scripts/gpu-bare-sim.sh (docs/backends.md).
#
# Phases:
#   1. dependencies: when build/gpu-deps is there (or $KRONEX_GPU_DEPS), unpacks its .debs with
#      dpkg-deb -x into a private prefix, build/gpu/prefix (never into /), links the LAPACK and
#      BLAS libraries where a plain install's alternatives would, and points CMake, the compiler
#      and the loader there (CMAKE_PREFIX_PATH, -isystem, LD_LIBRARY_PATH); it first checks that
#      the machine's glibc and libstdc++ are new enough for the carried libraries. Without the
#      folder, the system's packages are used (a Debian machine with scripts/install-deps.sh run);
#      nothing is ever installed;
#   2. configures build/gpu: Release, CUDA on (sm_90), CPU device and MPI off;
#   3. builds only the CUDA targets: the CUDA tests (the ctest tests labelled "cuda"),
#      bench_device_solve_cuda, bench_device_sum_solve_cuda and, with the DSL, kronex-cuda, with
#      all cores;
#   4. runs the CUDA tests (ctest -L cuda). A CUDA test exits 77 ("skipped") when it sees no GPU;
#      on the GPU machine that is a FAILURE of the check;
#   5. runs the device benchmark (bench_device_solve_cuda: 64^3 to 512^3, and 1024^3 where the
#      GPU's memory allows; per-step device times; extra arguments from $KRONEX_GPU_BENCH_ARGS);
#   5a. runs the operator-sum benchmark (bench_device_sum_solve_cuda: fast diagonalisation of the
#      3D B-spline Laplacian-like sum at 128^3, 256^3, 384^3, against its GEMMs alone);
#   5b. runs `kronex-cuda bench` of a 256^3 mass-matrix solve on the host and the GPU;
#   5c. where CuPy is installed: builds the Python package's CUDA module, runs
#      tests/python/test_cupy.py (CuPy and, where installed, PyTorch arrays) and
#      benchmarks/python/bench_python_overhead.py --device cuda; says so where CuPy is not;
#   6. prints a summary last: the GPU, test counts, one row per benchmark case, the targets.
# Each phase runs under `timeout`; the phases' limits add up to at most $KRONEX_GPU_CHECK_BUDGET
# seconds (default 450). Logs go to $OUT/gpu-check if $OUT is set, else build/gpu/logs.
# Exit status: 0 when everything built, every CUDA test passed (none skipped), both device
# benchmarks ran with 0 transfers per solve and correct residuals, and the CuPy tests passed
# where CuPy is installed; 1 otherwise. With
# KRONEX_GPU_CHECK_SIMULATION=1 (scripts/gpu-bare-sim.sh), a run that builds everything and stops
# only where a GPU is needed (exit 77, "no device") exits 0 and reports "ready".
# Knobs: KRONEX_JOBS (default: all cores), KRONEX_GPU_CHECK_BUDGET (seconds),
#        KRONEX_GPU_BUILD_LIMIT (seconds, default 240), KRONEX_GPU_CUDA_ARCH (default 90),
#        KRONEX_GPU_BENCH_ARGS, KRONEX_GPU_DEPS (the carried folder).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
src=$PWD
build=$src/build/gpu
if [ -n "${OUT:-}" ]; then logs=$OUT/gpu-check; else logs=$build/logs; fi
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
jobs=${KRONEX_JOBS:-$(nproc)}
budget=${KRONEX_GPU_CHECK_BUDGET:-450}
build_limit=${KRONEX_GPU_BUILD_LIMIT:-240}
arch=${KRONEX_GPU_CUDA_ARCH:-90}
bench_args=${KRONEX_GPU_BENCH_ARGS:-}
deps=${KRONEX_GPU_DEPS:-$src/build/gpu-deps}
simulation=${KRONEX_GPU_CHECK_SIMULATION:-0}
start=$SECONDS

export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

say() { echo "== gpu-check [$((SECONDS - start))s]: $*"; }

# The limit for a phase: its cap, or what is left of the budget if that is less (0: no time left).
limit() {
  local cap=$1 left=$((budget - (SECONDS - start)))
  if [ "$left" -lt "$cap" ]; then cap=$left; fi
  if [ "$cap" -lt 5 ]; then echo 0; else echo "$cap"; fi
}

# run_phase NAME CAP LOG CMD...: runs CMD under timeout, its output in LOG (and its tail on
# stdout), and sets phase_rc (124: timed out; 125: not run, out of time).
run_phase() {
  local name=$1 cap=$2 log=$3
  shift 3
  local t
  t=$(limit "$cap")
  if [ "$t" -eq 0 ]; then
    say "$name: not run, the ${budget}s budget is spent"
    phase_rc=125
    return
  fi
  say "$name (limit ${t}s, log $log)"
  timeout -k 10 "$t" "$@" >"$log" 2>&1
  phase_rc=$?
  tail -n 15 "$log"
  if [ "$phase_rc" -eq 124 ] || [ "$phase_rc" -eq 137 ]; then
    say "$name: TIMED OUT after ${t}s"
  else
    say "$name: exit status $phase_rc"
  fi
}

gpu_name="unknown (nvidia-smi not found)"
if command -v nvidia-smi >/dev/null 2>&1; then
  gpu_name=$(timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 4 | paste -sd ';' -)
  [ -n "$gpu_name" ] || gpu_name="none reported by nvidia-smi"
  timeout 20 nvidia-smi >"$logs/nvidia-smi.log" 2>&1
fi
say "GPU: $gpu_name; jobs: $jobs; logs: $logs"

# --- 1. dependencies ---------------------------------------------------------------------------
# A version of the form 2.34 or 3.4.29 as one comparable number.
version_number() { echo "$1" | awk -F. '{ printf "%d%03d%03d", $1, $2, $3 }'; }
# The newest symbol version of FAMILY (GLIBC, GLIBCXX) that the library at PATH provides.
provided_version() { strings "$2" 2>/dev/null | grep -E "^$1_[0-9]+(\.[0-9]+)*\$" | sed "s/^$1_//" | sort -V | tail -n 1; }

deps_status="system packages (no carried folder at $deps)"
cxx_flags=""
configure_extra=()
if [ -d "$deps/debs" ]; then
  prefix=$build/prefix
  rm -rf "$prefix"
  mkdir -p "$prefix"
  unpacked=0 failed=()
  for deb in "$deps"/debs/*.deb; do
    if command -v dpkg-deb >/dev/null 2>&1; then
      dpkg-deb -x "$deb" "$prefix" 2>>"$logs/deps.log" || failed+=("$(basename "$deb")")
    else  # no dpkg: a .deb is an ar archive holding data.tar.*
      (cd "$prefix" && ar p "$deb" "$(ar t "$deb" | grep '^data\.tar')" | tar -xa -f - 2>>"$logs/deps.log") ||
        failed+=("$(basename "$deb")")
    fi
    unpacked=$((unpacked + 1))
  done
  libdir=$prefix/usr/lib/x86_64-linux-gnu
  # What the LAPACK/BLAS alternatives would link on an installed system.
  for lib in lapack blas; do
    ln -sf "$lib/lib$lib.so.3" "$libdir/lib$lib.so.3"
    ln -sf "$lib/lib$lib.so" "$libdir/lib$lib.so"
  done
  # The carried libraries were built on Debian 12: glibc >= 2.34, libstdc++ >= GCC 11.
  glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ print $2 }')
  libstdcxx=$(c++ -print-file-name=libstdc++.so.6 2>/dev/null)
  glibcxx=$(provided_version GLIBCXX "$(readlink -f "$libstdcxx")")
  deps_note=""
  if [ -n "$glibc" ] && [ "$(version_number "$glibc")" -lt "$(version_number 2.34)" ]; then
    deps_note="; WARNING: glibc $glibc is older than the 2.34 the carried libraries need"
  fi
  if [ -n "$glibcxx" ] && [ "$(version_number "$glibcxx")" -lt "$(version_number 3.4.29)" ]; then
    deps_note="$deps_note; WARNING: libstdc++ provides GLIBCXX_$glibcxx, the carried Boost.Test needs 3.4.29"
  fi
  if [ ${#failed[@]} -gt 0 ]; then
    deps_status="unpack FAILED for ${failed[*]} (see deps.log)$deps_note"
  else
    deps_status="carried: $unpacked packages unpacked into $prefix (glibc ${glibc:-?}, GLIBCXX_${glibcxx:-?})$deps_note"
  fi
  export CMAKE_PREFIX_PATH=$prefix/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  export LD_LIBRARY_PATH=$libdir:$libdir/lapack:$libdir/blas:$LD_LIBRARY_PATH
  # lapack.h has no CMake package: the compiler finds it (and nothing else changes) this way.
  cxx_flags="-isystem $prefix/usr/include"
  configure_extra=(-DBoost_NO_SYSTEM_PATHS=ON -DBOOST_ROOT="$prefix/usr")
fi
say "dependencies: $deps_status"
{
  echo "dependencies: $deps_status"
  echo "cmake: $(cmake --version 2>&1 | head -n 1)"
  echo "ninja: $(ninja --version 2>&1)"
  echo "c++: $(c++ --version 2>&1 | head -n 1)"
  echo "nvcc: $(nvcc --version 2>&1 | tail -n 2 | paste -sd ' ' -)"
  echo "glibc: $(getconf GNU_LIBC_VERSION 2>&1)"
  echo "python3: $(python3 -c 'import sys, numpy; print(sys.version.split()[0], "numpy", numpy.__version__)' 2>&1 | tail -n 1)"
} >"$logs/versions.log" 2>&1
cat "$logs/versions.log"

# --- 2. configure ------------------------------------------------------------------------------
configure_status="FAILED"
run_phase "configure build/gpu" 90 "$logs/configure.log" \
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="$cxx_flags" \
    -DKRONEX_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DKRONEX_ENABLE_DEVICE_CPU=OFF -DKRONEX_ENABLE_MPI=OFF -DKRONEX_BUILD_TESTS=ON -DKRONEX_BUILD_BENCHMARKS=ON \
    -DKRONEX_BUILD_EXAMPLES=OFF "${configure_extra[@]}"
[ "$phase_rc" -eq 0 ] && configure_status="ok"

# --- 3. build ----------------------------------------------------------------------------------
build_status="not run"
cuda_tests=()
cli_target=()
if [ "$configure_status" = ok ]; then
  # The CUDA tests are the *_cuda targets; ctest names each test after its target.
  mapfile -t cuda_tests < <(ctest --test-dir "$build" -N -L cuda 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\).*/\1/p')
  say "CUDA test targets: ${cuda_tests[*]:-none}"
  # The list first, then grep: piped into grep -q, ninja could die of SIGPIPE and, with pipefail,
  # make the test fail although the target exists.
  all_targets=$(ninja -C "$build" -t targets all 2>/dev/null)
  grep -q '^kronex_cli_cuda:' <<<"$all_targets" && cli_target=(kronex_cli_cuda)
  run_phase "build (${#cuda_tests[@]} CUDA tests + bench_device_solve_cuda bench_device_sum_solve_cuda ${cli_target[*]}, -j$jobs)" \
    "$build_limit" "$logs/build.log" \
    ninja -C "$build" -j "$jobs" "${cuda_tests[@]}" bench_device_solve_cuda bench_device_sum_solve_cuda "${cli_target[@]}"
  if [ "$phase_rc" -eq 0 ]; then build_status="ok"; else build_status="FAILED (exit $phase_rc)"; fi
  # Which libraries the binaries load (the carried ones must come first).
  [ -x "$build/benchmarks/bench_device_solve_cuda" ] &&
    ldd "$build/benchmarks/bench_device_solve_cuda" >"$logs/ldd.log" 2>&1
  for t in "${cuda_tests[@]:0:1}"; do [ -x "$build/tests/$t" ] && ldd "$build/tests/$t" >>"$logs/ldd.log" 2>&1; done
  grep -E 'lapack|blas|boost|gfortran|cublas|cusparse|nvJitLink|cudart|not found' "$logs/ldd.log" 2>/dev/null | sort -u | sed 's/^/   /'
fi

# --- 4. CUDA tests -----------------------------------------------------------------------------
tests_passed=0 tests_failed=0 tests_skipped=0 tests_total=0
tests_status="not run"
if [ "$build_status" = ok ]; then
  run_phase "ctest -L cuda" 90 "$logs/ctest.log" \
    ctest --test-dir "$build" -L cuda --output-on-failure --no-tests=error --timeout 80
  ctest_rc=$phase_rc
  # One line per test: "1/1 Test #5: name ....   Passed    1.23 sec" (or ***Skipped, ***Failed...).
  tests_total=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$logs/ctest.log")
  tests_passed=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$logs/ctest.log" | grep -cE ' Passed ')
  tests_skipped=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+:' "$logs/ctest.log" | grep -c 'Skipped')
  tests_failed=$((tests_total - tests_passed - tests_skipped))
  if [ "$tests_total" -eq 0 ]; then
    tests_status="FAILED: no CUDA test ran (ctest exit $ctest_rc)"
  elif [ "$simulation" = 1 ] && [ "$tests_skipped" -eq "$tests_total" ]; then
    tests_status="ready (simulation: all built, all stopped at exit 77 for want of a GPU)"
  elif [ "$tests_skipped" -gt 0 ]; then
    tests_status="FAILED: $tests_skipped skipped (exit 77: no GPU visible to the tests); on the GPU machine they must run"
  elif [ "$tests_failed" -gt 0 ] || [ "$ctest_rc" -ne 0 ]; then
    tests_status="FAILED (ctest exit $ctest_rc)"
  else
    tests_status="ok"
  fi
  say "CUDA tests: $tests_status"
fi

# --- 5. benchmark ------------------------------------------------------------------------------
bench_status="not run"
bench_csv=$logs/bench_device_solve_cuda.csv
rm -f "$bench_csv"
if [ "$build_status" = ok ]; then
  # shellcheck disable=SC2086  # the arguments are meant to split
  run_phase "bench_device_solve_cuda $bench_args" 180 "$logs/bench_device_solve_cuda.log" \
    "$build/benchmarks/bench_device_solve_cuda" $bench_args --csv "$bench_csv"
  case $phase_rc in
    0) bench_status="ok" ;;
    77) if [ "$simulation" = 1 ]; then bench_status="ready (simulation: exit 77, no GPU)"
        else bench_status="FAILED: skipped (exit 77: no GPU visible)"; fi ;;
    124 | 137) bench_status="FAILED: timed out" ;;
    125) bench_status="FAILED: not run (out of time)" ;;
    *) bench_status="FAILED (exit $phase_rc: transfers in the timed solves, a wrong residual, or an error; see the log)" ;;
  esac
fi

# --- 5a. the operator-sum benchmark --------------------------------------------------------------
# Three sizes only, to stay inside the budget: its job here is the sum's device path on the GPU
# (0 transfers, the residual, the time against its own GEMMs), not a sweep.
sum_status="not run"
sum_csv=$logs/bench_device_sum_solve_cuda.csv
rm -f "$sum_csv"
if [ "$build_status" = ok ]; then
  run_phase "bench_device_sum_solve_cuda 128 256 384" 60 "$logs/bench_device_sum_solve_cuda.log" \
    "$build/benchmarks/bench_device_sum_solve_cuda" 128 256 384 --csv "$sum_csv"
  case $phase_rc in
    0) sum_status="ok" ;;
    77) if [ "$simulation" = 1 ]; then sum_status="ready (simulation: exit 77, no GPU)"
        else sum_status="FAILED: skipped (exit 77: no GPU visible)"; fi ;;
    124 | 137) sum_status="FAILED: timed out" ;;
    125) sum_status="FAILED: not run (out of time)" ;;
    *) sum_status="FAILED (exit $phase_rc: transfers in the solves, a wrong residual or GEMM reference; see the log)" ;;
  esac
fi

# --- 5b. the kronex command on the GPU ---------------------------------------------------------
cli_status="FAILED: not built (the DSL needs CLI11 and nlohmann-json)"
[ "$build_status" = ok ] || cli_status="not run"
if [ "$build_status" = ok ] && [ ${#cli_target[@]} -gt 0 ]; then
  run_phase "kronex-cuda bench" 60 "$logs/kronex-cuda-bench.log" \
    "$build/dsl/kronex-cuda" bench 'kron(mass(256, 3), mass(256, 3, periodic), mass(256, 3)).solve(random(1))' \
      --backend all --reps 10 --no-plan --json "$logs/kronex-cuda-bench.json"
  if [ "$phase_rc" -eq 0 ]; then
    cli_status="ok"
  elif [ "$simulation" = 1 ] && [ "$phase_rc" -eq 2 ] && grep -q 'no device is available' "$logs/kronex-cuda-bench.log"; then
    cli_status="ready (simulation: the host part ran, then \"no device is available\")"
  else
    cli_status="FAILED (exit $phase_rc)"
  fi
fi

# --- 5c. Python: CuPy arrays on the GPU ---------------------------------------------------------
# The kronex package's CUDA module on CuPy (and PyTorch, where installed) arrays: results, zero
# transfers per solve, in place, streams (tests/python/test_cupy.py). Only where CuPy is installed.
python_status="not run"
rm -f "$logs/python-overhead.log"
if [ "$configure_status" = ok ]; then
  if ! python3 -c 'import cupy' >/dev/null 2>&1; then
    python_status="not run: CuPy is not installed here (python3 -c 'import cupy' fails)"
  elif ! grep -q '^kronex_python_device_cuda:' <<<"$all_targets"; then
    python_status="FAILED: the Python package was not configured (python3 development headers, NumPy, pybind11, DLPack; see configure.log)"
  else
    run_phase "python: build kronex_python kronex_python_device_cuda" 150 "$logs/python-build.log" \
      ninja -C "$build" -j "$jobs" kronex_python kronex_python_device_cuda
    if [ "$phase_rc" -ne 0 ]; then
      python_status="FAILED: build (exit $phase_rc)"
    else
      run_phase "python: pytest test_cupy.py" 90 "$logs/python.log" \
        env PYTHONPATH="$build/python" KRONEX_TEST_CUPY=1 python3 -m pytest -q -p no:cacheprovider -rs \
          "$src/tests/python/test_cupy.py"
      if [ "$phase_rc" -eq 0 ]; then python_status="ok: $(grep -E '[0-9]+ passed' "$logs/python.log" | tail -n 1)"
      else python_status="FAILED (exit $phase_rc)"; fi
      # What a call costs from Python on CuPy arrays, against the same plan's C++ loop.
      run_phase "python: bench_python_overhead --device cuda" 45 "$logs/python-overhead.log" \
        env PYTHONPATH="$build/python" python3 "$src/benchmarks/python/bench_python_overhead.py" --device cuda \
          --sizes 16 64 128 256 --rounds 3
      [ "$phase_rc" -eq 0 ] || python_status="$python_status; the overhead benchmark failed (exit $phase_rc)"
    fi
  fi
fi

# --- 6. summary --------------------------------------------------------------------------------
{
  echo
  echo "================ kronex GPU check: summary ================"
  [ "$simulation" = 1 ] && echo "SIMULATION (no GPU): 'ready' = built, and stopped only where a GPU is needed"
  echo "GPU (nvidia-smi): $gpu_name"
  echo "dependencies:     $deps_status"
  echo "configure:        $configure_status"
  echo "build:            $build_status"
  echo "CUDA tests:       $tests_passed passed, $tests_failed failed, $tests_skipped skipped, of $tests_total: $tests_status"
  echo "benchmark:        $bench_status"
  echo "sum benchmark:    $sum_status"
  echo "kronex-cuda:      $cli_status"
  echo "python (CuPy):    $python_status"
  if [ -s "$bench_csv" ]; then
    echo
    printf '%-9s %-7s %5s %10s %10s %10s %8s %10s %9s\n' boundary type n median_ms GDOF/s "GEMM TF/s" "vs GEMM" xfer/solve residual
    tail -n +2 "$bench_csv" | while IFS=, read -r _sys bc type n _unk _cms med _min gdofs _tf _gbs gemm ratio xfer resid _ok; do
      printf '%-9s %-7s %5s %10s %10s %10s %8s %10s %9s\n' "$bc" "$type" "$n" "$med" "$gdofs" "$gemm" "$ratio" "$xfer" "$resid"
    done
    echo
    echo "256^3 double, step by step (device timer per step, against the same GEMM alone):"
    awk '/^(clamped|periodic) +double +256\^3/ { show = 1; print; next } /^    step/ && show { print; next } { show = 0 }' \
      "$logs/bench_device_solve_cuda.log"
    grep '^target check' "$logs/bench_device_solve_cuda.log" || true
  fi
  if [ -s "$sum_csv" ]; then
    echo
    echo "operator sum (fast diagonalisation), double; t/gemm = solve time / its 6 mode products by the GEMMs alone:"
    printf '%5s %10s %10s %10s %8s %8s %10s %9s\n' n solve_ms GDOF/s GFLOP/s t/floor t/gemm xfer/solve residual
    tail -n +2 "$sum_csv" | while IFS=, read -r _sys n _unk _setup solve gdofs gflops _gbs _floor vs_floor _gemm vs_gemm _xf xfer resid _ok; do
      printf '%5s %10s %10s %10s %8s %8s %10s %9s\n' "$n" "$solve" "$gdofs" "$gflops" "$vs_floor" "$vs_gemm" "$xfer" "$resid"
    done
  fi
  if [ "$cli_status" = ok ]; then
    echo
    grep -A3 '^params' "$logs/kronex-cuda-bench.log"
  fi
  if [ -s "$logs/python-overhead.log" ]; then
    echo
    echo "Python calls on CuPy arrays (op(b, out=x) from Python against the plan's own C++ loop):"
    cat "$logs/python-overhead.log"
  fi
  echo "logs: $logs   (total $((SECONDS - start))s)"
} | tee "$logs/summary.txt"

good() { [ "$1" = ok ] || { [ "$simulation" = 1 ] && [ "${1#ready}" != "$1" ]; }; }
if [ "$configure_status" = ok ] && [ "$build_status" = ok ] && good "$tests_status" && good "$bench_status" &&
   good "$sum_status" && good "$cli_status" && [ "${python_status#FAILED}" = "$python_status" ]; then
  if [ "$simulation" = 1 ]; then echo "gpu-check: READY (simulation: everything built; the GPU parts need a GPU)"
  else echo "gpu-check: PASSED"; fi
  exit 0
fi
echo "gpu-check: FAILED"
exit 1
