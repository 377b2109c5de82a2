// kronex::factor_from_entries and choose_storage: each storage (diagonal, clamped band, periodic
// band, dense) at its boundaries, the summing of duplicates, the errors, and random patterns
// whose factor must equal the entries and whose band must be the narrowest one (found here by
// trying every band).
#define BOOST_TEST_MODULE factor_from_entries
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <limits>
#include <random>
#include <variant>
#include <vector>

#include <boost/mpl/list.hpp>
#include <xtensor/xtensor.hpp>

#include <kronex/factors/from_entries.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex::factor_kind;
using value_types = boost::mpl::list<float, double, std::complex<float>, std::complex<double>>;
template <class T>
using entries_t = std::vector<kronex::entry<T>>;

// The dense matrix the entries describe, duplicates summed.
template <class T>
xt::xtensor<T, 2> dense_of(std::size_t n, const entries_t<T>& entries) {
  xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
  for (const auto& e : entries) a(e.row, e.col) += e.value;
  return a;
}

// The dense matrix of a factor, read through its factor_view (as the plan compiler reads it).
template <class T>
xt::xtensor<T, 2> dense_of(const kronex::any_factor<T>& f) {
  const kronex::factor_view<T> v = kronex::make_view(f);
  xt::xtensor<T, 2> a = xt::zeros<T>({v.n, v.n});
  for (std::size_t i = 0; i < v.n; ++i)
    for (std::size_t j = 0; j < v.n; ++j) a(i, j) = v(i, j);
  return a;
}

template <class T>
factor_kind kind_of(const kronex::any_factor<T>& f) { return kronex::make_view(f).kind; }

// Builds the factor, checks that it holds exactly the entries and agrees with choose_storage,
// and returns the storage.
template <class T>
kronex::factor_storage check(std::size_t n, const entries_t<T>& entries, factor_kind want) {
  const kronex::any_factor<T> f = kronex::factor_from_entries(n, entries);
  const kronex::factor_storage s = kronex::choose_storage(n, entries);
  BOOST_TEST(f.size() == n);
  BOOST_TEST(to_string(kind_of(f)) == to_string(want));
  BOOST_TEST(to_string(s.kind) == to_string(want));
  BOOST_TEST((dense_of(f) == dense_of(n, entries)));
  const kronex::factor_view<T> v = kronex::make_view(f);
  if (want == factor_kind::banded) {
    BOOST_TEST((v.kl == s.band.kl && v.ku == s.band.ku && v.bc == s.band.bc));
  }
  return s;
}

std::vector<kronex::entry<double>> tridiagonal(std::size_t n) {
  std::vector<kronex::entry<double>> e;
  for (std::size_t i = 0; i < n; ++i) {
    e.push_back({i, i, 4.0 + double(i)});
    if (i + 1 < n) e.push_back({i, i + 1, -1.0 - double(i)});
    if (i > 0) e.push_back({i, i - 1, -2.0 - double(i)});
  }
  return e;
}

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(an_all_diagonal_pattern_is_a_diagonal_factor, T, value_types) {
  const entries_t<T> e = {{2, 2, T(3)}, {0, 0, T(-1)}, {3, 3, T(0.5)}};  // (1, 1) is zero
  check<T>(4, e, factor_kind::diagonal);
  BOOST_TEST(kronex::choose_storage<T>(4, e).stored_values() == 4u);
}

BOOST_AUTO_TEST_CASE(no_entries_is_a_zero_diagonal_and_n_1_is_diagonal) {
  check<double>(3, {}, factor_kind::diagonal);  // the zero matrix, compared entry by entry
  check<double>(1, {}, factor_kind::diagonal);
  check<double>(1, {{0, 0, 2.5}}, factor_kind::diagonal);
}

