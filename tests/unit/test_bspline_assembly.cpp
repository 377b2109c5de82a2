// gallery::variable_mass, variable_stiffness and variable_helmholtz (kronex/operators/
// bspline_assembly.hpp) against what they must equal:
//   - for a constant coefficient, the Kronecker products of the 1D gallery matrices (applied by
//     kronex's own kron, so a wrong quadrature point, a wrong scatter or a wrong CSR position
//     shows), in 1D, 2D and 3D, clamped splines of degree 1 to 3;
//   - for a polynomial coefficient, exact integrals: 1ᵀ A 1 = ∫ c for the mass matrix (the
//     splines sum to one) and gᵀ A g = ∫ c for the stiffness matrix, g the Greville coordinates
//     of x_k (they represent u(x) = x_k exactly, with ∇u = e_k); A 1 = 0 for the stiffness;
//   - symmetry, and the errors.
#define BOOST_TEST_MODULE test_bspline_assembly
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstddef>
#include <vector>

#include <kronex/kronex.hpp>
#include <kronex/operators/bspline_assembly.hpp>

#include "kronex_test_support.hpp"

namespace {

namespace gallery = kronex::gallery;
using kronex_test::rel_error;

const auto one = [](const double*) { return 1.0; };

// Greville abscissae of n clamped splines of degree p on uniform knots: (t_{i+1} + ... + t_{i+p}) / p.
std::vector<double> greville(std::size_t n, std::size_t p) {
  const std::size_t ne = n - p;
  std::vector<double> t(n + p + 1), g(n);
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = k <= p ? 0.0 : (k >= n ? 1.0 : double(k - p) / double(ne));
  for (std::size_t i = 0; i < n; ++i) {
    double s = 0;
    for (std::size_t k = 1; k <= p; ++k) s += t[i + k];
    g[i] = s / double(p);
  }
  return g;
}

template <std::size_t D>
double quadratic_form(const kronex::sparse_operator<double>& A, const xt::xtensor<double, D>& u) {
  const xt::xtensor<double, D> Au = A.apply(u);
  return xt::sum(u * Au)();
}

} // namespace

BOOST_AUTO_TEST_CASE(constant_coefficient_is_the_kronecker_product_of_the_1d_matrices) {
  for (std::size_t p = 1; p <= 3; ++p) {
    BOOST_TEST_CONTEXT("degree " << p) {
      const std::size_t n0 = p + 2, n1 = p + 4, n2 = p + 3;
      const auto M0 = gallery::bspline_mass<double>(n0, p), M1 = gallery::bspline_mass<double>(n1, p),
                 M2 = gallery::bspline_mass<double>(n2, p);
      const auto K0 = gallery::bspline_stiffness<double>(n0, p), K1 = gallery::bspline_stiffness<double>(n1, p),
                 K2 = gallery::bspline_stiffness<double>(n2, p);
      const auto c = [](const double*) { return 2.5; };

      const auto x3 = kronex_test::random_tensor<double, 3>({n0, n1, n2});
      const xt::xtensor<double, 3> mass = gallery::variable_mass<double>({n0, n1, n2}, p, c).apply(x3);
      const xt::xtensor<double, 3> mass_ref = 2.5 * kronex::kron(M0, M1, M2).apply(x3).eval();
      BOOST_TEST(rel_error(mass, mass_ref) < 1e-13);

      const xt::xtensor<double, 3> stiff = gallery::variable_stiffness<double>({n0, n1, n2}, p, c).apply(x3);
      const xt::xtensor<double, 3> stiff_ref =
          2.5 * (kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2)).apply(x3).eval();
      BOOST_TEST(rel_error(stiff, stiff_ref) < 1e-13);

      const xt::xtensor<double, 3> helm = gallery::variable_helmholtz<double>({n0, n1, n2}, p, c, 3.0).apply(x3);
      BOOST_TEST(rel_error(helm, xt::xtensor<double, 3>(stiff_ref + 3.0 * mass_ref)) < 1e-13);

      const auto x2 = kronex_test::random_tensor<double, 2>({n1, n0});
      const xt::xtensor<double, 2> mass2 = gallery::variable_mass<double>({n1, n0}, p, one).apply(x2);
      BOOST_TEST(rel_error(mass2, xt::xtensor<double, 2>(kronex::kron(M1, M0).apply(x2).eval())) < 1e-13);

      const auto x1 = kronex_test::random_tensor<double, 1>({n2});
      const xt::xtensor<double, 1> stiff1 = gallery::variable_stiffness<double>({n2}, p, one).apply(x1);
      BOOST_TEST(rel_error(stiff1, xt::xtensor<double, 1>(kronex::kron(K2).apply(x1).eval())) < 1e-13);
    }
  }
}

