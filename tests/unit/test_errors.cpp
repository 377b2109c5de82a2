// Every runtime error path of kronex: the exception TYPE (the most derived class of the error
// tree in core/error.hpp) and the numbers in its MESSAGE (shapes, mode, LAPACK info, band widths),
// so a user can tell from the message alone what was wrong. Errors that must be compile-time are
// in tests/compile_fail/ (see tests/CMakeLists.txt).
#define BOOST_TEST_MODULE errors
#include <boost/test/unit_test.hpp>

#include <limits>

#include <array>
#include <complex>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xview.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using shape3 = std::array<std::size_t, 3>;

using kronex_test::expect_error;

using kronex_test::singular_tridiagonal;

// A 3x3 dense factor of rank 2 whose getrf hits an exact zero pivot at U(2,2) (info = 3):
// column 0 pivots on row 1 ([2,4,6]), multipliers 1/2 leave rows [0,0,0] and [0,-1,-2] (exact);
// column 1 pivots on [0,-1,-2], the multiplier for the zero row is 0, U(2,2) = 0.
template <class T>
xt::xtensor<T, 2> singular_dense() {
  return xt::xtensor<T, 2>{{T(1), T(2), T(3)}, {T(2), T(4), T(6)}, {T(1), T(1), T(1)}};
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The error tree.

BOOST_AUTO_TEST_CASE(error_hierarchy) {
  static_assert(std::is_base_of_v<std::runtime_error, kronex::error>);
  static_assert(std::is_base_of_v<kronex::error, kronex::dimension_mismatch>);
  static_assert(std::is_base_of_v<kronex::error, kronex::invalid_factor>);
  static_assert(std::is_base_of_v<kronex::error, kronex::singular_factor>);
  static_assert(std::is_base_of_v<kronex::error, kronex::lapack_error>);
  static_assert(std::is_base_of_v<kronex::error, kronex::backend_unavailable>);
  // One catch (const kronex::error&) and one catch (const std::runtime_error&) see everything
  // kronex throws: checked on one throw site of each kind that can be triggered from outside.
  auto M = kronex::gallery::bspline_mass<double>(4, 2);
  auto S = singular_tridiagonal<double>();
  const std::vector<std::function<void()>> throwers = {
      [&] { kronex::compile(kronex::kron(M, M).inverse(), std::array<std::size_t, 2>{4, 5}); },  // dimension_mismatch
      [&] { kronex::banded<double>(3, 3, 0); },                                                   // invalid_factor
      [&] { kronex::compile(kronex::kron(M, S).inverse(), std::array<std::size_t, 2>{4, 5}); },  // singular_factor
  };
  for (const auto& f : throwers) {
    BOOST_CHECK_THROW(f(), kronex::error);
    BOOST_CHECK_THROW(f(), std::runtime_error);
  }
}

// ---------------------------------------------------------------------------------------------
// Shape mismatches: both shapes and the offending mode in the message.

BOOST_AUTO_TEST_CASE(shape_mismatch_in_compile) {
  auto A4 = kronex::gallery::bspline_mass<double>(4, 2);
  auto A5 = kronex::gallery::bspline_mass<double>(5, 2);
  auto A6 = kronex::gallery::bspline_mass<double>(6, 2);
  const auto K = kronex::kron(A4, A5, A6);
  // Last mode wrong; the solve calls its operand the right-hand side.
  expect_error<kronex::dimension_mismatch>([&] { kronex::compile(K.inverse(), shape3{4, 5, 7}); },
                                           {"right-hand side", "(4,5,7)", "(4,5,6)", "mode 2", "7 != 6"});
  // First mode wrong, as an apply (its operand is the "operand"), shape given as std::vector.
  expect_error<kronex::dimension_mismatch>([&] { kronex::compile(K, std::vector<std::size_t>{3, 5, 6}); },
                                           {"operand", "(3,5,6)", "(4,5,6)", "mode 0", "3 != 4"});
  // A tensor as `like`.
  const xt::xtensor<double, 3> like = xt::zeros<double>({4, 9, 6});
  expect_error<kronex::dimension_mismatch>([&] { kronex::compile(K.inverse(), like); },
                                           {"(4,9,6)", "(4,5,6)", "mode 1", "9 != 5"});
  // Rank mismatch through a runtime shape: both ranks and shapes.
  expect_error<kronex::dimension_mismatch>([&] { kronex::compile(K.inverse(), std::vector<std::size_t>{4, 5}); },
                                           {"rank 2", "(4,5)", "3 factors", "(4,5,6)"});
  // explain() compiles, so it reports the same error.
  expect_error<kronex::dimension_mismatch>([&] { kronex::explain(K.inverse(), shape3{4, 5, 7}); },
                                           {"(4,5,7)", "(4,5,6)", "mode 2"});
}

BOOST_AUTO_TEST_CASE(shape_mismatch_in_lazy_evaluation) {
  auto A4 = kronex::gallery::bspline_mass<double>(4, 2);
  auto A5 = kronex::gallery::bspline_mass<double>(5, 2, boundary::periodic);
  auto A6 = kronex::gallery::laplacian<double>(6);
  const auto K = kronex::kron(A4, A5, A6);
  const auto b = kronex_test::random_tensor<double>(shape3{4, 5, 7});
  const auto b_copy = b;
  expect_error<kronex::dimension_mismatch>([&] { xt::xtensor<double, 3> x = K.solve(b); },
                                           {"(4,5,7)", "(4,5,6)", "mode 2", "7 != 6"});
  expect_error<kronex::dimension_mismatch>([&] { xt::xtensor<double, 3> y = K.apply(b); },
                                           {"(4,5,7)", "(4,5,6)", "mode 2", "7 != 6"});
  expect_error<kronex::dimension_mismatch>([&] { xt::xtensor<double, 3> x = K.transpose().solve(b); },
                                           {"(4,5,7)", "(4,5,6)", "mode 2"});
  BOOST_TEST(b == b_copy);  // a failed evaluation leaves the operand alone
  // A rank-2 xtensor for a rank-3 operator does not compile (tests/compile_fail/rank_mismatch.cpp);
  // an xarray's rank is known only at run time, where it is reported with both ranks.
  const xt::xarray<double> b2 = kronex_test::random_tensor<double>(std::array<std::size_t, 2>{4, 5});
  expect_error<kronex::dimension_mismatch>([&] { xt::xtensor<double, 3> x = K.solve(b2); },
                                           {"rank 2", "(4,5)", "3 factors", "(4,5,6)"});
  // A mismatch in the inner expression of a nested one is found when the inner one evaluates.
  expect_error<kronex::dimension_mismatch>([&] { xt::xtensor<double, 3> x = K.solve(K.apply(b)); },
                                           {"(4,5,7)", "(4,5,6)", "mode 2"});
}

BOOST_AUTO_TEST_CASE(shape_mismatch_in_compiled_calls) {
  auto A4 = kronex::gallery::bspline_mass<double>(4, 2);
  auto A5 = kronex::gallery::bspline_mass<double>(5, 2);
  auto A6 = kronex::gallery::bspline_mass<double>(6, 2);
  auto solver = kronex::compile(kronex::kron(A4, A5, A6).inverse(), shape3{4, 5, 6});
  const auto good = kronex_test::random_tensor<double>(shape3{4, 5, 6});
  const auto bad = kronex_test::random_tensor<double>(shape3{4, 5, 7});
  xt::xtensor<double, 3> x_good = xt::zeros<double>({4, 5, 6});
  xt::xtensor<double, 3> x_bad = xt::zeros<double>({4, 5, 7});
  const auto x_bad_before = x_bad;

  // Each message names which argument is wrong and holds both shapes.
  const std::string m_out = expect_error<kronex::dimension_mismatch>([&] { solver(good, x_bad); }, {"output", "(4,5,7)", "(4,5,6)"});
  BOOST_TEST(x_bad == x_bad_before);  // nothing was written
  const std::string m_in = expect_error<kronex::dimension_mismatch>([&] { solver(bad, x_good); }, {"input", "(4,5,7)", "(4,5,6)"});
  const std::string m_alloc = expect_error<kronex::dimension_mismatch>([&] { solver(bad); }, {"input", "(4,5,7)", "(4,5,6)"});
  // A view (the allocating form copies it to C order first): the view's shape, not the parent's.
  const auto big = kronex_test::random_tensor<double>(shape3{4, 6, 7});
  expect_error<kronex::dimension_mismatch>([&] { solver(xt::view(big, xt::all(), xt::range(0, 5), xt::all())); },
                                           {"input", "(4,5,7)", "(4,5,6)"});

  // Like the compile-time and lazy checks, the compiled call names the offending mode.
  for (const auto& m : {m_out, m_in, m_alloc})
    BOOST_CHECK_MESSAGE(m.find("at mode 2 (7 != 6)") != std::string::npos, "no mode in compiled-call message: " << m);

  // A rank-2 xarray to a rank-3 compiled operator (a rank-2 xtensor does not compile): the
  // message must show the shape the caller passed, (4,5), not a reshaped copy of it.
  const xt::xarray<double> r2 = kronex_test::random_tensor<double>(std::array<std::size_t, 2>{4, 5});
  expect_error<kronex::dimension_mismatch>([&] { solver(r2); }, {"input", "rank 2", "(4,5)", "(4,5,6)"});
}

// ---------------------------------------------------------------------------------------------
// Singular factors: mode() and info() and the same numbers in the message.

// `info`: LAPACK's, or -1 for "either": a factor singular in exact arithmetic whose rounded LU may
// or may not hit an exactly zero pivot (that depends on the machine's BLAS). When info() is 0 the
// condition estimate refused it, and the message says so.
template <class F>
void check_singular(F&& f, std::size_t mode, long info, const std::vector<std::string>& needles) {
  try {
    f();
    BOOST_ERROR("expected kronex::singular_factor, nothing was thrown");
  } catch (const kronex::singular_factor& e) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE("caught: " << what);
    BOOST_TEST(e.mode() == mode);
    if (info >= 0) BOOST_TEST(e.info() == info);
    if (e.info() == 0) BOOST_TEST(what.find("reciprocal condition number estimate") != std::string::npos, what);
    for (const auto& s : needles)
      BOOST_CHECK_MESSAGE(what.find(s) != std::string::npos, "'" << s << "' not in message: " << what);
  }
}

