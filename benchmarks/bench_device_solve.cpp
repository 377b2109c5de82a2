// Device 3D solve benchmark: kron(M, M, M) x = b on the device, M the degree-3 B-spline mass
// matrix, all clamped or all periodic, float and double, n = 64, 128, 256 (or what the command
// line chooses). The same source builds twice: bench_device_solve (the CPU device: Thrust with
// OpenMP, host BLAS) and bench_device_solve_cuda (CUDA, cuBLAS).
//
// Per case: the compile is timed on its own (host factorization, dense inverses, uploads); then
// warm-up solves, then R solves each timed with the device timer (CUDA events, or the steady
// clock on the CPU device), median and min. The row gives GDOF/s (n^3 / median), TFLOP/s
// (plan flops / median), GB/s (plan bytes / median), and the ratio of the achieved TFLOP/s to the
// floor measured in the same run: the runtime's own GEMM rate on one mode's work, an n x n times
// n x n^2 GEMM of the same value type (the plan is one GEMM per mode, so 1.0 would mean the solve
// runs as fast as its GEMMs can). Host<->device transfers are counted around the timed solves and
// must be 0 (otherwise the program exits 1), and the residual |K x - b| / |b| (K applied on the
// device, outside the timing) shows the numbers belong to a correct solve.
//
// Exit status: 0 ok; 1 a transfer in the timed solves, or a wrong result; 2 bad command line;
// 77 no device visible (CUDA build on a machine without a GPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <kronex/device.hpp>

#ifdef KRONEX_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

