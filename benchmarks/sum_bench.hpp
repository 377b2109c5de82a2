#pragma once
// What the two operator-sum benchmarks share, so that bench_sum_solve (host) and
// bench_device_sum_solve (device) time the same problem with the same command line:
//   L = kron(K, M, M) + kron(M, K, M) + kron(M, M, K) + sigma kron(M, M, M),
// K and M the clamped B-spline stiffness and mass matrices of degree p, sigma = 1e-2, a random
// right-hand side seeded by n, and the CSV file both write row by row.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <kronex/kronex.hpp>

namespace kronex_bench::sum {

constexpr double sigma = 1e-2;
constexpr double max_residual = 1e-8;

struct options {
  std::vector<std::size_t> sizes{32, 48, 64, 96, 128, 192};
  std::size_t degree = 3;
  std::string csv;    // also write the rows here, if set
  bool plan = false;  // print each size's plan
};

[[noreturn]] inline void usage(const char* prog, const std::string& error) {
  std::fprintf(error.empty() ? stdout : stderr,
               "%s%susage: %s [--degree P] [--csv FILE] [--plan] [n ...]\n"
               "  n: sizes per axis (default 32 48 64 96 128 192); P: B-spline degree (default 3)\n"
               "  --csv FILE also writes one line per size; --plan prints each size's plan\n",
               error.c_str(), error.empty() ? "" : "\n", prog);
  std::exit(error.empty() ? 0 : 2);
}

inline std::size_t parse_size(const char* prog, const std::string& what, const std::string& s, long min) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < min || v > 100000) usage(prog, "bad value for " + what + ": '" + s + "'");
  return std::size_t(v);
}

inline options parse(int argc, char** argv) {
  options o;
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") usage(argv[0], "");
    if (arg == "--plan") {
      o.plan = true;
    } else if (arg == "--degree" || arg == "--csv") {
      if (i + 1 >= argc) usage(argv[0], "missing value after " + arg);
      const std::string value = argv[++i];
      if (arg == "--degree") o.degree = parse_size(argv[0], arg, value, 1);
      else o.csv = value;
    } else if (!arg.empty() && arg[0] == '-') {
      usage(argv[0], "unknown option " + arg);
    } else {
      sizes.push_back(parse_size(argv[0], "n", arg, 2));
    }
  }
  if (!sizes.empty()) o.sizes = sizes;
  for (const std::size_t n : o.sizes)
    if (n <= o.degree) usage(argv[0], "n = " + std::to_string(n) + " needs more B-splines than the degree");
  return o;
}

// The 1D factors of size n. L() refers to them (named operators are held by reference), so the
// problem must outlive what it returns.
struct problem {
  kronex::banded<double> K, M;
  problem(std::size_t n, std::size_t degree)
      : K(kronex::gallery::bspline_stiffness<double>(n, degree)), M(kronex::gallery::bspline_mass<double>(n, degree)) {}
  auto L() const {
    return kronex::kron(K, M, M) + kronex::kron(M, K, M) + kronex::kron(M, M, K) + sigma * kronex::kron(M, M, M);
  }
};

// b, uniform in [-1, 1]; then the GEMM reference's matrix A, scaled to keep (A A^T)^{⊗3} b O(1).
// Drawn in this order from one generator seeded by n, so both benchmarks use the same numbers.
inline xt::xtensor<double, 3> random_rhs(std::size_t n, std::mt19937_64& gen) {
  xt::xtensor<double, 3> b = xt::xtensor<double, 3>::from_shape({n, n, n});
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : b) v = u(gen);
  return b;
}
inline xt::xtensor<double, 2> random_matrix(std::size_t n, std::mt19937_64& gen) {
  xt::xtensor<double, 2> a = xt::xtensor<double, 2>::from_shape({n, n});
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& v : a) v = u(gen) / std::sqrt(double(n));
  return a;
}

inline double elapsed(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Timed repeats after a warm-up that took `first` seconds: enough for about a second, 5 to 41.
inline int repeats_for(double first) { return std::clamp(int(1.0 / std::max(first, 1e-6)), 5, 41); }

// |a - b| / |b| over the values of two host tensors of the same size.
template <class A, class B>
double rel_diff(const A& a, const B& b) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d += (a.data()[i] - b.data()[i]) * (a.data()[i] - b.data()[i]);
    s += b.data()[i] * b.data()[i];
  }
  return std::sqrt(d / s);
}

// The CSV, written row by row so that a run cut short keeps what it measured.
class csv_file {
public:
  csv_file(const std::string& path, const char* program, const char* header) {
    if (path.empty()) return;
    m_f = std::fopen(path.c_str(), "w");
    if (!m_f) {
      std::fprintf(stderr, "%s: cannot write %s\n", program, path.c_str());
      std::exit(1);
    }
    std::fprintf(m_f, "%s\n", header);
    std::fflush(m_f);
  }
  ~csv_file() {
    if (m_f) std::fclose(m_f);
  }
  csv_file(const csv_file&) = delete;
  csv_file& operator=(const csv_file&) = delete;
  __attribute__((format(printf, 2, 3))) void row(const char* format, ...) {
    if (!m_f) return;
    std::va_list args;
    va_start(args, format);
    std::vfprintf(m_f, format, args);
    va_end(args);
    std::fflush(m_f);
  }

private:
  std::FILE* m_f = nullptr;
};

} // namespace kronex_bench::sum
