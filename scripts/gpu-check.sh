#!/usr/bin/env bash
# The GPU check: one prepared run for a machine with an NVIDIA GPU (H100/H200, CUDA at
# /usr/local/cuda). It
#   1. installs build dependencies only if cmake, ninja or the xtensor headers are missing
#      (scripts/install-deps.sh; such machines may have no network, so a failure is reported and
#      the run goes on);
#   2. configures build/gpu: Release, CUDA on (sm_90), CPU device off, tests and benchmarks on;
#   3. builds the CUDA test binaries (the ctest tests labelled "cuda", i.e. the *_cuda targets)
#      and bench_device_solve_cuda, with all cores;
#   4. runs the CUDA tests (ctest -L cuda). A CUDA test exits 77 ("skipped") when it sees no GPU;
#      here that is a FAILURE of the check: on the GPU machine they must run;
#   5. runs the device benchmark (bench_device_solve_cuda; extra arguments from
#      $KRONEX_GPU_BENCH_ARGS, e.g. "--sizes 64,128");
#   5b. when the DSL is built (CLI11 and nlohmann-json present), runs `kronex-cuda bench` of a
#      256^3 mass-matrix solve on the host and the GPU (the command's CUDA path, end to end);
#   6. prints a summary last: the GPU's name (nvidia-smi), test counts, one row per benchmark case.
# Each phase runs under `timeout`; the phases' limits add up to at most $KRONEX_GPU_CHECK_BUDGET
# seconds (default 450: the whole run stays under 8 minutes). Logs go to $OUT/gpu-check if $OUT
# is set (the GPU machine returns what is written under $OUT), else build/gpu/logs.
# Exit status: 0 when everything built, every CUDA test passed (none skipped) and the benchmark
# ran with 0 transfers per solve and correct residuals; 1 otherwise.
# Knobs: KRONEX_JOBS (default: all cores), KRONEX_GPU_CHECK_BUDGET (seconds),
#        KRONEX_GPU_CUDA_ARCH (default 90), KRONEX_GPU_BENCH_ARGS.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
src=$PWD
build=$src/build/gpu
if [ -n "${OUT:-}" ]; then logs=$OUT/gpu-check; else logs=$build/logs; fi
mkdir -p "$logs"
logs=$(cd "$logs" && pwd)
jobs=${KRONEX_JOBS:-$(nproc)}
budget=${KRONEX_GPU_CHECK_BUDGET:-450}
arch=${KRONEX_GPU_CUDA_ARCH:-90}
bench_args=${KRONEX_GPU_BENCH_ARGS:-}
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
deps_status="present"
missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v ninja >/dev/null 2>&1 || missing+=(ninja)
have_xtensor=no
include_dirs=(/usr/include /usr/local/include)
IFS=: read -ra prefixes <<<"${CMAKE_PREFIX_PATH:-}"
for p in "${prefixes[@]}"; do include_dirs+=("$p/include"); done
for d in "${include_dirs[@]}"; do
  if [ -f "$d/xtensor/xtensor.hpp" ] || [ -f "$d/xtensor/containers/xtensor.hpp" ]; then have_xtensor=yes; fi
