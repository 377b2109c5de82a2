// The triad bandwidth probe (kronex_bench/membw.hpp).
#include "kronex_bench/membw.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>

#ifdef _OPENMP
#define KRONEX_BENCH_PARALLEL_FOR _Pragma("omp parallel for num_threads(threads) schedule(static)")
#else
#define KRONEX_BENCH_PARALLEL_FOR
#endif

namespace kronex_bench {

double triad_bandwidth(std::size_t n, int reps, int threads) {
  threads = std::max(threads, 1);
  (void)threads;  // unused without OpenMP
  const std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
  const long count = long(n);
  KRONEX_BENCH_PARALLEL_FOR
  for (long i = 0; i < count; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double s = 0.5 + 1e-3 * r;
    KRONEX_BENCH_PARALLEL_FOR
    for (long i = 0; i < count; ++i) a[i] = b[i] + s * c[i];
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, t);
    // Keep the result observable so the loop is not removed.
    if (a[std::size_t(r) % n] < 0) b[0] += 1.0;
  }
  return 3.0 * sizeof(double) * double(n) / best;  // read b, c; write a (write-allocate not counted)
}

} // namespace kronex_bench
