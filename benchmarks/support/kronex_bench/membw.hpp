#pragma once
// The memory-bandwidth floor that kronex benchmarks are measured against: a STREAM-like triad
// (a = b + s*c over arrays far larger than the caches), best of several runs, in bytes/s, measured
// in the same process as the benchmark so noisy shared machines compare like with like.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace kronex_bench {

inline double triad_bandwidth(std::size_t n = std::size_t(1) << 25, int reps = 7) {
  std::vector<double> a(n, 0.0), b(n, 1.0), c(n, 2.0);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double s = 0.5 + 1e-3 * r;
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, t);
    // Keep the result observable so the loop is not removed.
    if (a[r % n] < 0) b[0] += 1.0;
  }
  return 3.0 * sizeof(double) * double(n) / best;  // read b, c; write a (write-allocate not counted)
}

} // namespace kronex_bench
