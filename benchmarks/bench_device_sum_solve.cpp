// Device 3D operator-sum solve benchmark: the problem of bench_sum_solve on the device,
//   L = kron(K, M, M) + kron(M, K, M) + kron(M, M, K) + sigma kron(M, M, M),
// K and M the clamped B-spline stiffness and mass matrices of degree p (3 unless --degree),
// sigma = 1e-2, double, b uploaded once to a device_tensor, solved by fast diagonalisation:
// kronex::compile(L.inverse(), b) solves the three generalised eigenproblems on the host and
// uploads V and V^T per axis and the eigenvalues once; each solve is three mode-wise GEMMs with
// V^T, the eigenvalue scaling (a device kernel) and three with V. Sizes n = 32, 48, 64, 96, 128,
// 192, or those given on the command line. The same source builds twice:
// bench_device_sum_solve (the CPU device: Thrust with OpenMP, host BLAS) and
// bench_device_sum_solve_cuda (CUDA, cuBLAS).
//
// Per size: the set-up (the compile, timed once), then one warm-up solve, then R solves each
// timed with the device timer (CUDA events, or the steady clock on the CPU device; R from the
// warm-up's time: about a second, 5 to 41), median. The row gives GDOF/s, GFLOP/s (plan flops),
// GB/s (plan bytes / time) and two ratios measured in this same run:
//   time/floor  against the memory floor: the plan's bytes at the device's copy bandwidth
//               (kronex_bench::device_copy_bandwidth, a device-to-device copy);
//   time/gemm   against the plan's GEMMs alone: the six mode-wise products of an n^3 device
//               tensor with a dense n x n device matrix by the runtime's own GEMMs (mode 0: one
//               gemm; mode 1: a strided-batched gemm over n slices; mode 2: one gemm), median of
//               R. Fast diagonalisation is compute-bound, so this is the ratio that counts.
// "xform" is the same six products by kronex itself (two device applies of a dense kron(A, A, A)),
// and the GEMM sequence is checked once per size against them (downloaded outside the timing).
// Host<->device transfers are counted around the warm-up and timed solves and must be 0; the
// residual |L x - b| / |b| of the timed solve (L applied on the device by kronex::compile(L, b))
// shows the times belong to a correct solve.
//
// Exit status: 0 ok; 1 a transfer during the solves, a residual above 1e-8 or a wrong GEMM
// reference; 2 bad command line; 77 no device visible (CUDA build on a machine without a GPU).
#include <chrono>
#include <cstdio>
#include <random>
#include <string>

#include <kronex/device.hpp>

#include <kronex_bench/device_membw.hpp>

#include "device_bench.hpp"
#include "sum_bench.hpp"

