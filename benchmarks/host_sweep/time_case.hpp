#pragma once
// The timed solve of one sweep case, for one value type T (included by time_case_<type>.cpp).
#include <algorithm>
#include <array>
#include <chrono>
#include <complex>
#include <random>
#include <stdexcept>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>

#include <kronex_bench/timing.hpp>

#include "host_sweep.hpp"

namespace kronex_bench::detail {

template <class T>
T random_value(std::mt19937_64& gen) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (kronex::value_traits<T>::is_complex) {
    using R = typename T::value_type;
    const R re = R(u(gen));
    return T(re, R(u(gen)));
  } else {
    return T(u(gen));
  }
}

inline int auto_reps(double unknowns) { return unknowns <= 2e5 ? 41 : (unknowns <= 4e6 ? 15 : 7); }

template <class T, std::size_t D>
sweep_timing time_rank(const sweep_case& c) {
  const auto M = kronex::gallery::bspline_mass<T>(c.n, c.degree, c.bc);
  std::array<std::size_t, D> shape;
  shape.fill(c.n);
  xt::xtensor<T, D> b = xt::xtensor<T, D>::from_shape(shape);
  std::mt19937_64 gen(c.n * 131 + c.degree);
  for (auto& v : b) v = random_value<T>(gen);
  xt::xtensor<T, D> x = xt::xtensor<T, D>::from_shape(shape);
  kronex::compile_options options;
  options.threads = c.threads;
  options.solves = c.solves;
  auto solver = [&] {
    if constexpr (D == 2) return kronex::compile(kronex::kron(M, M).inverse(), b, options);
    else if constexpr (D == 3) return kronex::compile(kronex::kron(M, M, M).inverse(), b, options);
    else return kronex::compile(kronex::kron(M, M, M, M).inverse(), b, options);
  }();
  const double unknowns = double(b.size());
  const int reps = c.reps > 0 ? c.reps : auto_reps(unknowns);
  for (int w = 0; w < std::max(c.warmup, 1); ++w) solver(b, x);  // at least one: first touch of x
  const std::vector<double> t = kronex_bench::sorted_seconds(reps, [&] { solver(b, x); });
  return {unknowns, t[t.size() / 2], t.front(), solver.plan().bytes(), reps, solver.plan().threads};
}

template <class T>
sweep_timing time_typed(const sweep_case& c) {
  switch (c.dim) {
    case 2: return time_rank<T, 2>(c);
    case 3: return time_rank<T, 3>(c);
    case 4: return time_rank<T, 4>(c);
    default: throw std::invalid_argument("bench_host_sweep: dimension must be 2, 3 or 4");
  }
}

} // namespace kronex_bench::detail
