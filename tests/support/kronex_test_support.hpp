#pragma once
// Shared helpers for kronex tests: seeded random data (the seed is printed so a failure can be
// replayed with KRONEX_TEST_SEED=<seed>), relative errors, tolerances per value type, and random
// well-conditioned factors (band, periodic band, dense; optionally forcing pivoting) built from
// dense matrices the test keeps as the oracle's input, a random diagonal, a singular band.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>
#include <kronex/backends/host/gathered_tensor.hpp>
#include <kronex/backends/reference/reference.hpp>

namespace kronex_test {

// One seed per test process: from KRONEX_TEST_SEED if set, else from the clock; always printed.
// A printed plan without its condition estimates ("  rcond=..." after a factored factor's setup):
// what explain(), which factors nothing, prints for the same plan.
inline std::string without_rcond(std::string text) {
  const std::string key = "  rcond=";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at)) {
    std::size_t end = at + key.size();
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    text.erase(at, end - at);
  }
  return text;
}

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

// ---- Random factors with a known dense matrix --------------------------------------------------
// The dense matrix is built first, by the test, and only then written into a kronex factor; the
// oracle gets the test's matrix, so a storage or indexing bug in kronex cannot cancel out.

// The type a float-precision result is checked in: references for float and complex<float> are
// computed in double precision, so the tolerance measures only the error of the code under test.
template <class T>
using wide_t = std::conditional_t<kronex::value_traits<T>::is_complex, std::complex<double>, double>;

template <class T, std::size_t D>
xt::xtensor<wide_t<T>, D> widen(const xt::xtensor<T, D>& a) {
  xt::xtensor<wide_t<T>, D> w = xt::xtensor<wide_t<T>, D>::from_shape(a.shape());
  std::copy(a.data(), a.data() + a.size(), w.data());
  return w;
}

// A value with |v| in [lo, hi] and a random sign (real) or phase (complex).
template <class T>
T random_value_with_magnitude(double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi), angle(0.0, 2.0 * std::acos(-1.0));
  const double m = u(rng());
  if constexpr (kronex::value_traits<T>::is_complex) {
    const std::complex<double> v = std::polar(m, angle(rng()));
    return T(kronex::real_t<T>(v.real()), kronex::real_t<T>(v.imag()));
  } else {
    return T(std::bernoulli_distribution(0.5)(rng()) ? m : -m);
  }
}

// Diagonal of a matrix with `slots` off-diagonal entries per row and column, each |a| <= sqrt(2):
// at least three times any off-diagonal row or column sum, so the matrix is nonsingular, well
// conditioned (infinity-norm condition number at most 2, which keeps Kronecker products of six
// factors accurate in float) and needs no pivoting.
template <class T>
T dominant_diagonal(std::size_t slots) {
  const double d = 3.0 * std::sqrt(2.0) * double(slots) + 1.0;
  return random_value_with_magnitude<T>(d, d + 1.0);
}

// A random n x n matrix with band (kl, ku), wrapped around the corners when periodic (needs
// kl + ku < n). Entries are genuinely complex for complex T.
// pivot: the rows of a dominant (kl-1, ku-1) band matrix are swapped in pairs (0,1), (2,3), ...,
// which gives a (kl, ku) band matrix with a small diagonal and a large off-diagonal: partial
// pivoting must swap rows. Needs kl >= 1 and ku >= 1.
template <class T>
xt::xtensor<T, 2> random_band_matrix(std::size_t n, std::size_t kl, std::size_t ku, kronex::boundary bc,
                                     bool pivot) {
  if (pivot && (kl == 0 || ku == 0)) throw std::invalid_argument("random_band_matrix: pivot needs kl, ku >= 1");
  const std::size_t bl = pivot ? kl - 1 : kl, bu = pivot ? ku - 1 : ku;
  xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
  for (std::size_t i = 0; i < n; ++i) {
    for (long d = -long(bl); d <= long(bu); ++d) {
      long j = long(i) + d;
      if (bc == kronex::boundary::periodic) j = (j + long(n)) % long(n);
      else if (j < 0 || j >= long(n)) continue;
      a(i, std::size_t(j)) = d == 0 ? dominant_diagonal<T>(bl + bu) : random_value<T>();
    }
  }
  if (pivot)
    for (std::size_t i = 0; i + 1 < n; i += 2)
      for (std::size_t j = 0; j < n; ++j) std::swap(a(i, j), a(i + 1, j));
  return a;
}