BOOST_AUTO_TEST_CASE(polynomial_coefficient_is_integrated_exactly) {
  // c = 1 + x y z (degree 1 per axis): ∫ c over the unit cube = 1 + 1/8.
  const auto c = [](const double* x) { return 1.0 + x[0] * x[1] * x[2]; };
  const std::size_t p = 2, n0 = 5, n1 = 6, n2 = 7;
  const auto mass = gallery::variable_mass<double>({n0, n1, n2}, p, c);
  const auto stiff = gallery::variable_stiffness<double>({n0, n1, n2}, p, c);
  const xt::xtensor<double, 3> ones = xt::ones<double>({n0, n1, n2});
  BOOST_TEST(std::abs(quadratic_form(mass, ones) - 1.125) < 1e-13);
  BOOST_TEST(xt::amax(xt::abs(stiff.apply(ones)))() < 1e-12);  // constants are in the kernel

  // u = x_k: its spline coefficients are the Greville coordinates along axis k.
  const std::size_t n[3] = {n0, n1, n2};
  for (std::size_t k = 0; k < 3; ++k) {
    BOOST_TEST_CONTEXT("u = x_" << k) {
      const std::vector<double> g = greville(n[k], p);
      xt::xtensor<double, 3> u = xt::xtensor<double, 3>::from_shape({n0, n1, n2});
      for (std::size_t i = 0; i < n0; ++i)
        for (std::size_t j = 0; j < n1; ++j)
          for (std::size_t l = 0; l < n2; ++l) u(i, j, l) = g[k == 0 ? i : k == 1 ? j : l];
      BOOST_TEST(std::abs(quadratic_form(stiff, u) - 1.125) < 1e-12);
    }
  }
}

BOOST_AUTO_TEST_CASE(variable_operators_are_symmetric) {
  const auto c = [](const double* x) { return 1.0 + 0.9 * std::sin(3.0 * x[0] + 2.0 * x[1] - x[2]); };
  const auto A = gallery::variable_helmholtz<double>({4, 5, 6}, 3, c, 0.5);
  const auto u = kronex_test::random_tensor<double, 3>({4, 5, 6}), v = kronex_test::random_tensor<double, 3>({4, 5, 6});
  const xt::xtensor<double, 3> Av = A.apply(v), Au = A.apply(u);
  const double uAv = xt::sum(u * Av)(), vAu = xt::sum(v * Au)();
  // Relative to the terms' size (|u| |Av| + |v| |Au|), not to uAv, which cancellation can make as
  // small as it likes for random u and v.
  const auto norm = [](const xt::xtensor<double, 3>& x) { return std::sqrt(xt::sum(x * x)()); };
  BOOST_TEST(std::abs(uAv - vAu) <= 1e-13 * (norm(u) * norm(Av) + norm(v) * norm(Au)));
  // Every row holds its whole (2p+1)^3 box, clipped at the boundary: row (2, 2, 2) of (4, 5, 6).
  const std::size_t row = (2 * 5 + 2) * 6 + 2;
  BOOST_TEST(A.row_ptr()[row + 1] - A.row_ptr()[row] == std::size_t(4 * 5 * 6));
}

BOOST_AUTO_TEST_CASE(errors_name_the_problem) {
  kronex_test::expect_error<kronex::invalid_operator>([] { gallery::variable_mass<double>({3, 3, 3, 3}, 1, one); },
                                                      {"variable_mass", "(3,3,3,3)", "4 axes; 1 to 3 are supported"});
  kronex_test::expect_error<kronex::invalid_factor>([] { gallery::variable_mass<double>({4, 2}, 2, one); },
                                                    {"needs n >= 3 basis functions, got n=2"});
  kronex_test::expect_error<kronex::invalid_factor>([] { gallery::variable_stiffness<double>({4}, 0, one); },
                                                    {"variable_stiffness", "degree must be at least 1"});
}
