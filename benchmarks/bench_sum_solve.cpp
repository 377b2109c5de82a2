// Host 3D operator-sum solve benchmark: L x = b with
//   L = kron(K, M, M) + kron(M, K, M) + kron(M, M, K) + sigma kron(M, M, M),
// K and M the clamped B-spline stiffness and mass matrices of degree p (3 unless --degree),
// sigma = 1e-2, double, one thread (BLAS too), solved by fast diagonalisation:
// kronex::compile(L.inverse(), b) solves the three generalised eigenproblems once; each solve is
// three mode-wise products with V^T, the eigenvalue scaling and three with V.
// Sizes n = 32, 48, 64, 96, 128, 192, or those given on the command line.
//
// Per size: the set-up (the compile, timed once), the solve's median time over repeats after a
// warm-up, GDOF/s, GB/s (plan bytes / time) and two ratios measured in this same run:
//   time/floor  against the memory floor: the plan's bytes at the STREAM-like triad bandwidth;
//   time/gemm   against the plan's GEMMs alone: the six mode-wise products of an n^3 tensor with
//               a dense n x n matrix done by plain cblas_dgemm calls (mode 0: one n x n^2 GEMM;
//               mode 1: n GEMMs of n x n; mode 2: one n^2 x n GEMM), median of as many repeats.
// The solve is compute-bound (12 n^4 flops against 16 passes over the tensor), so time/floor
// grows like n; time/gemm is the ratio that says how well the transforms run.
// "xform" is the time of the same six products done by kronex itself (two applies of a dense
// kron(A, A, A): the transforms' kernels without the scaling), to show where the solve's time
// goes. The GEMM sequence is checked once per size against kronex's apply, and the residual
// |L x - b| / |b| of the timed solve (L applied by kronex::compile(L, b)) is printed.
//
// Exit status: 0 ok; 1 a residual above 1e-8 or a wrong GEMM reference; 2 bad command line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <kronex/kronex.hpp>

#include <kronex_bench/membw.hpp>

#include "gemm_mode_products.hpp"
#include "sum_bench.hpp"

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

