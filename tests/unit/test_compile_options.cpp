// compile_options and the opt-in checks for non-finite values:
//  - min_rcond: the singularity threshold, by default n eps; a higher one refuses a factor the
//    default accepts, 0 accepts a nearly singular one the default refuses, but never an exactly
//    zero pivot nor a subnormal pivot whose solve overflows; the message names the mode, the
//    estimate and which threshold; explain() never factors, so it refuses nothing;
//  - check_finite: a NaN or Inf entry in a banded, periodic, dense or diagonal factor is an
//    invalid_factor naming the mode, the entry (row, column) and its value, in the check phase;
//  - kronex::check_finite(x, what) on an operand: non_finite_value with the C-order index;
//  - store: operators compiled with one factor_store share LUs and programs, and the matrices of
//    dense applies run as GEMMs, with the same results.
#define BOOST_TEST_MODULE test_compile_options
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include <kronex/kronex.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex_test::expect_error;

// A diagonal matrix stored as a band (kl = ku = 1, off-diagonals zero): its 1-norm condition
// number is max |d| / min |d| exactly, and LU does nothing to it.
kronex::banded<double> band_diagonal(const std::vector<double>& d) {
  kronex::banded<double> a(d.size(), 1, 1);
  for (std::size_t i = 0; i < d.size(); ++i) a(i, i) = d[i];
  return a;
}

} // namespace

BOOST_AUTO_TEST_CASE(min_rcond_sets_the_singularity_threshold) {
  const auto well = band_diagonal({1, 2, 4});  // rcond 0.25
  const xt::xtensor<double, 2> b = xt::ones<double>({3, 2});
  const auto I = kronex::identity(2);
  // Accepted by default (3 eps), refused above its condition.
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(well, I).inverse(), b));
  kronex::compile_options strict;
  strict.min_rcond = 0.5;
  expect_error<kronex::singular_factor>([&] { kronex::compile(kronex::kron(well, I).inverse(), b, strict); },
                                        {"mode 0", "0.25", "below the threshold 0.5", "compile_options::min_rcond"});
  strict.min_rcond = 0.2;
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(well, I).inverse(), b, strict));

  // rcond 1e-17: below the default n eps, accepted with 0, refused by the default with both
  // numbers in the message.
  const auto nearly = band_diagonal({1, 1, 1e-17});
  expect_error<kronex::singular_factor>([&] { kronex::compile(kronex::kron(I, nearly).inverse(), xt::ones<double>({2, 3})); },
                                        {"mode 1", "1e-17", "(n eps)"});
  kronex::compile_options lax;
  lax.min_rcond = 0;
  auto solver = kronex::compile(kronex::kron(I, nearly).inverse(), xt::ones<double>({2, 3}), lax);
  const xt::xtensor<double, 2> x = solver(xt::ones<double>({2, 3}));
  BOOST_TEST(x(1, 2) == 1e17, boost::test_tools::tolerance(1e-15));

  // Even with 0: an exactly zero pivot (LAPACK info), and a subnormal one whose solve overflows.
  const auto zero = band_diagonal({1, 0, 1});
  const std::string z = expect_error<kronex::singular_factor>(
      [&] { kronex::compile(kronex::kron(zero).inverse(), xt::xtensor<double, 1>(xt::ones<double>({3})), lax); },
      {"mode 0", "info=2"});
  const auto tiny = band_diagonal({1, 1e-310, 1});
  expect_error<kronex::singular_factor>(
      [&] { kronex::compile(kronex::kron(tiny).inverse(), xt::xtensor<double, 1>(xt::ones<double>({3})), lax); },
      {"mode 0", "estimate", "is 0"});

  // The same threshold reaches a dense factor (getrf, gecon).
  xt::xtensor<double, 2> dense = {{1, 0}, {0, 1e-17}};
  expect_error<kronex::singular_factor>([&] { kronex::compile(kronex::kron(dense).inverse(), xt::xtensor<double, 1>(xt::ones<double>({2}))); },
                                        {"mode 0", "gecon"});
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(dense).inverse(), xt::xtensor<double, 1>(xt::ones<double>({2})), lax));
  // explain() factors nothing: the threshold cannot apply there.
  BOOST_CHECK_NO_THROW(kronex::explain(kronex::kron(I, nearly).inverse(), kronex::shape_t{2, 3}));
}

