// Host solve sweep: kron(M, ..., M).inverse() with d = 2, 3 or 4 factors, M the B-spline mass
// matrix gallery::bspline_mass<T>(n, p, bc), over lists of n, degrees, boundaries and value
// types (see --help). Per case: median and minimum time over repeats after warm-up solves,
// GDOF/s, GB/s (the plan's bytes over the median) and the ratio to two memory floors at the
// triad bandwidth measured in this run with the case's thread count: the d-pass floor
// (2·d·sizeof(T) bytes per unknown: each mode's pass reads and writes the tensor once) and the
// 2-pass floor (4·sizeof(T): the tensor read once and written once). Prints a table, then for
// cases run with several thread counts the speed-up over one thread beside the triad's (what the
// memory allows a memory-bound solve), and with --json FILE writes every row
// (benchmarks/plot_host_sweep.py plots it). Prints the BLAS core first: kronex's banded
// kernels call LAPACK, and a generic OpenBLAS core is slow.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include <kronex_bench/membw.hpp>

#include "host_sweep/host_sweep.hpp"

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

namespace {

using kronex_bench::sweep_type;

const char* const usage =
    "usage: bench_host_sweep [options] [n ...]\n"
    "  --dim D            number of factors: 2, 3 (default) or 4\n"
    "  --n LIST           1D sizes, comma separated (or as trailing arguments); defaults:\n"
    "                     2D 64,128,256,512,1024,2048  3D 32,48,64,96,128,192,256  4D 8,12,16,24,32,48,64\n"
    "  --boundary B       clamped, periodic or both (default both)\n"
    "  --degree LIST      spline degrees 1..7, comma separated (default 3)\n"
    "  --type LIST        float, double, complex_float, complex_double (alias complex), comma separated\n"
    "                     (default double)\n"
    "  --reps R           timed solves per case (default: 41, 15 or 7 by size)\n"
    "  --warmup W         untimed solves before timing (default 1, at least 1)\n"
    "  --threads LIST     kronex's host threads (compile_options::threads), comma separated; 0 follows\n"
    "                     OMP_NUM_THREADS (default 1)\n"
    "  --solves M         compile_options::solves for every case: automatic (default), substitution or\n"
    "                     dense_inverse\n"
    "  --json FILE        also write the rows as JSON\n"
    "  --help             this text\n"
    "Threads: each row records the threads its plan ran on; OMP_NUM_THREADS and the OpenBLAS thread\n"
    "count are recorded too (set OPENBLAS_NUM_THREADS=1 for single-thread LAPACK calls).\n"
    "A case that the gallery refuses (clamped n < p+1, periodic n < 2p+1) is skipped with a note.\n";

struct options {
  std::size_t dim = 3;
  std::vector<std::size_t> sizes, degrees{3};
  std::vector<kronex::boundary> boundaries{kronex::boundary::clamped, kronex::boundary::periodic};
  std::vector<sweep_type> types{sweep_type::f64};
  std::vector<std::size_t> threads{1};
  int reps = 0, warmup = 1;
  std::string json;
  std::string solves = "automatic";
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bench_host_sweep: %s\n%s", what.c_str(), usage);
  std::exit(2);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = s.find(',', start);
    const std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) out.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::size_t to_size(const std::string& s, const char* what) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < 1) fail(std::string("bad ") + what + " '" + s + "'");
  return std::size_t(v);
}