namespace {

using namespace kronex_bench::sum;

// Median time of f() after one untimed call.
template <class F>
double median_seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  const int reps = repeats_for(elapsed(t0));
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(elapsed(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct row {
  std::size_t n = 0;
  double setup_s = 0, solve_s = 0, bytes = 0, flops = 0, floor_s = 0, gemm_s = 0, xform_s = 0, residual = 0;
};

void write(csv_file& csv, const row& r) {
  const double dof = double(r.n * r.n * r.n);
  csv.row("%zu,%.0f,%.4f,%.4f,%.5g,%.5g,%.5g,%.4f,%.4f,%.4f,%.4f,%.4f,%.3g\n", r.n, dof, r.setup_s * 1e3,
          r.solve_s * 1e3, dof / r.solve_s * 1e-9, r.flops / r.solve_s * 1e-9, r.bytes / r.solve_s * 1e-9,
          r.floor_s * 1e3, r.solve_s / r.floor_s, r.gemm_s * 1e3, r.solve_s / r.gemm_s, r.xform_s * 1e3, r.residual);
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  kronex_bench::blas_single_thread();  // the solve is single-threaded: so are its GEMM reference and set-up
  const double bw = kronex_bench::triad_bandwidth();
  std::printf("kronex host operator-sum solve benchmark: (kron(K,M,M) + kron(M,K,M) + kron(M,M,K) + %g kron(M,M,M)) x = b,\n"
              "K, M = clamped B-spline stiffness and mass of degree %zu, fast diagonalisation, double, 1 thread, built with %s, "
              "%s\n",
              sigma, o.degree, KRONEX_BENCHMARK_FLAGS, kronex_bench::blas_name());
  std::printf("set-up: the compile (3 generalised eigenproblems); solve: median after a warm-up\n"
              "memory floor: triad bandwidth %.2f GB/s measured in this run; floor = the plan's bytes / bandwidth\n"
              "gemm: the plan's 6 mode-wise products of the n^3 tensor with a dense n x n matrix by cblas_dgemm alone "
              "(no scaling), measured in this run\n"
              "xform: the same 6 products by kronex's own kernels (2 applies of a dense kron(A,A,A))\n\n",
              bw * 1e-9);
  std::printf("%5s %10s %10s %10s %8s %8s %8s %10s %8s %10s %8s %10s %9s\n", "n", "unknowns", "setup[ms]", "solve[ms]",
              "GDOF/s", "GFLOP/s", "GB/s", "floor[ms]", "t/floor", "gemm[ms]", "t/gemm", "xform[ms]", "residual");
  csv_file csv(o.csv, "bench_sum_solve",
               "n,unknowns,setup_ms,solve_ms,gdof_s,gflop_s,gb_s,floor_ms,vs_floor,gemm_ms,vs_gemm,xform_ms,residual");
  bool ok = true;
  for (const std::size_t n : o.sizes) {
    const problem p(n, o.degree);
    const auto L = p.L();
    std::mt19937_64 gen(n);
    const xt::xtensor<double, 3> b = random_rhs(n, gen);
    xt::xtensor<double, 3> x = xt::xtensor<double, 3>::from_shape(b.shape());

    row r;
    r.n = n;
    auto t0 = std::chrono::steady_clock::now();
    kronex::compile_options one_thread;  // as printed: the default would follow OMP_NUM_THREADS
    one_thread.threads = 1;
    auto solver = kronex::compile(L.inverse(), b, one_thread);
    r.setup_s = elapsed(t0);
    if (o.plan) std::printf("%s", kronex::to_string(solver.plan()).c_str());
    r.solve_s = median_seconds([&] { solver(b, x); });
    r.bytes = solver.plan().bytes();
    r.flops = solver.plan().flops();
    r.floor_s = r.bytes / bw;

    {  // The residual of the timed solve's result.
      auto apply = kronex::compile(L, b);
      xt::xtensor<double, 3> lx = xt::xtensor<double, 3>::from_shape(b.shape());
      apply(x, lx);
      r.residual = rel_diff(lx, b);
    }

    // The GEMM reference, on a random A scaled to keep the entries O(1), and the same six products
    // by kronex. Checked once: the GEMMs must give (A A^T) ⊗ (A A^T) ⊗ (A A^T) applied to b.
    const xt::xtensor<double, 2> a = random_matrix(n, gen);
    xt::xtensor<double, 3> tmp = xt::xtensor<double, 3>::from_shape(b.shape());
    xt::xtensor<double, 3> y = xt::xtensor<double, 3>::from_shape(b.shape());
    kronex_bench::gemm_solve_transforms(n, a.data(), b.data(), tmp.data(), y.data());
    xt::xtensor<double, 2> aat = xt::xtensor<double, 2>::from_shape({n, n});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::size_t k = 0; k < n; ++k) s += a(i, k) * a(j, k);
        aat(i, j) = s;
      }
    const double gemm_err = rel_diff(y, kronex::compile(kronex::kron(aat, aat, aat), b)(b));
    r.gemm_s = median_seconds([&] { kronex_bench::gemm_solve_transforms(n, a.data(), b.data(), tmp.data(), y.data()); });
    xt::xtensor<double, 2> at = xt::xtensor<double, 2>::from_shape({n, n});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) at(i, j) = a(j, i);
    auto forward = kronex::compile(kronex::kron(at, at, at), b, one_thread);
    auto backward = kronex::compile(kronex::kron(a, a, a), b, one_thread);
    r.xform_s = median_seconds([&] {
      forward(b, y);
      backward(y, y);
    });

    const double dof = double(n * n * n);
    std::printf("%5zu %10.0f %10.2f %10.3f %8.4f %8.2f %8.2f %10.3f %8.1f %10.3f %8.2f %10.3f %9.2e\n", n, dof,
                r.setup_s * 1e3, r.solve_s * 1e3, dof / r.solve_s * 1e-9, r.flops / r.solve_s * 1e-9,
                r.bytes / r.solve_s * 1e-9, r.floor_s * 1e3, r.solve_s / r.floor_s, r.gemm_s * 1e3, r.solve_s / r.gemm_s,
                r.xform_s * 1e3, r.residual);
    std::fflush(stdout);
    write(csv, r);
    if (!(r.residual <= max_residual)) {
      std::fprintf(stderr, "bench_sum_solve: n = %zu: residual %.3g is above %.0e: the solve is wrong\n", n, r.residual,
                   max_residual);
      ok = false;
    }
    if (!(gemm_err <= 1e-12)) {
      std::fprintf(stderr, "bench_sum_solve: n = %zu: the GEMM reference differs from kronex's apply by %.3g\n", n, gemm_err);
      ok = false;
    }
  }
  return ok ? 0 : 1;
}