BOOST_AUTO_TEST_CASE(check_finite_refuses_non_finite_factor_entries) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  kronex::compile_options check;
  check.check_finite = true;
  const xt::xtensor<double, 2> b = xt::ones<double>({4, 5});

  auto clamped = kronex_test::band<double>(4, 1, 1, boundary::clamped);
  clamped(2, 3) = nan;
  const auto D5 = kronex_test::random_diagonal<double>(5);
  expect_error<kronex::invalid_factor>([&] { kronex::compile(kronex::kron(clamped, D5).inverse(), b, check); },
                                       {"mode 0", "banded n=4", "A(2, 3)", "nan"});
  // Applies are checked too, and explain (the check phase) as well.
  expect_error<kronex::invalid_factor>([&] { kronex::explain_plan(kronex::kron(clamped, D5), b, check); },
                                       {"mode 0", "A(2, 3)"});

  auto periodic = kronex_test::band<double>(5, 1, 1, boundary::periodic);
  periodic(0, 4) = -inf;  // a corner: reported at its wrapped column
  expect_error<kronex::invalid_factor>(
      [&] { kronex::compile(kronex::kron(kronex::identity(4), periodic).inverse(), b, check); },
      {"mode 1", "periodic", "A(0, 4)", "-inf"});

  xt::xtensor<std::complex<double>, 2> dense = kronex_test::random_dense_matrix<std::complex<double>>(4, false);
  dense(3, 1) = std::complex<double>(1, inf);
  expect_error<kronex::invalid_factor>(
      [&] { kronex::compile(kronex::kron(dense).inverse(), xt::xtensor<std::complex<double>, 1>(xt::ones<std::complex<double>>({4})), check); },
      {"mode 0", "dense n=4", "A(3, 1)", "inf"});

  std::vector<double> values = kronex_test::random_diagonal<double>(5).values();
  values[4] = nan;
  const auto diag = kronex::diagonal(values);
  expect_error<kronex::invalid_factor>([&] { kronex::compile(kronex::kron(kronex_test::band<double>(4, 1, 1, boundary::clamped), diag), b, check); },
                                       {"mode 1", "diagonal n=5", "A(4, 4)", "nan"});
  // Finite factors pass.
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(kronex_test::band<double>(4, 1, 1, boundary::clamped), D5).inverse(), b, check));
}

BOOST_AUTO_TEST_CASE(check_finite_on_operands) {
  xt::xtensor<double, 3> x = xt::ones<double>({2, 3, 4});
  BOOST_CHECK_NO_THROW(kronex::check_finite(x));
  x(1, 2, 0) = std::numeric_limits<double>::quiet_NaN();
  x(1, 2, 3) = std::numeric_limits<double>::infinity();  // after the first: not reported
  expect_error<kronex::non_finite_value>([&] { kronex::check_finite(x, "right-hand side"); },
                                         {"right-hand side", "index (1, 2, 0)", "nan"});
  xt::xtensor<std::complex<float>, 1> c = xt::zeros<std::complex<float>>({3});
  c(2) = std::complex<float>(std::numeric_limits<float>::infinity(), 0);
  expect_error<kronex::non_finite_value>([&] { kronex::check_finite(c); }, {"tensor", "index (2)", "inf"});
}

