#define BOOST_TEST_MODULE kronex_host_panels
// Panel walks on tensors too large for the dense Kronecker reference: many panels per mode,
// partial panels and strips, each way of gathering lines (contiguous runs, the last-mode
// transpose, element gathers), and fused pairs with grouped slabs. The expected result applies
// each factor's dense inverse along its mode, one LAPACK solve per mode on the moved axis
// (xt::linalg), which shares nothing with the host kernels.
#include <boost/test/unit_test.hpp>

#include <array>
#include <string>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xmanipulation.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;

// x = A^{-1} along `mode` of t: move the mode to the front, solve A X = T(n, lines), move back.
template <std::size_t D>
xt::xtensor<double, D> solve_along(const xt::xtensor<double, 2>& a, const xt::xtensor<double, D>& t, std::size_t mode) {
  std::array<std::size_t, D> perm{};
  perm[0] = mode;
  for (std::size_t k = 0, j = 1; k < D; ++k)
    if (k != mode) perm[j++] = k;
  xt::xtensor<double, D> moved = xt::transpose(t, perm);
  const std::size_t n = moved.shape()[0], lines = moved.size() / n;
  xt::xtensor<double, 2> rhs = xt::reshape_view(moved, {n, lines});
  xt::xtensor<double, 2> sol = xt::linalg::solve(a, rhs);
  std::copy(sol.begin(), sol.end(), moved.begin());
  std::array<std::size_t, D> inv{};
  for (std::size_t k = 0; k < D; ++k) inv[perm[k]] = k;
  return xt::transpose(moved, inv);
}

template <std::size_t D>
void check_solve(const std::array<kronex::banded<double>, D>& f, const std::array<std::size_t, D>& shape,
                 const std::string& what) {
  const auto b = kronex_test::random_tensor<double>(shape);
  xt::xtensor<double, D> expected = b;
  for (std::size_t k = 0; k < D; ++k)
    expected = solve_along<D>(kronex::reference::dense(kronex::make_view(f[k])), expected, k);
  auto K = std::apply([](const auto&... a) { return kronex::kron(a...); }, f);
  xt::xtensor<double, D> x = K.solve(b);
  BOOST_TEST(kronex_test::rel_error(x, expected) <= 1e-12, what << ": out of place, error " << kronex_test::rel_error(x, expected));
  auto solver = kronex::compile(K.inverse(), b);
  xt::xtensor<double, D> y = b;
  solver(y, y);
  BOOST_TEST(kronex_test::rel_error(y, expected) <= 1e-12, what << ": in place, error " << kronex_test::rel_error(y, expected));
  BOOST_TEST_MESSAGE(what << "\n" << solver);
}

kronex::banded<double> eye(std::size_t n) {
  kronex::banded<double> a(n, 0, 0);
  for (std::size_t i = 0; i < n; ++i) a(i, i) = 1.0;
  return a;
}

} // namespace

// Mode 0 with a long trailing size (contiguous runs, more lines than one panel holds: n = 3
// gives 64 strips of 16 per panel, 1024 lines, and 1488 lines here: 93 strips, a full panel and
// a partial one).
BOOST_AUTO_TEST_CASE(many_panels_contiguous_runs) {
  check_solve<2>({kronex::gallery::bspline_mass<double>(3, 2), eye(1488)}, {3, 1488}, "(3,1488) mode 0, R % 16 == 0");
  check_solve<2>({kronex::gallery::bspline_mass<double>(5, 3, boundary::clamped), eye(1100)}, {5, 1100},
                 "(5,1100) mode 0, R % 16 != 0: element gathers");
}

// The last mode: lines are contiguous, the gather is a transpose; a partial last strip.
BOOST_AUTO_TEST_CASE(many_panels_last_mode) {
  check_solve<2>({eye(1201), kronex::gallery::bspline_mass<double>(7, 3, boundary::periodic)}, {1201, 7},
                 "(1201,7) last mode, periodic");
}

// Fused pairs (modes 1 and 2, L > 1) with many slabs per group and a partial last group, plus
// slabs too large to group more than one at a time.
BOOST_AUTO_TEST_CASE(fused_pairs_grouped_slabs) {
  check_solve<3>({kronex::gallery::bspline_mass<double>(9, 3), kronex::gallery::bspline_mass<double>(20, 3),
                  kronex::gallery::bspline_mass<double>(4, 1)},
                 {9, 20, 4}, "(9,20,4): small slabs, one group");
  check_solve<3>({eye(700), kronex::gallery::bspline_mass<double>(8, 2, boundary::periodic),
                  kronex::gallery::bspline_mass<double>(5, 2, boundary::periodic)},
                 {700, 8, 5}, "(700,8,5): groups of 1638 slabs cover 700 at once");
  check_solve<3>({kronex::gallery::bspline_mass<double>(3, 2), kronex::gallery::bspline_mass<double>(200, 3),
                  kronex::gallery::bspline_mass<double>(330, 3, boundary::periodic)},
                 {3, 200, 330}, "(3,200,330): slab of 516 KiB, not fused");
  check_solve<3>({kronex::gallery::bspline_mass<double>(5, 2), kronex::gallery::bspline_mass<double>(160, 3),
                  kronex::gallery::bspline_mass<double>(160, 3, boundary::periodic)},
                 {5, 160, 160}, "(5,160,160): 200 KiB slabs, groups of 2, partial last group");
}