// A random dense n x n matrix; pivot: its rows are put in a random order other than the identity.
template <class T>
xt::xtensor<T, 2> random_dense_matrix(std::size_t n, bool pivot) {
  xt::xtensor<T, 2> b = xt::xtensor<T, 2>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) b(i, j) = i == j ? dominant_diagonal<T>(n - 1) : random_value<T>();
  if (!pivot || n < 2) return b;
  std::vector<std::size_t> perm(n);
  std::iota(perm.begin(), perm.end(), std::size_t(0));
  std::shuffle(perm.begin(), perm.end(), rng());
  if (std::is_sorted(perm.begin(), perm.end())) std::rotate(perm.begin(), perm.begin() + 1, perm.end());
  xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a(i, j) = b(perm[i], j);
  return a;
}

// The band matrix `a` as a kronex::banded, written entry by entry through the public proxy
// (which throws if an entry falls outside the band).
template <class T>
kronex::banded<T> to_banded(const xt::xtensor<T, 2>& a, std::size_t kl, std::size_t ku, kronex::boundary bc) {
  const std::size_t n = a.shape()[0];
  kronex::banded<T> b(n, kl, ku, bc);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      if (a(i, j) != T(0)) b(i, j) = a(i, j);
  return b;
}

// Runs f, which must throw E (or a subclass of E) whose message contains every needle; returns
// the message (empty if nothing or something else was thrown).
template <class E, class F>
std::string expect_error(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
  } catch (const E& e) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE("caught: " << what);
    for (const auto& s : needles)
      BOOST_CHECK_MESSAGE(what.find(s) != std::string::npos, "'" << s << "' not in message: " << what);
    return what;
  } catch (const std::exception& e) {
    BOOST_ERROR("wrong exception type " << typeid(e).name() << ": " << e.what());
    return {};
  }
  BOOST_ERROR("expected an exception, nothing was thrown");
  return {};
}

// A random band factor (see random_band_matrix) as a kronex::banded.
template <class T>
kronex::banded<T> band(std::size_t n, std::size_t kl, std::size_t ku, kronex::boundary bc, bool pivot = false) {
  return to_banded(random_band_matrix<T>(n, kl, ku, bc, pivot), kl, ku, bc);
}

// A random diagonal factor, each |d_i| in [3 sqrt(2) + 1, 3 sqrt(2) + 2] (well away from zero).
template <class T>
kronex::diagonal_factor<T> random_diagonal(std::size_t n) {
  std::vector<T> d(n);
  for (auto& v : d) v = dominant_diagonal<T>(1);
  return kronex::diagonal(d);
}

// A tridiagonal 5x5 factor that is singular in exact arithmetic, and LU with partial pivoting
// finds the zero exactly: identity except the block [[1,1],[1,1]] on rows/columns 1..2.
// Column 1: no swap (|1| = |1|, the first wins), multiplier 1, U(2,2) = 1 - 1*1 = 0, so LAPACK
// reports info = 3 (1-based index of the zero pivot).
template <class T>
kronex::banded<T> singular_tridiagonal() {
  kronex::banded<T> S(5, 1, 1);
  for (std::size_t i = 0; i < 5; ++i) S(i, i) = T(1);
  S(1, 2) = T(1);
  S(2, 1) = T(1);
  return S;
}

// A banded factor (e.g. from the gallery) as a dense matrix, read through banded's own accessor.
template <class T>
xt::xtensor<T, 2> to_dense(const kronex::banded<T>& b) {
  const std::size_t n = b.size();
  xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a(i, j) = b(i, j);
  return a;
}