BOOST_AUTO_TEST_CASE(a_band_is_banded_up_to_half_of_n_then_dense) {
  // Tridiagonal, width 3: banded while 3 <= n / 2 (n = 6, 7), dense below (n = 5).
  auto s = check<double>(6, tridiagonal(6), factor_kind::banded);
  BOOST_TEST((s.band.kl == 1 && s.band.ku == 1 && s.band.bc == boundary::clamped));
  check<double>(7, tridiagonal(7), factor_kind::banded);
  check<double>(5, tridiagonal(5), factor_kind::dense);
  // kl = 2, ku = 1 (width 4): banded at n = 8, dense at n = 7.
  const std::vector<kronex::entry<double>> e = {{0, 0, 1}, {2, 0, 2}, {0, 1, 3}, {5, 3, 4}, {5, 6, 5}};
  s = check<double>(8, e, factor_kind::banded);
  BOOST_TEST((s.band.kl == 2 && s.band.ku == 1 && s.band.bc == boundary::clamped));
  BOOST_TEST(kronex::choose_storage(8, e).stored_values() == 32u);
  check<double>(7, e, factor_kind::dense);
  BOOST_TEST(kronex::choose_storage(7, e).stored_values() == 49u);
}

BOOST_AUTO_TEST_CASE(one_corner_entry_makes_the_band_periodic) {
  // A lower bidiagonal with the corner (0, 7): clamped it would be kl = 1, ku = 7 (dense); the
  // corner's offset +7 is -1 modulo 8, so the periodic band kl = 1, ku = 0 holds it all.
  std::vector<kronex::entry<double>> e = {{0, 7, 9.0}};
  for (std::size_t i = 0; i < 8; ++i) {
    e.push_back({i, i, 2.0 + double(i)});
    if (i > 0) e.push_back({i, i - 1, -1.0});
  }
  auto s = check<double>(8, e, factor_kind::banded);
  BOOST_TEST((s.band.kl == 1 && s.band.ku == 0 && s.band.bc == boundary::periodic));
  // Both corners on a tridiagonal: periodic kl = ku = 1.
  std::vector<kronex::entry<double>> t = tridiagonal(8);
  t.push_back({0, 7, 5.0});
  t.push_back({7, 0, 6.0});
  s = check<double>(8, t, factor_kind::banded);
  BOOST_TEST((s.band.kl == 1 && s.band.ku == 1 && s.band.bc == boundary::periodic));
  // Without corners the periodic band is no narrower: clamped.
  s = check<double>(8, tridiagonal(8), factor_kind::banded);
  BOOST_TEST((s.band.bc == boundary::clamped));
}

BOOST_AUTO_TEST_CASE(duplicates_are_summed_and_zero_sums_do_not_count) {
  // (0, 3) cancels: the pattern is diagonal, not a band or dense.
  check<double>(4, {{0, 0, 1}, {0, 3, 2}, {1, 1, 3}, {0, 3, -2}, {1, 1, 4}}, factor_kind::diagonal);
  const auto f = kronex::factor_from_entries<double>(4, {{1, 1, 3}, {1, 1, 4}});
  BOOST_TEST(kronex::make_view(f)(1, 1) == 7.0);
  const auto c = kronex::canonical_entries<double>({{2, 0, 1}, {0, 1, 0}, {0, 2, 5}, {2, 0, 2}});
  BOOST_REQUIRE(c.size() == 2u);
  BOOST_TEST((c[0].row == 0 && c[0].col == 2 && c[0].value == 5.0));
  BOOST_TEST((c[1].row == 2 && c[1].col == 0 && c[1].value == 3.0));
}

BOOST_AUTO_TEST_CASE(errors_name_the_entry) {
  using kronex_test::expect_error;
  expect_error<kronex::invalid_factor>([] { kronex::factor_from_entries<double>(4, {{0, 0, 1}, {1, 1, 1}, {4, 0, 1}}); },
                                       {"kronex::factor_from_entries: entry 2 (row 4, column 0) is outside the 4 x 4 matrix"});
  expect_error<kronex::invalid_factor>([] { kronex::choose_storage<double>(3, {{0, 3, 1}}); },
                                       {"kronex::choose_storage: entry 0 (row 0, column 3)"});
  expect_error<kronex::invalid_factor>([] { kronex::factor_from_entries<double>(0, {}); }, {"n must be at least 1"});
  // A storage the entries do not fit, or that is no storage for entries.
  kronex::factor_storage s;
  s.n = 4;
  expect_error<kronex::invalid_factor>([&] { kronex::factor_from_entries<double>(s, {{0, 1, 1}}); },
                                       {"entry (0, 1) is off the diagonal"});
  s.kind = factor_kind::banded;
  s.band = {1, 0, boundary::clamped};
  expect_error<kronex::invalid_factor>([&] { kronex::factor_from_entries<double>(s, {{0, 1, 1}}); },
                                       {"entry (0, 1) is outside the clamped band"});
  s.kind = factor_kind::identity;
  expect_error<kronex::invalid_factor>([&] { kronex::factor_from_entries<double>(s, {}); }, {"not identity"});
}