options parse(int argc, char** argv) {
  options o;
  auto value = [&](int& i) -> std::string {
    if (i + 1 >= argc) fail(std::string(argv[i]) + " needs a value");
    return argv[++i];
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (a == "--dim") {
      o.dim = to_size(value(i), "dimension");
      if (o.dim < 2 || o.dim > 4) fail("--dim must be 2, 3 or 4");
    } else if (a == "--n") {
      for (const auto& s : split(value(i))) o.sizes.push_back(to_size(s, "size"));
    } else if (a == "--boundary") {
      const std::string b = value(i);
      if (b == "clamped") o.boundaries = {kronex::boundary::clamped};
      else if (b == "periodic") o.boundaries = {kronex::boundary::periodic};
      else if (b == "both") o.boundaries = {kronex::boundary::clamped, kronex::boundary::periodic};
      else fail("--boundary must be clamped, periodic or both");
    } else if (a == "--degree") {
      o.degrees.clear();
      for (const auto& s : split(value(i))) {
        o.degrees.push_back(to_size(s, "degree"));
        if (o.degrees.back() > 7) fail("degrees are 1..7");
      }
    } else if (a == "--type") {
      o.types.clear();
      for (const auto& s : split(value(i))) {
        if (s == "float") o.types.push_back(sweep_type::f32);
        else if (s == "double") o.types.push_back(sweep_type::f64);
        else if (s == "complex_float") o.types.push_back(sweep_type::c32);
        else if (s == "complex_double" || s == "complex") o.types.push_back(sweep_type::c64);
        else fail("unknown type '" + s + "'");
      }
    } else if (a == "--threads") {
      o.threads.clear();
      for (const auto& s : split(value(i))) o.threads.push_back(to_size(s, "thread count"));
    } else if (a == "--reps") {
      o.reps = int(to_size(value(i), "repeat count"));
    } else if (a == "--warmup") {
      o.warmup = int(to_size(value(i), "warm-up count"));
    } else if (a == "--json") {
      o.json = value(i);
    } else if (a == "--solves") {
      o.solves = value(i);
      if (o.solves != "automatic" && o.solves != "substitution" && o.solves != "dense_inverse")
        fail("unknown --solves '" + o.solves + "'");
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option " + a);
    } else {
      o.sizes.push_back(to_size(a, "size"));
    }
  }
  if (o.degrees.empty() || o.types.empty() || o.threads.empty()) fail("empty --degree, --type or --threads list");
  if (o.sizes.empty()) {
    if (o.dim == 2) o.sizes = {64, 128, 256, 512, 1024, 2048};
    else if (o.dim == 3) o.sizes = {32, 48, 64, 96, 128, 192, 256};
    else o.sizes = {8, 12, 16, 24, 32, 48, 64};
  }
  return o;
}

// JSON strings here are names and BLAS texts: escape quotes, backslashes and control characters.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (const unsigned char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\', out += char(ch);
    else if (ch < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", ch);
      out += buf;
    } else out += char(ch);
  }
  return out + "\"";
}

struct row {
  kronex_bench::sweep_case c;
  kronex_bench::sweep_timing t;
  int threads;
  double bandwidth;  // bytes/s of the triad on `threads` threads
  double floor_bytes, floor_s, floor2_bytes, floor2_s;
};