done
[ "$have_xtensor" = yes ] || missing+=(xtensor-headers)
if [ ${#missing[@]} -gt 0 ]; then
  run_phase "install dependencies (missing: ${missing[*]})" 60 "$logs/install-deps.log" scripts/install-deps.sh
  if [ "$phase_rc" -eq 0 ]; then deps_status="installed (${missing[*]})"
  else deps_status="install FAILED (exit $phase_rc; missing: ${missing[*]}), continuing"; fi
  say "dependencies: $deps_status"
fi
{
  echo "cmake: $(cmake --version 2>&1 | head -n 1)"
  echo "ninja: $(ninja --version 2>&1)"
  echo "c++: $(c++ --version 2>&1 | head -n 1)"
  echo "nvcc: $(nvcc --version 2>&1 | tail -n 2 | paste -sd ' ' -)"
} >"$logs/versions.log" 2>&1
cat "$logs/versions.log"

# --- 2. configure ------------------------------------------------------------------------------
configure_status="FAILED"
run_phase "configure build/gpu" 60 "$logs/configure.log" \
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DKRONEX_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc \
    -DKRONEX_ENABLE_DEVICE_CPU=OFF -DKRONEX_BUILD_TESTS=ON -DKRONEX_BUILD_BENCHMARKS=ON -DKRONEX_BUILD_EXAMPLES=OFF
[ "$phase_rc" -eq 0 ] && configure_status="ok"

# --- 3. build ----------------------------------------------------------------------------------
build_status="not run"
cuda_tests=()
cli_target=()
if [ "$configure_status" = ok ]; then
  # The CUDA tests are the *_cuda targets; ctest names each test after its target.
  mapfile -t cuda_tests < <(ctest --test-dir "$build" -N -L cuda 2>/dev/null | sed -n 's/^ *Test *#[0-9]*: *\([^ ]*\).*/\1/p')
  say "CUDA test targets: ${cuda_tests[*]:-none}"
  ninja -C "$build" -t targets all 2>/dev/null | grep -q '^kronex_cli_cuda:' && cli_target=(kronex_cli_cuda)
  run_phase "build (${#cuda_tests[@]} CUDA tests + bench_device_solve_cuda ${cli_target[*]}, -j$jobs)" 240 "$logs/build.log" \
    ninja -C "$build" -j "$jobs" "${cuda_tests[@]}" bench_device_solve_cuda "${cli_target[@]}"
  if [ "$phase_rc" -eq 0 ]; then build_status="ok"; else build_status="FAILED (exit $phase_rc)"; fi
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
  run_phase "bench_device_solve_cuda $bench_args" 120 "$logs/bench_device_solve_cuda.log" \
    "$build/benchmarks/bench_device_solve_cuda" $bench_args --csv "$bench_csv"
  case $phase_rc in
    0) bench_status="ok" ;;
    77) bench_status="FAILED: skipped (exit 77: no GPU visible)" ;;
    124 | 137) bench_status="FAILED: timed out" ;;
    125) bench_status="FAILED: not run (out of time)" ;;
    *) bench_status="FAILED (exit $phase_rc: transfers in the timed solves, a wrong residual, or an error; see the log)" ;;
  esac
fi

# --- 5b. the kronex command on the GPU ---------------------------------------------------------
cli_status="not run (the DSL is not built: CLI11 or nlohmann-json missing)"
if [ "$build_status" = ok ] && [ ${#cli_target[@]} -gt 0 ]; then
  run_phase "kronex-cuda bench" 60 "$logs/kronex-cuda-bench.log" \
    "$build/dsl/kronex-cuda" bench 'kron(mass(256, 3), mass(256, 3, periodic), mass(256, 3)).solve(random(1))' \
      --backend all --reps 10 --no-plan --json "$logs/kronex-cuda-bench.json"
  if [ "$phase_rc" -eq 0 ]; then cli_status="ok"; else cli_status="FAILED (exit $phase_rc)"; fi
fi

# --- 6. summary --------------------------------------------------------------------------------
{
  echo
  echo "================ kronex GPU check: summary ================"
  echo "GPU (nvidia-smi): $gpu_name"
  echo "dependencies:     $deps_status"
  echo "configure:        $configure_status"
  echo "build:            $build_status"
  echo "CUDA tests:       $tests_passed passed, $tests_failed failed, $tests_skipped skipped, of $tests_total: $tests_status"
  echo "benchmark:        $bench_status"
  echo "kronex-cuda:      $cli_status"
  if [ -s "$bench_csv" ]; then
    echo
    printf '%-9s %-7s %5s %10s %10s %10s %8s %10s %9s\n' boundary type n median_ms GDOF/s "GEMM TF/s" "vs GEMM" xfer/solve residual
    tail -n +2 "$bench_csv" | while IFS=, read -r _sys bc type n _unk _cms med _min gdofs _tf _gbs gemm ratio xfer resid _ok; do
      printf '%-9s %-7s %5s %10s %10s %10s %8s %10s %9s\n' "$bc" "$type" "$n" "$med" "$gdofs" "$gemm" "$ratio" "$xfer" "$resid"
    done
    grep '^target check' "$logs/bench_device_solve_cuda.log" || true
  fi
  if [ "$cli_status" = ok ]; then
    echo
    grep -A3 '^params' "$logs/kronex-cuda-bench.log"
  fi
  echo "logs: $logs   (total $((SECONDS - start))s)"
} | tee "$logs/summary.txt"

if [ "$configure_status" = ok ] && [ "$build_status" = ok ] && [ "$tests_status" = ok ] && [ "$bench_status" = ok ] &&
   { [ "$cli_status" = ok ] || [ ${#cli_target[@]} -eq 0 ]; }; then
  echo "gpu-check: PASSED"
  exit 0
fi
echo "gpu-check: FAILED"
exit 1
