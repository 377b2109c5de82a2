// Substitution against the dense inverse, one mode at a time: the measurements behind the host
// planner's cost model (backends/host/cost_model.hpp) and its crossover table in
// docs/performance.md. Each case solves along one mode of a 3D tensor of about 2^21 values with
// the degree-p clamped B-spline mass matrix of size n (the other modes: identities, which the
// plan skips), first with compile_options::solves = substitution, then dense_inverse; it prints
// both medians, both of the model's predictions, what automatic picks and whether that was the
// faster one ("close": the other was faster by less than 25 %, within the margin automatic
// leaves to the substitution). Both results are checked against each other first.
//
//   bench_solve_methods [--type float|double|complex_double] [--n LIST] [--degree LIST]
//                       [--values V] [--reps R]
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>

#include <kronex_bench/timing.hpp>

namespace {

struct options {
  std::string type = "double";
  std::vector<std::size_t> n = {4, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  std::vector<std::size_t> degree = {1, 3, 5};
  std::size_t values = std::size_t(1) << 21;
  int reps = 15;
};

std::vector<std::size_t> parse_list(const char* s) {
  std::vector<std::size_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoul(item));
  return out;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--type") o.type = next();
    else if (a == "--n") o.n = parse_list(next());
    else if (a == "--degree") o.degree = parse_list(next());
    else if (a == "--values") o.values = std::stoul(next());
    else if (a == "--reps") o.reps = std::stoi(next());
    else {
      std::printf("usage: bench_solve_methods [--type float|double|complex_double] [--n LIST] [--degree LIST] "
                  "[--values V] [--reps R]\n");
      std::exit(a == "--help" ? 0 : 2);
    }
  }
  return o;
}

template <class T>
T random_value(std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (kronex::value_traits<T>::is_complex) return T(u(gen), u(gen));
  else return T(u(gen));
}

template <class T>
double max_rel_diff(const xt::xtensor<T, 3>& a, const xt::xtensor<T, 3>& b) {
  double d = 0, s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, double(std::abs(a.data()[i] - b.data()[i])));
    s = std::max(s, double(std::abs(b.data()[i])));
  }
  return d / s;
}

template <class T>
void run(const options& o) {
  std::printf("kronex solve methods: one mode of a 3D tensor of ~%zu values, clamped B-spline mass matrix, %s, "
              "1 thread, built with %s\n\n",
              o.values, kronex::value_traits<T>::name, KRONEX_BENCHMARK_FLAGS);
  std::printf("%4s %2s %-6s %15s %11s %11s %11s %11s %-8s %s\n", "n", "p", "mode", "view", "subst[ms]", "gemm[ms]",
              "model_s", "model_g", "auto", "auto_is_faster");
  const char* positions[] = {"first", "middle", "last"};
  for (std::size_t p : o.degree) {
    for (std::size_t n : o.n) {
      if (n < p + 1) continue;
      const auto M = kronex::gallery::bspline_mass<T>(n, p, kronex::boundary::clamped);
      const std::size_t q = std::max<std::size_t>(1, std::size_t(std::lround(std::sqrt(double(o.values) / double(n)))));
      for (int pos = 0; pos < 3; ++pos) {
        std::array<std::size_t, 3> shape{q, q, q};
        shape[std::size_t(pos)] = n;
        xt::xtensor<T, 3> b = xt::xtensor<T, 3>::from_shape(shape);
        std::mt19937_64 gen(n * 1000 + p * 10 + std::size_t(pos));
        for (auto& v : b) v = random_value<T>(gen);
        auto compile_with = [&](kronex::solve_method how) {
          kronex::compile_options opts;
          opts.threads = 1;
          opts.solves = how;
          const auto I = kronex::identity(q);
          if (pos == 0) return kronex::compile(kronex::kron(M, I, I).inverse(), b, opts);
          if (pos == 1) return kronex::compile(kronex::kron(I, M, I).inverse(), b, opts);
          return kronex::compile(kronex::kron(I, I, M).inverse(), b, opts);
        };
        auto subst = compile_with(kronex::solve_method::substitution);
        auto gemm = compile_with(kronex::solve_method::dense_inverse);
        auto automatic = compile_with(kronex::solve_method::automatic);
        xt::xtensor<T, 3> xs = xt::xtensor<T, 3>::from_shape(shape), xg = xs;
        subst(b, xs);
        gemm(b, xg);
        const double diff = max_rel_diff(xg, xs);
        if (!(diff < 1e3 * double(std::numeric_limits<typename kronex::value_traits<T>::real_type>::epsilon()) * double(n)))
          std::printf("WARNING: the two methods differ by %.3g\n", diff);
        const auto ts = kronex_bench::sorted_seconds(o.reps, [&] { subst(b, xs); });
        const auto tg = kronex_bench::sorted_seconds(o.reps, [&] { gemm(b, xg); });
        const auto& st = kronex::step_info(subst.plan().steps.at(0));
        const std::string chosen = kronex::step_method(automatic.plan().steps.at(0));
        const double ms = ts[ts.size() / 2], mg = tg[tg.size() / 2];
        const bool auto_gemm = chosen.rfind("gemm", 0) == 0;
        std::printf("%4zu %2zu %-6s %5zux%4zux%4zu %11.4f %11.4f %11.4f %11.4f %-8s %s\n", n, p, positions[pos],
                    st.view[0], st.view[1], st.view[2], ms * 1e3, mg * 1e3, st.model_subst_s * 1e3,
                    st.model_gemm_s * 1e3, auto_gemm ? "gemm" : "lu_subst",
                    (auto_gemm == (mg < ms)) ? "yes" : (std::abs(mg - ms) < 0.25 * std::min(mg, ms) ? "close" : "NO"));
      }
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  if (o.type == "float") run<float>(o);
  else if (o.type == "double") run<double>(o);
  else if (o.type == "complex_double" || o.type == "complex") run<std::complex<double>>(o);
  else {
    std::fprintf(stderr, "bench_solve_methods: unknown --type %s\n", o.type.c_str());
    return 2;
  }
}