using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

BOOST_AUTO_TEST_CASE_TEMPLATE(singular_banded_factor, T, value_types) {
  auto M = kronex::gallery::bspline_mass<T>(4, 2);
  auto S = singular_tridiagonal<T>();
  const auto K = kronex::kron(M, S, M);
  const std::vector<std::string> needles = {"mode 1", "info=3", "gbtrf", "banded n=5 kl=1 ku=1 clamped"};
  check_singular([&] { kronex::compile(K.inverse(), shape3{4, 5, 4}); }, 1, 3, needles);
  const auto b = kronex_test::random_tensor<T>(shape3{4, 5, 4});
  check_singular([&] { xt::xtensor<T, 3> x = K.solve(b); }, 1, 3, needles);
  // Transposed and adjoint solves factor the same matrix: same zero pivot.
  check_singular([&] { xt::xtensor<T, 3> x = K.transpose().solve(b); }, 1, 3, needles);
  check_singular([&] { xt::xtensor<T, 3> x = K.adjoint().solve(b); }, 1, 3, needles);
  // Multiplying by a singular matrix is fine: nothing is factored.
  using X = xt::xtensor<T, 3>;
  BOOST_CHECK_NO_THROW(X y = K.apply(b));
}

// A periodic band is factored with LAPACK band widths that include the corners; a zero pivot
// there is reported the same way. Periodic n=4, kl=ku=1, corners (0,3) and (3,0) set, column 2
// all zero: row operations keep column 2 zero, so after two elimination steps the pivot
// candidates for column 2 are exact zeros and LAPACK reports info=3.
BOOST_AUTO_TEST_CASE(singular_periodic_banded_factor) {
  kronex::banded<double> P(4, 1, 1, boundary::periodic);
  P(0, 3) = 1.0; P(0, 0) = 2.0; P(0, 1) = 1.0;
  P(1, 0) = 1.0; P(1, 1) = 2.0;
  P(2, 1) = 1.0; P(2, 3) = 1.0;
  P(3, 3) = 2.0; P(3, 0) = 1.0;
  auto M = kronex::gallery::bspline_mass<double>(3, 1);
  check_singular([&] { kronex::compile(kronex::kron(P, M).inverse(), std::array<std::size_t, 2>{4, 3}); }, 0, 3,
                 {"mode 0", "info=3", "banded n=4 kl=1 ku=1 periodic"});
}