// compile_options::store: operators compiled with one factor_store share each factor's LU (one
// factorization for N, T and C solves) and each (factor, op) program; the plans say "shared",
// the store counts its hits, and the results are those of operators compiled alone. A stricter
// threshold still refuses a factor whose LU came from the store; dropping the store keeps the
// compiled operators whole.
BOOST_AUTO_TEST_CASE(operators_compiled_with_one_store_share_factorizations) {
  const xt::xtensor<double, 2> A = {{4, 1, 0.5}, {1, 5, 1}, {0.5, 2, 6}};
  kronex::banded<double> B(4, 1, 1);
  for (std::size_t i = 0; i < 4; ++i) {
    B(i, i) = 3 + double(i);
    if (i + 1 < 4) B(i, i + 1) = -1, B(i + 1, i) = 0.5;
  }
  const auto K = kronex::kron(A, B);
  const xt::xtensor<double, 2> b = {{1, 2, 3, 4}, {-1, 0, 1, 2}, {0.5, 0.25, 0, 1}};

  kronex::compile_options o;
  o.store = std::make_shared<kronex::factor_store>();
  auto solve = kronex::compile(K.inverse(), b, o);
  BOOST_TEST(o.store->hits() == 0u);
  BOOST_TEST(o.store->size() == 4u);  // two LUs, two programs
  BOOST_TEST(kronex::to_string(solve.plan()).find("shared") == std::string::npos);

  auto solve_t = kronex::compile(K.transpose().inverse(), b, o);
  BOOST_TEST(o.store->hits() == 2u);  // both LUs; the transposed programs are new
  BOOST_TEST(o.store->size() == 6u);
  for (const auto& s : solve_t.plan().setup) BOOST_TEST(s.result.find(" shared") != std::string::npos);

  auto again = kronex::compile(K.inverse(), b, o);  // both programs, and the LUs for the numbers
  BOOST_TEST(o.store->hits() == 6u);
  BOOST_TEST(o.store->size() == 6u);
  auto apply = kronex::compile(K, b, o);
  auto apply_again = kronex::compile(K, b, o);
  BOOST_TEST(o.store->hits() == 8u);
  BOOST_TEST(o.store->size() == 8u);  // and the two apply programs
  BOOST_TEST(apply_again.plan().setup[0].result.find("shared") != std::string::npos);

  // The same numbers as operators compiled alone, also once the store is gone.
  o.store.reset();
  const auto close = boost::test_tools::tolerance(1e-13);
  const xt::xtensor<double, 2> x = kronex::compile(K.inverse(), b)(b), xt_ = kronex::compile(K.transpose().inverse(), b)(b);
  const xt::xtensor<double, 2> y = kronex::compile(K, b)(b);
  for (std::size_t i = 0; i < b.size(); ++i) {
    BOOST_TEST(solve(b).data()[i] == x.data()[i], close);
    BOOST_TEST(again(b).data()[i] == x.data()[i], close);
    BOOST_TEST(solve_t(b).data()[i] == xt_.data()[i], close);
    BOOST_TEST(apply(b).data()[i] == y.data()[i], close);
    BOOST_TEST(apply_again(b).data()[i] == y.data()[i], close);
  }
  BOOST_TEST(solve.plan().setup[0].rcond == again.plan().setup[0].rcond);

  // The threshold is each compile's own, checked on the shared estimate too.
  kronex::compile_options strict;
  strict.store = std::make_shared<kronex::factor_store>();
  kronex::compile(K.inverse(), b, strict);
  strict.min_rcond = 0.9;
  expect_error<kronex::singular_factor>([&] { kronex::compile(K.transpose().inverse(), b, strict); },
                                        {"mode 0", "below the threshold 0.9"});
  BOOST_TEST(strict.store->hits() >= 1u);
}

// Dense applies run as GEMMs (n >= 8) keep a copy of the matrix; with a store one copy serves N,
// T and C (only the BLAS flag differs) and a second, conjugated one the op no flag reaches (R on
// a mode other than the last). Results as without the store.
BOOST_AUTO_TEST_CASE(gemm_applies_share_their_matrix) {
  using C = std::complex<double>;
  const xt::xtensor<C, 2> A = kronex_test::random_dense_matrix<C>(10, false);
  const auto K = kronex::kron(A, kronex::identity(12));
  const xt::xtensor<C, 2> b = kronex_test::random_tensor<C>(std::array<std::size_t, 2>{10, 12});
  kronex::compile_options o;
  o.store = std::make_shared<kronex::factor_store>();
  auto n = kronex::compile(K, b, o);
  BOOST_TEST(kronex::to_string(n.plan()).find("  gemm  ") != std::string::npos);
  BOOST_TEST(o.store->size() == 1u);
  auto t = kronex::compile(K.transpose(), b, o);
  auto c = kronex::compile(K.adjoint(), b, o);
  BOOST_TEST(o.store->hits() == 2u);
  BOOST_TEST(o.store->size() == 1u);
  BOOST_TEST(c.plan().setup[0].result.find("shared") != std::string::npos);
  auto r = kronex::compile(K.transpose().adjoint(), b, o);
  BOOST_TEST(o.store->hits() == 2u);
  BOOST_TEST(o.store->size() == 2u);  // the conjugated copy
  BOOST_TEST(r.plan().setup[0].result.find("shared") == std::string::npos);
  // A store that handed R the unconjugated copy (or N, T, C a conjugated one) would differ here.
  o.store.reset();
  const xt::xtensor<C, 2> yn = kronex::compile(K, b)(b), yt = kronex::compile(K.transpose(), b)(b),
                          yc = kronex::compile(K.adjoint(), b)(b), yr = kronex::compile(K.transpose().adjoint(), b)(b);
  BOOST_TEST(kronex_test::rel_error(xt::xtensor<C, 2>(n(b)), yn) <= 1e-13);
  BOOST_TEST(kronex_test::rel_error(xt::xtensor<C, 2>(t(b)), yt) <= 1e-13);
  BOOST_TEST(kronex_test::rel_error(xt::xtensor<C, 2>(c(b)), yc) <= 1e-13);
  BOOST_TEST(kronex_test::rel_error(xt::xtensor<C, 2>(r(b)), yr) <= 1e-13);
}
