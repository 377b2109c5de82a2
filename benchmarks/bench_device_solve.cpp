// Device 3D solve benchmark: kron(M, M, M) x = b on the device, M the degree-3 B-spline mass
// matrix, all clamped or all periodic, float and double. Default sizes: n = 64, 128, 256, 512 and
// 1024 on a GPU (1024 only when the GPU's free memory holds its tensors), 64, 128, 256 on a CPU
// device. The same source builds twice: bench_device_solve (the CPU device: Thrust with OpenMP,
// host BLAS) and bench_device_solve_cuda (CUDA, cuBLAS).
//
// Per case: the compile is timed on its own (host factorization, dense inverses, uploads); then
// warm-up solves, then R solves each timed with the device timer (CUDA events, or the steady
// clock on the CPU device), median and min. The row gives GDOF/s (n^3 / median), TFLOP/s
// (plan flops / median), GB/s (plan bytes / median), and the ratio to the floor measured in the
// same run: the runtime's own GEMMs with exactly the shapes of the plan's three steps (mode 0:
// gemm(N,T) of n^2 x n by n x n; mode 1: n strided-batched n x n products; mode 2: gemm(N,N) of
// n x n by n x n^2), each timed alone (median of R) on the same operand. "GEMM TF/s" is the plan's
// flops over the sum of those times, and "vs GEMM" the floor's time over the solve's: 1.0 means
// the solve runs as fast as its GEMMs can. Then one solve is timed step by step (median of 3)
// and each step is printed against its GEMM, so a slow step shows. Host<->device transfers are
// counted around the timed solves and must be 0 (otherwise the program exits 1), and the
// residual |K x - b| / |b| (K applied on the device, outside the timing) shows the numbers belong
// to a correct solve. Rows go to the CSV as they are measured.
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
#include <variant>
#include <vector>

#include <unistd.h>

#include <kronex/device.hpp>

#ifdef KRONEX_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#include "device_bench.hpp"