// Factors that are singular in exact arithmetic: refused whether or not their rounded LU hits an
// exactly zero pivot.
BOOST_AUTO_TEST_CASE_TEMPLATE(singular_to_working_precision, T, value_types) {
  auto M = kronex::gallery::bspline_mass<T>(5, 2);
  // The periodic Laplacian and the B-spline stiffness matrices annihilate constants.
  for (std::size_t n : {6, 32, 101}) {
    const auto P = kronex::gallery::laplacian<T>(n, boundary::periodic);
    check_singular([&] { kronex::compile(kronex::kron(M, P).inverse(), std::array<std::size_t, 2>{5, n}); }, 1,
                   -1, {"mode 1", "periodic"});
    const auto S = kronex::gallery::bspline_stiffness<T>(n, 3);
    check_singular([&] { kronex::compile(kronex::kron(S, M).inverse(), std::array<std::size_t, 2>{n, 5}); }, 0,
                   -1, {"mode 0"});
  }
  // Applying them factors nothing: no error.
  const auto P = kronex::gallery::laplacian<T>(6, boundary::periodic);
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(M, P), std::array<std::size_t, 2>{5, 6}));
}

// A nonzero pivot far below n eps: [[1, 1], [1, 1 + 8 eps]] has rcond about 2 eps, so it is
// refused with info() = 0 and the estimate in the message; [[1, 1], [1, 1 + 1/4]] is fine.
BOOST_AUTO_TEST_CASE(tiny_pivot_refused_by_condition_estimate) {
  const double eps = std::numeric_limits<double>::epsilon();
  const xt::xtensor<double, 2> A = {{1, 1}, {1, 1 + 8 * eps}};
  const xt::xtensor<double, 2> B = {{1, 1}, {1, 1.25}};
  auto M = kronex::gallery::bspline_mass<double>(3, 1);
  check_singular([&] { kronex::compile(kronex::kron(M, A).inverse(), std::array<std::size_t, 2>{3, 2}); }, 1, 0,
                 {"mode 1", "dense n=2", "gecon", "below the threshold"});
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(M, B).inverse(), std::array<std::size_t, 2>{3, 2}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(singular_dense_factor, T, value_types) {
  const auto D = singular_dense<T>();
  auto M = kronex::gallery::bspline_mass<T>(4, 2);
  const auto K = kronex::kron(M, M, D);
  const std::vector<std::string> needles = {"mode 2", "info=3", "getrf", "dense n=3"};
  check_singular([&] { kronex::compile(K.inverse(), shape3{4, 4, 3}); }, 2, 3, needles);
  const auto b = kronex_test::random_tensor<T>(shape3{4, 4, 3});
  check_singular([&] { xt::xtensor<T, 3> x = K.solve(b); }, 2, 3, needles);
  using X = xt::xtensor<T, 3>;
  BOOST_CHECK_NO_THROW(X y = K.apply(b));
}

// A zero in a diagonal factor: its solve divides by it. info is the 1-based position of the zero;
// the message names the 0-based entry: "... is singular: diagonal entry d(2) is zero, info=3".
BOOST_AUTO_TEST_CASE_TEMPLATE(zero_in_diagonal_factor, T, value_types) {
  auto M = kronex::gallery::bspline_mass<T>(4, 2);
  const auto d = kronex::diagonal(std::vector<T>{T(1), T(2), T(0), T(4)});
  const auto K = kronex::kron(M, d, M);
  check_singular([&] { kronex::compile(K.inverse(), shape3{4, 4, 4}); }, 1, 3,
                 {"mode 1", "info=3", "diagonal n=4", "is singular: diagonal entry d(2) is zero, info=3"});
  const auto b = kronex_test::random_tensor<T>(shape3{4, 4, 4});
  check_singular([&] { xt::xtensor<T, 3> x = K.solve(b); }, 1, 3, {"mode 1", "info=3"});
  check_singular([&] { xt::xtensor<T, 3> x = K.adjoint().solve(b); }, 1, 3, {"mode 1", "info=3"});
  // Applying it is fine and zeroes the hyperplane j = 2 of mode 1.
  xt::xtensor<T, 3> y = K.apply(b);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t k = 0; k < 4; ++k) BOOST_TEST(y(i, 2, k) == T(0));
  // Only an exact zero is singular: a tiny diagonal entry is not an error.
  const auto tiny = kronex::diagonal(std::vector<T>{T(1), T(2), T(1e-30f), T(4)});
  BOOST_CHECK_NO_THROW(kronex::compile(kronex::kron(M, tiny, M).inverse(), shape3{4, 4, 4}));
}