namespace {

namespace dev = kronex::detail::device;
using namespace kronex_bench::sum;

// y = (A ⊗ A ⊗ A)(A^T ⊗ A^T ⊗ A^T) x on C-order n^3 device tensors, A an n x n C-order device
// matrix: the six products of one solve, alternating between y and tmp (no copies), with the
// shapes of benchmarks/gemm_mode_products.cpp. The runtime's GEMMs are column-major, where a
// C-order matrix reads as its transpose (a is A^T there). In each mode, t = 'T' applies A^T and
// t = 'N' applies A. x may not alias y or tmp.
void gemm_solve_transforms(dev::context& ctx, long n, const double* a, const double* x, double* tmp, double* y) {
  using blas = dev::blas<double>;
  const long n2 = n * n;
  // Mode 0: dst (n x n^2) = op(A) src, i.e. dst^T = src^T op(A)^T: one gemm.
  const auto mode0 = [&](char t, const double* src, double* dst) {
    blas::gemm(ctx, 'N', t, n2, n, n, src, n2, a, n, dst, n2);
  };
  // Mode 1: the same on each of the n slices of n x n: one strided-batched gemm.
  const auto mode1 = [&](char t, const double* src, double* dst) {
    blas::gemm_strided_batched(ctx, 'N', t, n, n, n, src, n, n2, a, n, 0, dst, n, n2, n);
  };
  // Mode 2: dst (n^2 x n) = src op(A)^T, i.e. dst^T = op(A) src^T: one gemm.
  const auto mode2 = [&](char t, const double* src, double* dst) {
    blas::gemm(ctx, t == 'N' ? 'T' : 'N', 'N', n, n2, n, a, n, src, n, dst, n);
  };
  mode0('T', x, tmp);
  mode1('T', tmp, y);
  mode2('T', y, tmp);
  mode0('N', tmp, y);
  mode1('N', y, tmp);
  mode2('N', tmp, y);
}

struct row {
  std::size_t n = 0;
  double setup_s = 0, solve_s = 0, bytes = 0, flops = 0, floor_s = 0, gemm_s = 0, xform_s = 0, residual = 0;
  double transfers = 0;  // per solve
};

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  std::printf("kronex device operator-sum solve benchmark: (kron(K,M,M) + kron(M,K,M) + kron(M,M,K) + %g kron(M,M,M)) x = b,\n"
              "K, M = clamped B-spline stiffness and mass of degree %zu, fast diagonalisation, double\n",
              sigma, o.degree);
  if (!dev::available()) {
    std::printf("no %s device is visible to this process: nothing to measure (exit 77)\n", dev::system_name());
    std::fflush(stdout);
    std::fprintf(stderr, "bench_device_sum_solve: no %s device visible: skipped\n", dev::system_name());
    return 77;
  }
  kronex_bench::print_device_system();
  dev::context& ctx = *dev::default_context();  // every plan's, the GEMMs' and the timer's stream
  const double bw = kronex_bench::device_copy_bandwidth();
  std::printf("set-up: the compile (3 generalised eigenproblems on the host, uploads); solve: device timer, median "
              "of R after a warm-up\n"
              "memory floor: device copy bandwidth %.2f GB/s measured in this run; floor = the plan's bytes / bandwidth\n"
              "gemm: the plan's 6 mode-wise products of the n^3 tensor with a dense n x n matrix by the runtime's GEMMs "
              "alone (no scaling), measured in this run\n"
              "xform: the same 6 products by kronex (2 device applies of a dense kron(A,A,A))\n"
              "xfer: host<->device copies during the warm-up and timed solves (must be 0)\n\n",
              bw * 1e-9);
  std::printf("%5s %10s %10s %10s %8s %8s %8s %10s %8s %10s %8s %10s %5s %9s\n", "n", "unknowns", "setup[ms]",
              "solve[ms]", "GDOF/s", "GFLOP/s", "GB/s", "floor[ms]", "t/floor", "gemm[ms]", "t/gemm", "xform[ms]",
              "xfer", "residual");
  csv_file csv(o.csv, "bench_device_sum_solve",
               "system,n,unknowns,setup_ms,solve_ms,gdof_s,gflop_s,gb_s,floor_ms,vs_floor,gemm_ms,vs_gemm,xform_ms,"
               "transfers_per_solve,residual,ok");
  bool all_ok = true;
  for (const std::size_t n : o.sizes) {
    const problem p(n, o.degree);
    const auto L = p.L();
    std::mt19937_64 gen(n);
    const xt::xtensor<double, 3> b = random_rhs(n, gen);
    const kronex::device_tensor<double, 3> bd(b);
    kronex::device_tensor<double, 3> xd(bd.shape()), tmp(bd.shape()), y(bd.shape());

    row r;
    r.n = n;
    auto t0 = std::chrono::steady_clock::now();
    auto solver = kronex::compile(L.inverse(), bd);
    ctx.synchronize();
    r.setup_s = elapsed(t0);
    if (o.plan) std::printf("%s", kronex::to_string(solver.plan()).c_str());
    r.bytes = solver.plan().bytes();
    r.flops = solver.plan().flops();
    r.floor_s = r.bytes / bw;

    // The warm-up sets R; transfers are counted over it and the timed solves.
    const auto before = kronex::transfers();
    const int reps = repeats_for(kronex_bench::time_device(ctx, 0, 1, [&] { solver(bd, xd); }).median);
    r.solve_s = kronex_bench::time_device(ctx, 0, reps, [&] { solver(bd, xd); }).median;
    const std::size_t transfers = (kronex::transfers() - before).calls();
    r.transfers = double(transfers) / double(reps + 1);

    {  // The residual of the timed solve's result, L applied on the device, one download.
      auto apply = kronex::compile(L, bd);
      apply(xd, tmp);
      r.residual = rel_diff(tmp.to_host(), b);
    }

    // The GEMM reference, and the same six products by kronex; checked once against each other.
    const xt::xtensor<double, 2> a = random_matrix(n, gen);
    const xt::xtensor<double, 2> at = xt::transpose(a);
    const kronex::device_tensor<double, 2> ad(a);
    const auto gemms = [&] { gemm_solve_transforms(ctx, long(n), ad.data(), bd.data(), tmp.data(), y.data()); };
    auto forward = kronex::compile(kronex::kron(at, at, at), bd);
    auto backward = kronex::compile(kronex::kron(a, a, a), bd);
    const auto xforms = [&] {
      forward(bd, tmp);
      backward(tmp, xd);  // xd is free: its residual is computed
    };
    gemms();
    xforms();
    ctx.synchronize();
    const double gemm_err = rel_diff(y.to_host(), xd.to_host());
    r.gemm_s = kronex_bench::time_device(ctx, 1, reps, gemms).median;
    r.xform_s = kronex_bench::time_device(ctx, 1, reps, xforms).median;

    const bool ok = transfers == 0 && r.residual <= max_residual && gemm_err <= 1e-12;
    const double dof = double(n * n * n);
    std::printf("%5zu %10.0f %10.2f %10.3f %8.4f %8.2f %8.2f %10.3f %8.1f %10.3f %8.2f %10.3f %5g %9.2e\n", n, dof,
                r.setup_s * 1e3, r.solve_s * 1e3, dof / r.solve_s * 1e-9, r.flops / r.solve_s * 1e-9,
                r.bytes / r.solve_s * 1e-9, r.floor_s * 1e3, r.solve_s / r.floor_s, r.gemm_s * 1e3,
                r.solve_s / r.gemm_s, r.xform_s * 1e3, r.transfers, r.residual);
    std::fflush(stdout);
    csv.row("%s,%zu,%.0f,%.4f,%.4f,%.5g,%.5g,%.5g,%.4f,%.4f,%.4f,%.4f,%.4f,%g,%.3g,%d\n", dev::system_name(), n, dof,
            r.setup_s * 1e3, r.solve_s * 1e3, dof / r.solve_s * 1e-9, r.flops / r.solve_s * 1e-9,
            r.bytes / r.solve_s * 1e-9, r.floor_s * 1e3, r.solve_s / r.floor_s, r.gemm_s * 1e3, r.solve_s / r.gemm_s,
            r.xform_s * 1e3, r.transfers, r.residual, ok ? 1 : 0);
    if (transfers != 0)
      std::fprintf(stderr, "bench_device_sum_solve: n = %zu: %zu host<->device transfers during %d solves\n", n,
                   transfers, reps + 1);
    if (!(r.residual <= max_residual))
      std::fprintf(stderr, "bench_device_sum_solve: n = %zu: residual %.3g is above %.0e: the solve is wrong\n", n,
                   r.residual, max_residual);
    if (!(gemm_err <= 1e-12))
      std::fprintf(stderr, "bench_device_sum_solve: n = %zu: the GEMM reference differs from kronex's apply by %.3g\n",
                   n, gemm_err);
    all_ok = all_ok && ok;
  }
  if (!all_ok) {
    std::printf("FAILED: a size made host<->device transfers during its solves or gave a wrong result\n");
    return 1;
  }
  std::printf("all sizes: 0 transfers per solve, residuals within %.0e\n", max_residual);
  return 0;
}