namespace {

namespace dev = kronex::detail::device;
using kronex_bench::time_device;

constexpr std::size_t degree = 3;
// Targets for an H200, 256^3 double: the solve rate, and the share of its GEMMs' rate it reaches.
constexpr double target_gdofs = 30.0;
constexpr double target_vs_gemm = 0.6;

struct options {
  std::vector<std::size_t> sizes;  // empty: the defaults for the device system
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
               "  defaults: sizes 64,128,256,512,1024 on a GPU (each only if the device memory holds it), "
               "64,128,256 on a CPU device; all types and boundaries; R by size (41 for n <= 64, 15 for n <= 128, "
               "7 above); W = 2\n"
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
      if (o.sizes.empty()) usage(argv[0], "empty list of sizes");
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
  if (o.types.empty() || o.bcs.empty()) usage(argv[0], "empty list of types or boundaries");
  return o;
}

int reps_for(const options& o, std::size_t n) {
  if (o.reps > 0) return o.reps;
  return n <= 64 ? 41 : (n <= 128 ? 15 : 7);
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

// Free device memory in bytes: the GPU's (CUDA), or the host's available memory (CPU device).
double free_device_bytes() {
#ifdef KRONEX_BENCH_CUDA
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) return double(free);
  return 0;
#else
  return double(sysconf(_SC_AVPHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
#endif
}

// The sizes to run: the command line's, or the defaults for this device system, keeping only
// those whose device tensors fit: b, x, the solve's buffer, and the residual's operator buffer
// and result (5 tensors), with 10% to spare.
std::vector<std::size_t> sizes_to_run(const options& o, std::size_t value_bytes) {
  if (!o.sizes.empty()) return o.sizes;
  const bool gpu = std::string(dev::system_name()) == "cuda";
  std::vector<std::size_t> out;
  for (std::size_t n : gpu ? std::vector<std::size_t>{64, 128, 256, 512, 1024} : std::vector<std::size_t>{64, 128, 256}) {
    const double need = 5.0 * double(n * n * n) * double(value_bytes) * 1.1;
    if (need <= free_device_bytes()) out.push_back(n);
    else std::printf("note: n = %zu skipped: needs %.1f GiB of device memory, %.1f GiB free\n", n, need / 1073741824.0,
                     free_device_bytes() / 1073741824.0);
  }
  return out;
}

// The CSV, written row by row so that a run cut short keeps what it measured.
struct csv_file {
  std::FILE* f = nullptr;
  explicit csv_file(const std::string& path) {
    if (path.empty()) return;
    f = std::fopen(path.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_device_solve: cannot write %s\n", path.c_str());
      std::exit(1);
    }
    std::fprintf(f, "system,boundary,type,n,unknowns,compile_ms,median_ms,min_ms,gdof_s,tflop_s,gb_s,gemm_tflop_s,"
                    "vs_gemm,transfers_per_solve,residual,ok\n");
    std::fflush(f);
  }
  ~csv_file() {
    if (f) std::fclose(f);
  }
  csv_file(const csv_file&) = delete;
  csv_file& operator=(const csv_file&) = delete;
  void write(const row& r) {
    if (!f) return;
    std::fprintf(f, "%s,%s,%s,%zu,%zu,%.4f,%.5f,%.5f,%.5g,%.5g,%.5g,%.5g,%.4f,%g,%.3g,%d\n", dev::system_name(),
                 r.bc.c_str(), r.type.c_str(), r.n, r.n * r.n * r.n, r.compile_ms, r.median_ms, r.min_ms, r.gdofs,
                 r.tflops, r.gbs, r.gemm_tflops, r.ratio, r.transfers, r.resid, r.ok ? 1 : 0);
    std::fflush(f);
  }
};

template <class T>
void run_type(const options& o, const char* type, std::vector<row>& rows, csv_file& csv) {
  // A generous bound on |K x - b| / |b|: the dense inverses of the mass matrices are well
  // conditioned (p = 3), so a correct solve is many orders of magnitude below it.
  const double resid_bound = std::is_same_v<T, float> ? 1e-3 : 1e-10;
  dev::context& ctx = *dev::default_context();
  for (const std::size_t n : sizes_to_run(o, sizeof(T))) {
    const int reps = reps_for(o, n);
    const std::size_t N = n * n * n;

    xt::xtensor<T, 3> b = xt::xtensor<T, 3>::from_shape({n, n, n});
    std::mt19937_64 gen(n);
    std::uniform_real_distribution<double> u(-1, 1);
    for (auto& v : b) v = T(u(gen));
    kronex::device_tensor<T, 3> bd(b);
    kronex::device_tensor<T, 3> xd(bd.shape());

    // The floor: the runtime's GEMMs with the plan's shapes (column-major, as the plan calls
    // them), b in, x out, each timed alone. gemm_s[k]: mode k's median time.
    std::vector<T> a_host(n * n);
    for (auto& v : a_host) v = T(u(gen) / double(n));
    kronex::device_tensor<T, 1> ad({n * n});
    ad.copy_from_host(a_host.data());
    const long ln = long(n), ln2 = long(n * n);
    const T* B = bd.data();
    const T* A = ad.data();
    T* X = xd.data();
    const double gemm_s[3] = {
        time_device(ctx, o.warmup, reps, [&] { dev::blas<T>::gemm(ctx, 'N', 'T', ln2, ln, ln, B, ln2, A, ln, X, ln2); }).median,
        time_device(ctx, o.warmup, reps, [&] {
          dev::blas<T>::gemm_strided_batched(ctx, 'N', 'T', ln, ln, ln, B, ln, ln2, A, ln, 0, X, ln, ln2, ln);
        }).median,
        time_device(ctx, o.warmup, reps, [&] { dev::blas<T>::gemm(ctx, 'N', 'N', ln, ln2, ln, A, ln, B, ln, X, ln); }).median};
    const double floor_s = gemm_s[0] + gemm_s[1] + gemm_s[2];

    for (const auto bc : o.bcs) {
      const auto M = kronex::gallery::bspline_mass<T>(n, degree, bc);
      const auto t0 = std::chrono::steady_clock::now();
      auto solver = kronex::compile(kronex::kron(M, M, M).inverse(), bd);
      solver.context().synchronize();
      const double compile_s = elapsed(t0);

      const auto before = kronex::transfers();
      const kronex_bench::device_stats s = time_device(solver.context(), o.warmup, reps, [&] { solver(bd, xd); });
      const auto during = kronex::transfers() - before;

      // Step by step: the median of 3 timed runs per step.
      const auto& steps = solver.plan().steps;
      std::vector<std::vector<double>> step_runs(steps.size());
      for (int r = 0; r < 3; ++r) {
        const std::vector<double> t = solver.time_steps(bd, xd);
        for (std::size_t i = 0; i < t.size(); ++i) step_runs[i].push_back(t[i]);
      }

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
      r.gemm_tflops = solver.plan().flops() / floor_s * 1e-12;
      r.ratio = floor_s / s.median;
      r.resid = resid;
      r.transfers = double(during.calls()) / double(o.warmup + reps);
      r.ok = during.calls() == 0 && std::isfinite(resid) && resid <= resid_bound;
      std::printf("%-8s %-6s %4zu^3 %10zu %11.1f %10.3f %10.3f %8.3f %9.3f %8.1f %9.3f %7.3f %10.3g %9.1e%s\n",
                  r.bc.c_str(), type, n, N, r.compile_ms, r.median_ms, r.min_ms, r.gdofs, r.tflops, r.gbs, r.gemm_tflops, r.ratio, r.transfers, resid,
                  r.ok ? "" : (during.calls() ? "  FAIL: transfers" : "  FAIL: residual"));
      for (std::size_t i = 0; i < steps.size(); ++i) {
        std::sort(step_runs[i].begin(), step_runs[i].end());
        const double t = step_runs[i][1];
        const kronex::step_base& info = kronex::step_info(steps[i]);
        const bool gemm = std::holds_alternative<kronex::gemm_step>(steps[i]);
        std::printf("    step %zu  mode %zu  %-22s %9.3f ms %8.3f TFLOP/s %8.1f GB/s", i, info.mode,
                    kronex::step_method(steps[i]).c_str(), t * 1e3, info.flops / t * 1e-12, info.bytes / t * 1e-9);
        if (gemm) std::printf("   its GEMM %9.3f ms   vs GEMM %6.3f", gemm_s[info.mode] * 1e3, gemm_s[info.mode] / t);
        std::printf("\n");
      }
      std::fflush(stdout);
      rows.push_back(r);
      csv.write(r);
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
  kronex_bench::print_device_system();
  std::printf("GPU targets: H200, 256^3 double: >= %.0f GDOF/s, >= %.2f of its GEMMs' rate, 0 transfers per solve\n",
              target_gdofs, target_vs_gemm);
  std::printf("time: device timer, median (and min) of R solves after %d warm-up solves; compile timed apart\n",
              o.warmup);
  std::printf("floor: the runtime's GEMMs with the plan's three shapes (same type), each timed alone in this run; "
              "GEMM TF/s = plan flops / their summed time; vs GEMM = their summed time / the solve's\n");
  std::printf("transfers: host<->device copies during the warm-up and timed solves (must be 0)\n\n");
  std::printf("%-8s %-6s %6s %10s %11s %10s %10s %8s %9s %8s %9s %7s %10s %9s\n", "boundary", "type", "n", "unknowns",
              "compile[ms]", "median[ms]", "min[ms]", "GDOF/s", "TFLOP/s", "GB/s", "GEMM TF/s", "vs GEMM",
              "xfer/solve", "residual");

  std::vector<row> rows;
  csv_file csv(o.csv);
  for (const auto& t : o.types) {
    if (t == "double") run_type<double>(o, "double", rows, csv);
    else run_type<float>(o, "float", rows, csv);
  }

  std::printf("\n");
  const bool gpu = std::string(dev::system_name()) == "cuda";
  for (const auto& r : rows) {
    if (r.n != 256 || r.type != "double") continue;
    if (gpu)
      std::printf("target check: 256^3 double %s: %.2f GDOF/s (target >= %.0f): %s; %.2f of its GEMMs' rate "
                  "(target >= %.2f): %s; %g transfers per solve: %s; residual %.1e: %s\n",
                  r.bc.c_str(), r.gdofs, target_gdofs, r.gdofs >= target_gdofs ? "met" : "NOT met", r.ratio,
                  target_vs_gemm, r.ratio >= target_vs_gemm ? "met" : "NOT met", r.transfers,
                  r.transfers == 0 ? "met" : "NOT met", r.resid, r.ok ? "met" : "NOT met");
    else
      std::printf("target check: 256^3 double %s: %.3f GDOF/s, %.2f of its GEMMs' rate on the %s device (the targets, "
                  ">= %.0f GDOF/s and >= %.2f, are for an H200 GPU)\n",
                  r.bc.c_str(), r.gdofs, r.ratio, dev::system_name(), target_gdofs, target_vs_gemm);
  }
  const bool ok = std::all_of(rows.begin(), rows.end(), [](const row& r) { return r.ok; });
  if (!ok) {
    std::printf("FAILED: a case made host<->device transfers during its timed solves or gave a wrong result\n");
    return 1;
  }
  std::printf("all cases: 0 transfers per solve, residuals within bounds\n");
  return 0;
}