// ---------------------------------------------------------------------------------------------
// Invalid factors.

BOOST_AUTO_TEST_CASE(non_square_dense_factor) {
  auto M = kronex::gallery::bspline_mass<double>(4, 2);
  const xt::xtensor<double, 2> R = xt::zeros<double>({3, 4});
  // Thrown by kron() itself, with the mode and the shape.
  expect_error<kronex::invalid_factor>([&] { kronex::kron(M, R); }, {"mode 1", "square", "(3,4)"});
  expect_error<kronex::invalid_factor>([&] { kronex::kron(R, M, M); }, {"mode 0", "(3,4)"});
  const xt::xtensor<double, 2> E = xt::zeros<double>({0, 0});
  expect_error<kronex::invalid_factor>([&] { kronex::kron(M, M, E); }, {"mode 2", "non-empty", "(0,0)"});
}

BOOST_AUTO_TEST_CASE(banded_construction_errors) {
  using B = kronex::banded<double>;
  expect_error<kronex::invalid_factor>([] { B(0, 0, 0); }, {"n must be at least 1"});
  expect_error<kronex::invalid_factor>([] { B(0, 0, 0, boundary::periodic); }, {"n must be at least 1"});
  expect_error<kronex::invalid_factor>([] { B(4, 4, 0); }, {"kl=4", "ku=0", "n=4"});
  expect_error<kronex::invalid_factor>([] { B(4, 1, 5); }, {"kl=1", "ku=5", "n=4"});
  // Periodic: the wrapped diagonals must not overlap, kl + ku < n.
  expect_error<kronex::invalid_factor>([] { B(4, 2, 2, boundary::periodic); }, {"kl+ku < n", "kl=2", "ku=2", "n=4"});
  expect_error<kronex::invalid_factor>([] { B(5, 0, 5, boundary::periodic); }, {"kl=0", "ku=5", "n=5"});
  // The largest admissible widths are fine.
  BOOST_CHECK_NO_THROW(B(4, 3, 3));
  BOOST_CHECK_NO_THROW(B(5, 2, 2, boundary::periodic));
  BOOST_CHECK_NO_THROW(B(1, 0, 0));
  // Other factors with an empty size.
  expect_error<kronex::invalid_factor>([] { kronex::identity(0); }, {"identity", "at least 1"});
  expect_error<kronex::invalid_factor>([] { kronex::diagonal(std::vector<double>{}); }, {"diagonal", "at least one"});
}

