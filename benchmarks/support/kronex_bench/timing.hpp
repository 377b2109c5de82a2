#pragma once
// The host benchmarks' timing loop: `reps` calls of f, each timed with the steady clock, sorted
// (median at size/2, minimum first).
#include <algorithm>
#include <chrono>
#include <vector>

namespace kronex_bench {

template <class F>
std::vector<double> sorted_seconds(int reps, F&& f) {
  std::vector<double> t;
  t.reserve(std::size_t(std::max(reps, 0)));
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t;
}

} // namespace kronex_bench
