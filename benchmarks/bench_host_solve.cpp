// Host 3D solve benchmark: kron of three degree-3 B-spline mass matrices, all clamped or all
// periodic, n = 64, 128, 192 (or the sizes given on the command line), double, one thread.
// Per case: median time over repeats after a warm-up, GDOF/s, GB/s (plan bytes / time) and the
// ratio to the 3-pass memory floor: 48 bytes per unknown (each pass reads and writes 8 bytes)
// at the STREAM-like triad bandwidth measured in this same run. GB/s is the traffic the plan
// states (its `bytes`: fused step pairs move the tensor once for two modes) over the time.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <kronex/kronex.hpp>

#include <kronex_bench/membw.hpp>
#include <kronex_bench/timing.hpp>

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

namespace {

double median_solve_seconds(kronex::host_operator<double, 3>& solver, const xt::xtensor<double, 3>& b,
                            xt::xtensor<double, 3>& x, int reps) {
  solver(b, x);  // warm-up: first touch of x and of the workspace
  const std::vector<double> t = kronex_bench::sorted_seconds(reps, [&] { solver(b, x); });
  return t[t.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::size_t(std::atoi(argv[i])));
  if (sizes.empty()) sizes = {64, 128, 192};
  const std::size_t p = 3;

  const double bw = kronex_bench::triad_bandwidth();
  std::printf("kronex host solve benchmark: kron(M, M, M) x = b, M = B-spline mass matrix of degree %zu, double, 1 thread, built with %s\n",
              p, KRONEX_BENCHMARK_FLAGS);
  std::printf("memory floor: triad bandwidth %.2f GB/s measured in this run; floor = 48 B/unknown / bandwidth\n\n", bw * 1e-9);
  std::printf("%-9s %5s %12s %10s %9s %9s %11s %12s\n", "boundary", "n", "unknowns", "time[ms]", "GDOF/s", "GB/s",
              "floor[ms]", "time/floor");
  for (const auto bc : {kronex::boundary::clamped, kronex::boundary::periodic}) {
    for (const std::size_t n : sizes) {
      const auto M = kronex::gallery::bspline_mass<double>(n, p, bc);
      xt::xtensor<double, 3> b = xt::xtensor<double, 3>::from_shape({n, n, n});
      std::mt19937_64 gen(n);
      std::uniform_real_distribution<double> u(-1, 1);
      for (auto& v : b) v = u(gen);
      xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape(b.shape());
      kronex::compile_options one_thread;  // as printed: the default would follow OMP_NUM_THREADS
      one_thread.threads = 1;
      auto solver = kronex::compile(kronex::kron(M, M, M).inverse(), b, one_thread);
      const int reps = n <= 64 ? 41 : (n <= 128 ? 15 : 7);
      const double t = median_solve_seconds(solver, b, x, reps);
      const double dof = double(b.size()), floor_s = 48.0 * dof / bw;
      std::printf("%-9s %5zu %12.0f %10.3f %9.3f %9.2f %11.3f %12.2f\n", kronex::to_string(bc), n, dof, t * 1e3,
                  dof / t * 1e-9, solver.plan().bytes() / t * 1e-9, floor_s * 1e3, t / floor_s);
    }
  }
  return 0;
}