// OpenBLAS's introspection, if the BLAS in this process is OpenBLAS (weak: absent elsewhere).
extern "C" char* openblas_get_corename(void) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace {

namespace dev = kronex::detail::device;

constexpr std::size_t degree = 3;
constexpr double target_gdofs = 15.0;  // the GPU target: H200, 256^3 double

struct options {
  std::vector<std::size_t> sizes{64, 128, 256};
  std::vector<std::string> types{"double", "float"};
  std::vector<kronex::boundary> bcs{kronex::boundary::clamped, kronex::boundary::periodic};
  int reps = 0;  // 0: by size
  int warmup = 2;
  std::string csv;  // also write the rows here, if set
};

[[noreturn]] void usage(const char* prog, const std::string& error) {
  std::fprintf(error.empty() ? stdout : stderr,
               "%s%s"
               "usage: %s [--sizes 64,128,256] [--types double,float] [--bcs clamped,periodic] [--reps R] "
               "[--warmup W] [--csv FILE]\n"
               "  defaults: all sizes, types and boundaries; R by size (41 for n <= 64, 15 for n <= 128, 7 above); "
               "W = 2\n"
               "  --csv FILE also writes one line per case (machine-readable, for scripts/gpu-check.sh)\n",
               error.c_str(), error.empty() ? "" : "\n", prog);
  std::exit(error.empty() ? 0 : 2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

int parse_positive(const char* prog, const std::string& what, const std::string& s, int min) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < min || v > 1000000) usage(prog, "bad value for " + what + ": '" + s + "'");
  return int(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") usage(argv[0], "");
    if (i + 1 >= argc) usage(argv[0], "missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--sizes") {
      o.sizes.clear();
      for (const auto& s : split(value)) o.sizes.push_back(std::size_t(parse_positive(argv[0], arg, s, 4)));
    } else if (arg == "--types") {
      o.types = split(value);
      for (const auto& t : o.types)
        if (t != "double" && t != "float") usage(argv[0], "unknown type '" + t + "' (double, float)");
    } else if (arg == "--bcs") {
      o.bcs.clear();
      for (const auto& b : split(value)) {
        if (b == "clamped") o.bcs.push_back(kronex::boundary::clamped);
        else if (b == "periodic") o.bcs.push_back(kronex::boundary::periodic);
        else usage(argv[0], "unknown boundary '" + b + "' (clamped, periodic)");
      }
    } else if (arg == "--reps") {
      o.reps = parse_positive(argv[0], arg, value, 1);
    } else if (arg == "--warmup") {
      o.warmup = parse_positive(argv[0], arg, value, 0);
    } else if (arg == "--csv") {
      o.csv = value;
    } else {
      usage(argv[0], "unknown option " + arg);
    }
  }
  if (o.sizes.empty() || o.types.empty() || o.bcs.empty()) usage(argv[0], "empty list of sizes, types or boundaries");
  return o;
}

int reps_for(const options& o, std::size_t n) {
  if (o.reps > 0) return o.reps;
  return n <= 64 ? 41 : (n <= 128 ? 15 : 7);
}

struct stats {
  double median = 0, min = 0;
};

// Times f() `reps` times with the device timer after `warmup` untimed calls.
template <class F>
stats time_device(dev::context& ctx, int warmup, int reps, F&& f) {
  for (int w = 0; w < warmup; ++w) f();
  ctx.synchronize();
  dev::timer timer(ctx);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    timer.start();
    f();
    timer.stop();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

struct row {
  std::string bc, type;
  std::size_t n = 0;
  double compile_ms = 0, median_ms = 0, min_ms = 0, gdofs = 0, tflops = 0, gbs = 0, gemm_tflops = 0, ratio = 0,
         resid = 0;
  double transfers = 0;  // per solve
  bool ok = true;
};

double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <class T>
void run_type(const options& o, const char* type, std::vector<row>& rows) {
  // A generous bound on |K x - b| / |b|: the dense inverses of the mass matrices are well
  // conditioned (p = 3), so a correct solve is many orders of magnitude below it.
  const double resid_bound = std::is_same_v<T, float> ? 1e-3 : 1e-10;
  dev::context& ctx = *dev::default_context();
  for (const std::size_t n : o.sizes) {
    const int reps = reps_for(o, n);
    const std::size_t N = n * n * n;

    xt::xtensor<T, 3> b = xt::xtensor<T, 3>::from_shape({n, n, n});
    std::mt19937_64 gen(n);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : b) v = T(u(gen));
    kronex::device_tensor<T, 3> bd(b);
    kronex::device_tensor<T, 3> xd(bd.shape());

    // The floor: the runtime's GEMM on one mode's work, C (n x n^2) = A (n x n) B (n x n^2),
    // column-major as the plan calls it; B is the right-hand side, C the solution's storage.
    std::vector<T> a_host(n * n);
    for (auto& v : a_host) v = T(u(gen) / double(n));
    kronex::device_tensor<T, 1> ad({n * n});
    ad.copy_from_host(a_host.data());
    const long ln = long(n), ln2 = long(n * n);
    const stats g = time_device(ctx, o.warmup, reps, [&] {
      dev::blas<T>::gemm(ctx, 'N', 'N', ln, ln2, ln, ad.data(), ln, bd.data(), ln, xd.data(), ln);
    });
    const double gemm_flops = 2.0 * double(n) * double(n) * double(n) * double(n);
    const double gemm_rate = gemm_flops / g.median;

    for (const auto bc : o.bcs) {
      const auto M = kronex::gallery::bspline_mass<T>(n, degree, bc);
      const auto t0 = std::chrono::steady_clock::now();
      auto solver = kronex::compile(kronex::kron(M, M, M).inverse(), bd);
      solver.context().synchronize();
      const double compile_s = elapsed(t0);

      const auto before = kronex::transfers();
      const stats s = time_device(solver.context(), o.warmup, reps, [&] { solver(bd, xd); });
      const auto during = kronex::transfers() - before;

      // Residual, outside the timing: K applied on the device, one download.
      auto K = kronex::compile(kronex::kron(M, M, M), xd);
      const xt::xtensor<T, 3> kx = K(xd).to_host();
      double num = 0, den = 0;
      for (std::size_t i = 0; i < N; ++i) {
        const double d = double(kx.data()[i]) - double(b.data()[i]);
        num += d * d;
        den += double(b.data()[i]) * double(b.data()[i]);
      }
      const double resid = std::sqrt(num / den);

      row r;
      r.bc = kronex::to_string(bc);
      r.type = type;
      r.n = n;
      r.compile_ms = compile_s * 1e3;
      r.median_ms = s.median * 1e3;
      r.min_ms = s.min * 1e3;
      r.gdofs = double(N) / s.median * 1e-9;
      r.tflops = solver.plan().flops() / s.median * 1e-12;
      r.gbs = solver.plan().bytes() / s.median * 1e-9;
      r.gemm_tflops = gemm_rate * 1e-12;
      r.ratio = solver.plan().flops() / s.median / gemm_rate;
      r.resid = resid;
      r.transfers = double(during.calls()) / double(o.warmup + reps);
      r.ok = during.calls() == 0 && std::isfinite(resid) && resid <= resid_bound;
      std::printf("%-8s %-6s %4zu^3 %10zu %11.1f %10.3f %10.3f %8.3f %9.3f %8.1f %9.3f %7.3f %10.3g %9.1e%s\n",
                  r.bc.c_str(), type, n, N, r.compile_ms, r.median_ms, r.min_ms, r.gdofs, r.tflops, r.gbs, r.gemm_tflops, r.ratio, r.transfers, resid,
                  r.ok ? "" : (during.calls() ? "  FAIL: transfers" : "  FAIL: residual"));
      std::fflush(stdout);
      rows.push_back(r);
    }
  }
}

void print_system() {
  const std::string system = dev::system_name();
  std::printf("device system: %s; built with %s\n", system.c_str(), KRONEX_BENCHMARK_FLAGS);
#ifdef KRONEX_BENCH_CUDA
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    std::printf("GPU %d: %s, compute capability %d.%d, %.1f GiB, %d SMs; CUDA runtime %d, driver %d\n", device,
                prop.name, prop.major, prop.minor, double(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                prop.multiProcessorCount, runtime, driver);
  }
#endif
  if (system != "cuda") {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    if (openblas_get_corename) {
      const std::string core = openblas_get_corename();
      std::printf("host BLAS: OpenBLAS, core %s (OPENBLAS_CORETYPE=%s), %d threads; OMP_NUM_THREADS=%s\n",
                  core.c_str(), coretype ? coretype : "unset", openblas_get_num_threads ? openblas_get_num_threads() : -1,
                  omp ? omp : "unset");
      if (core == "Prescott" || core == "prescott")
        std::printf("WARNING: OpenBLAS runs its generic Prescott kernels (dgemm 4-6x slow on this CPU); set "
                    "OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2)\n");
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
      else if (__builtin_cpu_supports("avx512f") && core != "SkylakeX" && core != "Cooperlake" &&
               core != "SapphireRapids")
        std::printf("note: this CPU has AVX-512 but OpenBLAS uses its %s kernels; OPENBLAS_CORETYPE=SkylakeX may "
                    "be faster\n", core.c_str());
#endif
    } else {
      std::printf("host BLAS: not OpenBLAS (core unknown); OMP_NUM_THREADS=%s\n", omp ? omp : "unset");
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);

  std::printf("kronex device solve benchmark: kron(M, M, M) x = b, M = B-spline mass matrix of degree %zu\n", degree);
  if (!dev::available()) {
    std::printf("no %s device is visible to this process: nothing to measure (exit 77)\n", dev::system_name());
    std::fflush(stdout);
    std::fprintf(stderr, "bench_device_solve: no %s device visible: skipped\n", dev::system_name());
    return 77;
  }
  print_system();
  std::printf("GPU target (issue): H200, 256^3 double >= %.0f GDOF/s\n", target_gdofs);
  std::printf("time: device timer, median (and min) of R solves after %d warm-up solves; compile timed apart\n",
              o.warmup);
  std::printf("floor: the runtime's GEMM rate on one mode's work (n x n times n x n^2, same type), measured in this "
              "run; vs GEMM = achieved TFLOP/s / GEMM TFLOP/s\n");
  std::printf("transfers: host<->device copies during the warm-up and timed solves (must be 0)\n\n");
  std::printf("%-8s %-6s %6s %10s %11s %10s %10s %8s %9s %8s %9s %7s %10s %9s\n", "boundary", "type", "n", "unknowns",
              "compile[ms]", "median[ms]", "min[ms]", "GDOF/s", "TFLOP/s", "GB/s", "GEMM TF/s", "vs GEMM",
              "xfer/solve", "residual");

  std::vector<row> rows;
  for (const auto& t : o.types) {
    if (t == "double") run_type<double>(o, "double", rows);
    else run_type<float>(o, "float", rows);
  }

  std::printf("\n");
  for (const auto& r : rows) {
    if (r.n == 256 && r.type == "double") {
      if (std::string(dev::system_name()) == "cuda")
        std::printf("target check: 256^3 double %s: %.2f GDOF/s (target >= %.0f on an H200): %s\n", r.bc.c_str(),
                    r.gdofs, target_gdofs, r.gdofs >= target_gdofs ? "met" : "NOT met");
      else
        std::printf("target check: 256^3 double %s: %.3f GDOF/s on the %s device (the target is for an H200 GPU)\n",
                    r.bc.c_str(), r.gdofs, dev::system_name());
    }
  }
  if (!o.csv.empty()) {
    std::FILE* f = std::fopen(o.csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_device_solve: cannot write %s\n", o.csv.c_str());
      return 1;
    }
    std::fprintf(f, "system,boundary,type,n,unknowns,compile_ms,median_ms,min_ms,gdof_s,tflop_s,gb_s,gemm_tflop_s,"
                    "vs_gemm,transfers_per_solve,residual,ok\n");
    for (const auto& r : rows)
      std::fprintf(f, "%s,%s,%s,%zu,%zu,%.4f,%.5f,%.5f,%.5g,%.5g,%.5g,%.5g,%.4f,%g,%.3g,%d\n", dev::system_name(),
                   r.bc.c_str(), r.type.c_str(), r.n, r.n * r.n * r.n, r.compile_ms, r.median_ms, r.min_ms, r.gdofs,
                   r.tflops, r.gbs, r.gemm_tflops, r.ratio, r.transfers, r.resid, r.ok ? 1 : 0);
    std::fclose(f);
  }
  const bool ok = std::all_of(rows.begin(), rows.end(), [](const row& r) { return r.ok; });
  if (!ok) {
    std::printf("FAILED: a case made host<->device transfers during its timed solves or gave a wrong result\n");
    return 1;
  }
  std::printf("all cases: 0 transfers per solve, residuals within bounds\n");
  return 0;
}