// While one lives, host plans compiled then stream every out-of-place output of at least this
// many bytes ("0": every one): KRONEX_HOST_STREAMING_MIN_BYTES, unset again when it dies (the
// tests never inherit one).
struct streaming_threshold {
  explicit streaming_threshold(const char* bytes) { setenv("KRONEX_HOST_STREAMING_MIN_BYTES", bytes, 1); }
  ~streaming_threshold() { unsetenv("KRONEX_HOST_STREAMING_MIN_BYTES"); }
  streaming_threshold(const streaming_threshold&) = delete;
  streaming_threshold& operator=(const streaming_threshold&) = delete;
};

// A C-order tensor b of this shape, copied into pieces for a gathered_tensor
// (backends/host/gathered_tensor.hpp): every axis of at least 2 entries cut at up to `cuts`
// random places, and each cell in an array of its own, padded on every axis (so its strides are
// not b's) at a random place in it. Reading the gathered tensor must give b's values.
template <class T>
struct scattered_tensor {
  std::vector<std::vector<T>> arrays;  // one per cell
  std::unique_ptr<kronex::detail::gathered_tensor<T>> tensor;
  // Where the cells are, to lay a scattered_output over the same arrays: the cuts, and per array
  // its cell, strides and the index of the cell's first value.
  std::vector<std::vector<std::size_t>> cuts;
  std::vector<std::size_t> cell;
  std::vector<kronex::shape_t> strides;
  std::vector<std::size_t> first;
};

template <class T>
scattered_tensor<T> scatter(const T* b, const kronex::shape_t& shape, std::size_t cuts) {
  const std::size_t d = shape.size();
  std::vector<std::vector<std::size_t>> at(d);
  for (std::size_t k = 0; k < d; ++k) {
    at[k].push_back(0);
    for (std::size_t c = 0; c < cuts && shape[k] > 1; ++c)
      at[k].push_back(std::uniform_int_distribution<std::size_t>(1, shape[k] - 1)(rng()));
    std::sort(at[k].begin(), at[k].end());
    at[k].erase(std::unique(at[k].begin(), at[k].end()), at[k].end());
  }
  scattered_tensor<T> s;
  s.tensor = std::make_unique<kronex::detail::gathered_tensor<T>>(shape, at);
  s.cuts = at;
  const kronex::shape_t strides = kronex::detail::c_strides(shape);
  std::vector<std::size_t> interval(d, 0);
  for (std::size_t c = 0; c < s.tensor->cells(); ++c) {
    kronex::shape_t first(d), extent(d), padded(d), place(d);
    for (std::size_t k = 0; k < d; ++k) {
      first[k] = at[k][interval[k]];
      extent[k] = (interval[k] + 1 < at[k].size() ? at[k][interval[k] + 1] : shape[k]) - first[k];
      place[k] = std::uniform_int_distribution<std::size_t>(0, 2)(rng());
      padded[k] = extent[k] + place[k] + std::uniform_int_distribution<std::size_t>(0, 2)(rng());
    }
    const kronex::shape_t cell_strides = kronex::detail::c_strides(padded);
    std::size_t size = 1, start = 0;
    for (std::size_t k = 0; k < d; ++k) size *= padded[k], start += place[k] * cell_strides[k];
    std::vector<T> a(size, T(0));
    std::vector<std::size_t> j(d, 0);  // the cell's own index, walked in C order
    for (std::size_t v = 0, count = kronex::detail::product(extent); v < count; ++v) {
      std::size_t from = 0, to = start;
      for (std::size_t k = 0; k < d; ++k) from += (first[k] + j[k]) * strides[k], to += j[k] * cell_strides[k];
      a[to] = b[from];
      for (std::size_t k = d; k-- > 0;) {
        if (++j[k] < extent[k]) break;
        j[k] = 0;
      }
    }
    s.tensor->set_cell(s.tensor->cell_index(interval), a.data(), cell_strides, start);
    s.cell.push_back(s.tensor->cell_index(interval));
    s.strides.push_back(cell_strides);
    s.first.push_back(start);
    s.arrays.push_back(std::move(a));  // the vector's buffer moves with it: the pointer stays valid
    for (std::size_t k = d; k-- > 0;) {
      if (++interval[k] < at[k].size()) break;
      interval[k] = 0;
    }
  }
  return s;
}

} // namespace kronex_test