// The triad bandwidth per thread count, each measured once, when first asked for.
struct bandwidths {
  std::map<int, double> by_threads;
  double operator()(int threads) {
    auto it = by_threads.find(threads);
    if (it == by_threads.end()) it = by_threads.emplace(threads, kronex_bench::triad_bandwidth(std::size_t(1) << 25, 7, threads)).first;
    return it->second;
  }
};

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  const kronex_bench::blas_info blas = kronex_bench::query_blas();
  const char* omp_env = std::getenv("OMP_NUM_THREADS");
  const char* openblas_env = std::getenv("OPENBLAS_NUM_THREADS");
  // What OpenMP's default (--threads 0) gives: OMP_NUM_THREADS when set.
  const int threads = omp_env && std::atoi(omp_env) > 0 ? std::atoi(omp_env) : 1;

  std::printf("kronex host solve sweep: kron(M x %zu).inverse(), M = bspline_mass(n, p, bc); built with %s\n", o.dim,
              KRONEX_BENCHMARK_FLAGS);
  if (blas.openblas) {
    std::printf("BLAS: OpenBLAS, core %s, %d threads (OPENBLAS_NUM_THREADS=%s, OPENBLAS_CORETYPE=%s)\n",
                blas.corename.c_str(), blas.threads, openblas_env ? openblas_env : "unset",
                std::getenv("OPENBLAS_CORETYPE") ? std::getenv("OPENBLAS_CORETYPE") : "unset");
    if (!blas.config.empty()) std::printf("OpenBLAS config: %s\n", blas.config.c_str());
    if (blas.generic)
      std::printf("WARNING: OpenBLAS runs its generic '%s' kernels (CPU not recognised?): its factorisations and GEMMs are slow; "
                  "set OPENBLAS_CORETYPE (e.g. Haswell or SkylakeX) to the CPU's family\n", blas.corename.c_str());
  } else {
    std::printf("BLAS: not OpenBLAS, or built without its introspection (core unknown)\n");
  }
  std::printf("kronex threads: per row (OMP_NUM_THREADS=%s); solves: %s\n", omp_env ? omp_env : "unset",
              o.solves.c_str());
  // The one-thread triad always, and one per thread count asked for (0: OpenMP's default); a
  // plan that runs on fewer threads than asked (a small tensor) gets its own when it comes.
  bandwidths bw;
  std::printf("memory floor: triad bandwidth measured in this run on each case's threads:");
  bw(1);
  for (const auto t : o.threads) bw(t == 0 ? threads : int(t));
  for (const auto& [t, b] : bw.by_threads) std::printf(" %d thread%s %.2f GB/s;", t, t == 1 ? "" : "s", b * 1e-9);
  std::printf("\nfloor = %zu-pass (2*%zu*sizeof(T) B/unknown), floor2 = 2-pass (4*sizeof(T) B/unknown)\n\n", o.dim, o.dim);
  std::printf("%-9s %2s %-15s %3s %5s %12s %10s %10s %8s %8s %6s %10s %7s %7s\n", "boundary", "p", "type", "thr", "n", "unknowns",
              "median[ms]", "min[ms]", "GDOF/s", "GB/s", "B/unk", "floor[ms]", "t/floor", "t/flr2");

  std::vector<row> rows;
  for (const auto type : o.types)
    for (const auto nthreads : o.threads)
    for (const auto bc : o.boundaries)
      for (const auto p : o.degrees)
        for (const auto n : o.sizes) {
          kronex_bench::sweep_case c;
          c.dim = o.dim, c.n = n, c.degree = p, c.bc = bc, c.type = type, c.reps = o.reps, c.warmup = o.warmup;
          c.threads = nthreads;
          c.solves = o.solves == "substitution"    ? kronex::solve_method::substitution
                     : o.solves == "dense_inverse" ? kronex::solve_method::dense_inverse
                                                   : kronex::solve_method::automatic;
          if (n < (bc == kronex::boundary::periodic ? 2 * p + 1 : p + 1)) {
            std::printf("%-9s %2zu %-15s %3zu %5zu  skipped: too few splines for this degree\n", kronex::to_string(bc), p,
                        kronex_bench::type_name(type), nthreads, n);
            continue;
          }
          row r{c, {}, 1, 0, 0, 0, 0, 0};
          try {
            r.t = kronex_bench::time_case(c);
            r.threads = int(r.t.threads);
          } catch (const std::exception& e) {
            std::fprintf(stderr, "bench_host_sweep: case n=%zu p=%zu failed: %s\n", n, p, e.what());
            return 1;
          }
          const double size = double(kronex_bench::type_size(type));
          r.floor_bytes = 2.0 * double(o.dim) * size;
          r.floor2_bytes = 4.0 * size;
          if (!bw.by_threads.count(r.threads))
            std::printf("(triad bandwidth on %d threads: %.2f GB/s)\n", r.threads, bw(r.threads) * 1e-9);
          r.bandwidth = bw(r.threads);
          r.floor_s = r.floor_bytes * r.t.unknowns / r.bandwidth;
          r.floor2_s = r.floor2_bytes * r.t.unknowns / r.bandwidth;
          std::printf("%-9s %2zu %-15s %3d %5zu %12.0f %10.3f %10.3f %8.3f %8.2f %6.0f %10.3f %7.2f %7.2f\n",
                      kronex::to_string(bc), p, kronex_bench::type_name(type), r.threads, n, r.t.unknowns, r.t.median_s * 1e3,
                      r.t.min_s * 1e3, r.t.unknowns / r.t.median_s * 1e-9, r.t.plan_bytes / r.t.median_s * 1e-9,
                      r.floor_bytes, r.floor_s * 1e3, r.t.median_s / r.floor_s, r.t.median_s / r.floor2_s);
          std::fflush(stdout);
          rows.push_back(r);
        }

  // Speed-up over one thread of each case also run on more, beside the triad's from one thread to
  // as many: a solve at its one-thread floor can gain no more than the memory does.
  bool speedup_header = false;
  for (const row& r : rows) {
    if (r.threads <= 1) continue;
    for (const row& one : rows) {
      if (one.threads != 1 || one.c.type != r.c.type || one.c.bc != r.c.bc || one.c.degree != r.c.degree ||
          one.c.n != r.c.n)
        continue;
      if (!speedup_header) {
        std::printf("\nspeed-up over one thread (median over median) and the triad's:\n");
        speedup_header = true;
      }
      std::printf("%-9s %2zu %-15s %5zu  %d threads: %5.2fx   triad %5.2fx\n", kronex::to_string(r.c.bc), r.c.degree,
                  kronex_bench::type_name(r.c.type), r.c.n, r.threads, one.t.median_s / r.t.median_s,
                  r.bandwidth / one.bandwidth);
      break;
    }
  }

  if (!o.json.empty()) {
    std::FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_host_sweep: cannot write %s\n", o.json.c_str());
      return 1;
    }
    std::fprintf(f, "{\n  \"benchmark\": \"bench_host_sweep\",\n  \"flags\": %s,\n  \"dim\": %zu,\n",
                 quoted(KRONEX_BENCHMARK_FLAGS).c_str(), o.dim);
    std::fprintf(f, "  \"triad_bandwidth_gb_s\": %.6g,\n  \"triad_bandwidth_by_threads_gb_s\": {", bw(1) * 1e-9);
    for (auto it = bw.by_threads.begin(); it != bw.by_threads.end(); ++it)
      std::fprintf(f, "%s\"%d\": %.6g", it == bw.by_threads.begin() ? "" : ", ", it->first, it->second * 1e-9);
    std::fprintf(f, "},\n  \"threads\": %d,\n  \"omp_num_threads\": %s,\n", threads,
                 quoted(omp_env ? omp_env : "").c_str());
    std::fprintf(f, "  \"solves\": %s,\n", quoted(o.solves).c_str());
    std::fprintf(f, "  \"blas\": {\"openblas\": %s, \"corename\": %s, \"config\": %s, \"threads\": %d, \"generic_core\": %s},\n",
                 blas.openblas ? "true" : "false", quoted(blas.corename).c_str(), quoted(blas.config).c_str(),
                 blas.threads, blas.generic ? "true" : "false");
    std::fprintf(f, "  \"rows\": [");
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const row& r = rows[i];
      std::fprintf(f,
                   "%s\n    {\"dim\": %zu, \"n\": %zu, \"boundary\": \"%s\", \"degree\": %zu, \"type\": \"%s\", "
                   "\"threads\": %d, \"unknowns\": %.0f, \"reps\": %d, \"median_s\": %.6e, \"min_s\": %.6e, "
                   "\"gdof_s\": %.6g, \"gb_s\": %.6g, \"plan_bytes\": %.6g, \"floor_bytes_per_unknown\": %.0f, "
                   "\"floor_s\": %.6e, \"ratio\": %.6g, \"floor2_bytes_per_unknown\": %.0f, \"floor2_s\": %.6e, "
                   "\"ratio2\": %.6g, \"triad_gb_s\": %.6g}",
                   i ? "," : "", r.c.dim, r.c.n, kronex::to_string(r.c.bc), r.c.degree,
                   kronex_bench::type_name(r.c.type), r.threads, r.t.unknowns, r.t.reps, r.t.median_s, r.t.min_s,
                   r.t.unknowns / r.t.median_s * 1e-9, r.t.plan_bytes / r.t.median_s * 1e-9, r.t.plan_bytes,
                   r.floor_bytes, r.floor_s, r.t.median_s / r.floor_s, r.floor2_bytes, r.floor2_s,
                   r.t.median_s / r.floor2_s, r.bandwidth * 1e-9);
    }
    std::fprintf(f, "\n  ]\n}\n");
    std::fclose(f);
    std::printf("\nwrote %s (%zu rows)\n", o.json.c_str(), rows.size());
  }
  return 0;
}