BOOST_AUTO_TEST_CASE(stored_values_saturate) {
  kronex::factor_storage s;
  s.kind = factor_kind::dense;
  s.n = std::size_t(1) << 40;
  BOOST_TEST(s.stored_values() == std::numeric_limits<std::size_t>::max());
  s.kind = factor_kind::diagonal;
  BOOST_TEST(s.stored_values() == s.n);
}

// Random patterns: the factor equals the entries, and the band is the narrowest one. The oracle
// tries every clamped and periodic band; the rule prefers clamped on a tie, and among periodic
// bands of one width the smallest max(kl, ku).
BOOST_AUTO_TEST_CASE_TEMPLATE(random_patterns_get_the_narrowest_band, T, value_types) {
  auto& g = kronex_test::rng();
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 12)(g);
    const std::size_t count = std::uniform_int_distribution<std::size_t>(0, 3 * n)(g);
    // Offsets near the diagonal or near a corner, so that both band kinds are exercised.
    std::uniform_int_distribution<long> near(-2, 2);
    std::uniform_int_distribution<std::size_t> row(0, n - 1);
    entries_t<T> e;
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t i = row(g);
      const std::size_t j = std::size_t((long(i) + near(g) + long(n)) % long(n));
      e.push_back({i, j, kronex_test::random_value<T>()});
    }
    BOOST_TEST_CONTEXT("trial " << trial << ", n = " << n) {
      const xt::xtensor<T, 2> want = dense_of(n, e);
      const kronex::any_factor<T> f = kronex::factor_from_entries(n, e);
      BOOST_TEST((dense_of(f) == want));

      const auto holds = [&](std::size_t kl, std::size_t ku, bool periodic) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            if (want(i, j) == T(0)) continue;
            long d = long(j) - long(i);
            const bool in = (d >= -long(kl) && d <= long(ku)) ||
                            (periodic && ((d > 0 && d - long(n) >= -long(kl)) || (d < 0 && d + long(n) <= long(ku))));
            if (!in) return false;
          }
        return true;
      };
      std::size_t clamped = 2 * n, periodic = 2 * n, periodic_max = n;
      for (std::size_t kl = 0; kl < n; ++kl)
        for (std::size_t ku = 0; ku < n; ++ku) {
          if (kl + ku < clamped && holds(kl, ku, false)) clamped = kl + ku;
          if (kl + ku < n && holds(kl, ku, true) &&
              (kl + ku < periodic || (kl + ku == periodic && std::max(kl, ku) < periodic_max))) {
            periodic = kl + ku;
            periodic_max = std::max(kl, ku);
          }
        }
      const kronex::factor_storage s = kronex::choose_storage(n, e);
      const bool is_periodic = periodic < clamped;
      BOOST_TEST((s.band.bc == (is_periodic ? boundary::periodic : boundary::clamped)));
      BOOST_TEST(s.band.kl + s.band.ku == (is_periodic ? periodic : clamped));
      if (is_periodic) BOOST_TEST(std::max(s.band.kl, s.band.ku) == periodic_max);
      BOOST_TEST(holds(s.band.kl, s.band.ku, is_periodic));
      const std::size_t width = s.band.kl + s.band.ku + 1;
      const factor_kind k = width == 1 ? factor_kind::diagonal : width <= n / 2 ? factor_kind::banded : factor_kind::dense;
      BOOST_TEST(to_string(kind_of(f)) == to_string(k));
    }
  }
}
