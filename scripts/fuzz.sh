#!/usr/bin/env bash
# Builds the DSL fuzz targets with clang (libFuzzer + ASan + UBSan) and runs each for a bounded
# time, starting from the seed corpora in dsl/fuzz/corpus/ (new inputs go to build/fuzz, never
# into the repository). Exits non-zero if a target crashes; the crashing input is saved as
# build/fuzz/crash-* for a regression test. Usage: scripts/fuzz.sh [SECONDS per target, default 30]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
cmake -S dsl/fuzz -B build/fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j "${KRONEX_JOBS:-$(nproc)}"
for target in parser mtx npy; do
  scratch=build/fuzz/corpus-$target
  mkdir -p "$scratch"
  echo "== fuzzing the $target for ${seconds}s"
  (cd build/fuzz && ./${target}_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
     -print_final_stats=1 "corpus-$target" "../../dsl/fuzz/corpus/$target" 2>&1 | tail -12)
  # libFuzzer exits non-zero on a crash; `tail` hides that, so check the artefacts too.
  if compgen -G "build/fuzz/crash-*" >/dev/null || compgen -G "build/fuzz/timeout-*" >/dev/null || \
     compgen -G "build/fuzz/leak-*" >/dev/null; then
    echo "fuzzing found a failure: $(ls build/fuzz/crash-* build/fuzz/timeout-* build/fuzz/leak-* 2>/dev/null)"
    exit 1
  fi
done
