#pragma once
// Shared helpers for kronex tests: seeded random data (the seed is printed so a failure can be
// replayed with KRONEX_TEST_SEED=<seed>), relative errors, tolerances per value type.
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include <boost/test/unit_test.hpp>
#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>
#include <kronex/backends/reference/reference.hpp>

namespace kronex_test {

// One seed per test process: from KRONEX_TEST_SEED if set, else from the clock; always printed.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("KRONEX_TEST_SEED");
    const std::uint64_t v = env ? std::strtoull(env, nullptr, 10)
                                : std::uint64_t(std::random_device{}()) ^ 0x9e3779b97f4a7c15ull;
    std::cout << "kronex tests: random seed " << v << " (replay with KRONEX_TEST_SEED=" << v << ")" << std::endl;
    return v;
  }();
  return s;
}

inline std::mt19937_64& rng() {
  static std::mt19937_64 g(seed());
  return g;
}

template <class T>
T random_value() {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  if constexpr (kronex::value_traits<T>::is_complex) {
    using R = kronex::real_t<T>;
    return T(R(u(rng())), R(u(rng())));
  } else {
    return T(u(rng()));
  }
}

template <class T, std::size_t D>
xt::xtensor<T, D> random_tensor(const std::array<std::size_t, D>& shape) {
  xt::xtensor<T, D> t = xt::xtensor<T, D>::from_shape(shape);
  for (auto& v : t) v = random_value<T>();
  return t;
}

// Relative error max|a - b| / max|b| (max norm), 0 when both are zero.
template <class A, class B>
double rel_error(const A& a, const B& b) {
  double num = 0, den = 0;
  auto ib = b.begin();
  for (auto ia = a.begin(); ia != a.end(); ++ia, ++ib) {
    num = std::max(num, double(std::abs(*ia - *ib)));
    den = std::max(den, double(std::abs(*ib)));
  }
  return den == 0 ? num : num / den;
}

// 1e-12 for double, 1e-5 for float, as the quality bar asks.
template <class T>
double tolerance() {
  return std::is_same_v<kronex::real_t<T>, double> ? 1e-12 : 1e-5;
}

} // namespace kronex_test