BOOST_AUTO_TEST_CASE(band_access) {
  kronex::banded<double> A(5, 1, 2);
  const auto& C = A;
  A(2, 1) = 3.0;  // kl = 1: one subdiagonal
  A(2, 4) = 5.0;  // ku = 2: two superdiagonals
  A(2, 2) += 7.0;
  BOOST_TEST(double(A(2, 1)) == 3.0);
  BOOST_TEST(C(2, 4) == 5.0);
  BOOST_TEST(C(2, 2) == 7.0);
  // Reading outside the band gives 0 (const and proxy), writing throws with entry and band.
  BOOST_TEST(C(2, 0) == 0.0);
  BOOST_TEST(double(A(0, 4)) == 0.0);
  expect_error<kronex::invalid_factor>([&] { A(2, 0) = 1.0; }, {"(2, 0)", "outside", "clamped band", "kl=1", "ku=2", "n=5"});
  expect_error<kronex::invalid_factor>([&] { A(0, 3) += 1.0; }, {"(0, 3)", "outside"});
  expect_error<kronex::invalid_factor>([&] { A(4, 0) *= 2.0; }, {"(4, 0)", "outside"});
  // A failed write leaves the storage untouched.
  for (double v : A.diagonals()) BOOST_TEST((v == 0.0 || v == 3.0 || v == 5.0 || v == 7.0));

  // Periodic: the corners are inside the wrapped band, other far entries are not.
  kronex::banded<double> P(5, 1, 1, boundary::periodic);
  P(0, 4) = 2.0;
  P(4, 0) = 3.0;
  BOOST_TEST(double(P(0, 4)) == 2.0);
  BOOST_TEST(double(P(4, 0)) == 3.0);
  BOOST_TEST(P.in_band(0, 4));
  BOOST_TEST(!P.in_band(0, 2));
  BOOST_TEST(double(P(0, 2)) == 0.0);
  expect_error<kronex::invalid_factor>([&] { P(0, 2) = 1.0; }, {"(0, 2)", "periodic band", "n=5"});
  // The same corner is not in a clamped band.
  kronex::banded<double> Q(5, 1, 1);
  BOOST_TEST(!Q.in_band(0, 4));
  expect_error<kronex::invalid_factor>([&] { Q(0, 4) = 1.0; }, {"(0, 4)", "clamped band"});
}

BOOST_AUTO_TEST_CASE(index_out_of_range) {
  kronex::banded<double> A(5, 1, 1);
  const auto& C = A;
  // Out of range is an error for reads too (unlike out-of-band), const and not.
  expect_error<kronex::invalid_factor>([&] { (void)C(5, 0); }, {"index (5, 0)", "out of range", "n=5"});
  expect_error<kronex::invalid_factor>([&] { (void)C(0, 5); }, {"index (0, 5)", "n=5"});
  expect_error<kronex::invalid_factor>([&] { double v = A(7, 7); (void)v; }, {"index (7, 7)", "n=5"});
  expect_error<kronex::invalid_factor>([&] { A(5, 5) = 1.0; }, {"index (5, 5)", "n=5"});
  kronex::banded<double> P(5, 1, 1, boundary::periodic);
  // Periodic wrap-around applies to the band, not to the indices.
  expect_error<kronex::invalid_factor>([&] { P(0, 5) = 1.0; }, {"index (0, 5)", "n=5"});
}
