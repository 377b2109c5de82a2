// Operator algebra on the host against the dense reference (the dense sum of dense Kronecker
// products, solved by dense LU, or pinv for a pseudo-inverse): sums solved by fast
// diagonalisation in 1D to 4D, with and without a shift, K on several axes, different sizes
// per axis; apply of any sum; compositions, scalars, transposes and adjoints; the errors.
#define BOOST_TEST_MODULE test_operator_sums
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <string>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
namespace gallery = kronex::gallery;
using kronex_test::rel_error;

template <class T>
using mat = xt::xtensor<T, 2>;

// A random hermitian (symmetric) n x n matrix, and a random hermitian positive definite one.
template <class T>
mat<T> random_hermitian(std::size_t n) {
  mat<T> a = mat<T>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      T v = kronex_test::random_value<T>();
      if (i == j) v = T(std::real(v));
      a(i, j) = v;
      a(j, i) = kronex::detail::conj_if_complex(v);
    }
  return a;
}
template <class T>
mat<T> random_hpd(std::size_t n) {
  mat<T> a = random_hermitian<T>(n);
  for (std::size_t i = 0; i < n; ++i) a(i, i) = T(std::real(a(i, i)) + 2.0 * double(n));
  return a;
}

// Relative error of a solve against the reference, in the precision the reference uses.
template <class X, class R>
double err(const X& x, const R& r) { return rel_error(x, r); }

BOOST_AUTO_TEST_CASE(laplacian_like_sum_3d_matches_dense_reference) {
  // Mass and stiffness of quadratic B-splines, different sizes per axis; sigma > 0 makes the
  // (Neumann, singular) stiffness sum definite.
  const auto K0 = gallery::bspline_stiffness<double>(5, 2), M0 = gallery::bspline_mass<double>(5, 2);
  const auto K1 = gallery::bspline_stiffness<double>(6, 2), M1 = gallery::bspline_mass<double>(6, 2);
  const auto K2 = gallery::bspline_stiffness<double>(7, 2), M2 = gallery::bspline_mass<double>(7, 2);
  auto L = kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) + 0.5 * kronex::kron(M0, M1, M2);
  const auto b = kronex_test::random_tensor<double, 3>({5, 6, 7});
  xt::xtensor<double, 3> x = L.solve(b);
  BOOST_TEST(err(x, kronex::reference::solve(L, b)) < 1e-10);
  // The sum applied to the solution gives b back: apply and solve agree.
  xt::xtensor<double, 3> r = L.apply(x);
  BOOST_TEST(err(r, b) < 1e-10);
  xt::xtensor<double, 3> y = L.apply(b);
  BOOST_TEST(err(y, kronex::reference::apply(L, b)) < 1e-12);
}

// Fast diagonalisation's transforms take the compile options, but their V belong to the compiled
// operator (freed with it) and stay out of a factor_store given there, which knows factors by
// their address: another operator's V at a reused address would find the first one's forms.
BOOST_AUTO_TEST_CASE(fast_diagonalisation_transforms_stay_out_of_the_store) {
  const auto K0 = gallery::bspline_stiffness<double>(5, 2), M0 = gallery::bspline_mass<double>(5, 2);
  const auto K1 = gallery::bspline_stiffness<double>(6, 2), M1 = gallery::bspline_mass<double>(6, 2);
  auto L = kronex::kron(K0, M1) + kronex::kron(M0, K1) + 0.5 * kronex::kron(M0, M1);
  const auto b = kronex_test::random_tensor<double, 2>({5, 6});
  kronex::compile_options o;
  o.store = std::make_shared<kronex::factor_store>();
  auto S = kronex::compile(L.inverse(), b, o);
  BOOST_TEST(o.store->size() == 0u, S);
  BOOST_TEST(err(S(b), kronex::reference::solve(L, b)) < 1e-10);
}

BOOST_AUTO_TEST_CASE(sums_without_shift_and_with_k_on_several_axes) {
  // Dirichlet Laplacians are definite: sigma = 0 is fine. M = I on axis 0 (identity factor).
  const auto A = gallery::laplacian<double>(6), B = gallery::laplacian<double>(5);
  const auto MB = gallery::bspline_mass<double>(5, 1);
  const auto I6 = kronex::identity(6);
  const auto b = kronex_test::random_tensor<double, 2>({6, 5});
  auto L = kronex::kron(A, MB) + kronex::kron(I6, B);
  xt::xtensor<double, 2> x = L.solve(b);
  BOOST_TEST(err(x, kronex::reference::solve(L, b)) < 1e-10);
  // K on both axes in one term: K⊗K + K⊗M + 2 M⊗M (all eigenvalue products positive).
  auto L2 = kronex::kron(A, B) + kronex::kron(A, MB) + 2.0 * kronex::kron(I6, MB);
  xt::xtensor<double, 2> x2 = L2.solve(b);
  BOOST_TEST(err(x2, kronex::reference::solve(L2, b)) < 1e-10);
}

BOOST_AUTO_TEST_CASE(one_and_four_dimensions) {
  const auto K = gallery::laplacian<double>(7);
  const auto M = gallery::bspline_mass<double>(7, 1);
  auto L1 = kronex::kron(K) + 3.0 * kronex::kron(M);
  const auto b1 = kronex_test::random_tensor<double, 1>({7});
  xt::xtensor<double, 1> x1 = L1.solve(b1);
  BOOST_TEST(err(x1, kronex::reference::solve(L1, b1)) < 1e-10);

  const auto K3 = gallery::laplacian<double>(3), M3 = gallery::bspline_mass<double>(3, 1);
  const auto K4 = gallery::laplacian<double>(4), M4 = gallery::bspline_mass<double>(4, 1);
  auto L4 = kronex::kron(K3, M4, M3, M4) + kronex::kron(M3, K4, M3, M4) + kronex::kron(M3, M4, K3, M4) +
            kronex::kron(M3, M4, M3, K4);
  const auto b4 = kronex_test::random_tensor<double, 4>({3, 4, 3, 4});
  xt::xtensor<double, 4> x4 = L4.solve(b4);
  BOOST_TEST(err(x4, kronex::reference::solve(L4, b4)) < 1e-10);
}

template <class T>
void check_random_hermitian_sum(double tol) {
  // Random hermitian K and definite M per axis: the complex case exercises ?hegv and the
  // adjoint transforms; the shift is a real coefficient.
  const mat<T> K0 = random_hermitian<T>(5), M0 = random_hpd<T>(5), K1 = random_hermitian<T>(4), M1 = random_hpd<T>(4);
  auto L = kronex::kron(K0, M1) + kronex::kron(M0, K1) + 20.0 * kronex::kron(M0, M1);
  const auto b = kronex_test::random_tensor<T, 2>({5, 4});
  xt::xtensor<T, 2> x = L.solve(b);
  using W = kronex_test::wide_t<T>;
  const mat<W> wK0 = K0, wM0 = M0, wK1 = K1, wM1 = M1;
  auto Lw = kronex::kron(wK0, wM1) + kronex::kron(wM0, wK1) + 20.0 * kronex::kron(wM0, wM1);
  const auto ref = kronex::reference::solve(Lw, kronex_test::widen(b));
  BOOST_TEST(err(kronex_test::widen(x), ref) < tol, kronex::value_traits<T>::name);
}

BOOST_AUTO_TEST_CASE(every_value_type) {
  check_random_hermitian_sum<double>(1e-10);
  check_random_hermitian_sum<std::complex<double>>(1e-10);
  check_random_hermitian_sum<float>(1e-4);
  check_random_hermitian_sum<std::complex<float>>(1e-4);
}

BOOST_AUTO_TEST_CASE(apply_of_any_sum_and_composition) {
  // Not separable (three matrices on axis 0, none symmetric): apply works all the same.
  const auto A = kronex_test::band<double>(6, 1, 2, boundary::clamped), B = kronex_test::band<double>(6, 2, 1, boundary::periodic);
  const auto C = kronex_test::band<double>(6, 1, 1, boundary::clamped), D = kronex_test::band<double>(5, 1, 1, boundary::clamped);
  const auto E = kronex_test::band<double>(5, 2, 2, boundary::clamped);
  auto S = kronex::kron(A, D) - 2.0 * kronex::kron(B, E) + kronex::kron(C, D) * 0.25;
  const auto x = kronex_test::random_tensor<double, 2>({6, 5});
  xt::xtensor<double, 2> y = S.apply(x);
  BOOST_TEST(err(y, kronex::reference::apply(S, x)) < 1e-12);
  // Composition: apply B then A; its solve is B^{-1} A^{-1} (each a banded LU).
  auto P = kronex::kron(A, D) * kronex::kron(B, E);
  xt::xtensor<double, 2> py = P.apply(x);
  BOOST_TEST(err(py, kronex::reference::apply(P, x)) < 1e-12);
  xt::xtensor<double, 2> px = P.solve(x);
  BOOST_TEST(err(px, kronex::reference::solve(P, x)) < 1e-11);
  // A sum composed with a product, transposed: (S P)^T = P^T S^T.
  auto SP = (S * P).transpose();
  xt::xtensor<double, 2> spy = SP.apply(x);
  BOOST_TEST(err(spy, kronex::reference::apply(SP, x)) < 1e-12);
  // Unary minus and scalars on either side.
  auto N = -(3.0 * kronex::kron(A, D)) + kronex::kron(C, E) * 2;
  xt::xtensor<double, 2> ny = N.apply(x);
  BOOST_TEST(err(ny, kronex::reference::apply(N, x)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(adjoint_of_complex_sums_conjugates_coefficients) {
  using C = std::complex<double>;
  const auto A = kronex_test::band<C>(5, 1, 1, boundary::clamped), B = kronex_test::band<C>(4, 1, 2, boundary::clamped);
  const auto A2 = kronex_test::band<C>(5, 2, 0, boundary::periodic), B2 = kronex_test::band<C>(4, 0, 1, boundary::clamped);
  auto S = C(1, 2) * kronex::kron(A, B) + kronex::kron(A2, B2) * C(0, -1);
  const auto x = kronex_test::random_tensor<C, 2>({5, 4});
  for (int which = 0; which < 2; ++which) {
    xt::xtensor<C, 2> y = which ? xt::xtensor<C, 2>(S.adjoint().apply(x)) : xt::xtensor<C, 2>(S.transpose().apply(x));
    const auto ref = which ? kronex::reference::apply(S.adjoint(), x) : kronex::reference::apply(S.transpose(), x);
    BOOST_TEST(err(y, ref) < 1e-12, (which ? "adjoint" : "transpose"));
  }
  // Solving the adjoint of a composition: (A B)^{-H} = A^{-H} B^{-H}.
  auto P = (kronex::kron(A, B) * kronex::kron(A2, B2)).adjoint();
  xt::xtensor<C, 2> px = P.solve(x);
  BOOST_TEST(err(px, kronex::reference::solve(P, x)) < 1e-11);
}

BOOST_AUTO_TEST_CASE(compiled_sum_runs_in_place_and_prints_its_plan) {
  const auto K = gallery::bspline_stiffness<double>(6, 2), M = gallery::bspline_mass<double>(6, 2);
  auto L = kronex::kron(K, M) + kronex::kron(M, K) + 0.01 * kronex::kron(M, M);
  const auto b = kronex_test::random_tensor<double, 2>({6, 6});
  auto S = kronex::compile(L.inverse(), b);
  xt::xtensor<double, 2> x = S(b), y = b;
  S(y, y);  // in place
  BOOST_TEST(err(y, x) == 0.0);
  BOOST_TEST(err(x, kronex::reference::solve(L, b)) < 1e-10);
  const std::string plan = kronex::to_string(S.plan());
  BOOST_TEST_MESSAGE(plan);
  for (const char* needle : {"inverse(kron(f0,f1)+kron(f2,f3)+0.01*kron(f4,f5))", "axis 0  M=f2 (term 1) K=f0 (term 0)",
                             "sygv n=6", "lambda in [", "min |s|=", "mode 0  V0 C", "mode 1  V1 N", "eigen_scale terms=3"})
    BOOST_CHECK_MESSAGE(plan.find(needle) != std::string::npos, "'" << needle << "' not in the plan");
  // explain: the same steps from the check and plan phases, no eigenvalues.
  const std::string explained = kronex::explain(L.inverse(), b);
  BOOST_TEST(explained.find("sygv n=6") != std::string::npos);
  BOOST_TEST(explained.find("lambda") == std::string::npos);
  // An apply of the sum: each term's steps, then the combinations.
  auto A = kronex::compile(L, b);
  const std::string ap = kronex::to_string(A.plan());
  BOOST_TEST(ap.find("axpy a=0.01") != std::string::npos);
  BOOST_TEST(ap.find("(term 2)") != std::string::npos);
  xt::xtensor<double, 2> z = b;
  A(z, z);
  BOOST_TEST(err(z, kronex::reference::apply(L, b)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(not_separable_sums_are_refused_by_solve_only) {
  const auto K = gallery::laplacian<double>(5), M = gallery::bspline_mass<double>(5, 1);
  const auto N = kronex_test::band<double>(5, 1, 1, boundary::clamped);  // not symmetric
  const auto b = kronex_test::random_tensor<double, 2>({5, 5});
  auto three = kronex::kron(K, M) + kronex::kron(M, K) + kronex::kron(gallery::laplacian<double>(5, boundary::periodic), M);
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 2> x = three.solve(b); },
                                                   {"axis 0", "three different matrices", "f0 (term 0)", "f2 (term 1)", "f4 (term 2)"});
  xt::xtensor<double, 2> applied = three.apply(b);  // fine
  BOOST_TEST(err(applied, kronex::reference::apply(three, b)) < 1e-12);
  auto nonsym = kronex::kron(N, M) + kronex::kron(M, K);
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 2> x = nonsym.solve(b); },
                                                   {"f0 (term 0)", "axis 0", "not symmetric"});
  // Neither matrix on axis 0 definite.
  mat<double> P = xt::zeros<double>({std::size_t(5), std::size_t(5)}), Q = P;
  for (std::size_t i = 0; i < 5; ++i) {
    P(i, i) = i % 2 ? 1.0 : -1.0;
    Q(i, i) = i % 2 ? -2.0 : 1.0;
  }
  auto indefinite = kronex::kron(P, M) + kronex::kron(Q, K);
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 2> x = indefinite.solve(b); },
                                                   {"axis 0", "positive definite", "info"});
  // A term that is an inverse.
  auto inv = kronex::kron(K, M).inverse() + kronex::kron(M, K);
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 2> x = inv.solve(b); }, {"term 0"});
  // A complex coefficient on a real operator.
  auto cplx = std::complex<double>(0, 1) * kronex::kron(K, M);
  kronex_test::expect_error<kronex::error>([&] { xt::xtensor<double, 2> x = cplx.apply(b); }, {"complex", "double"});
  // Sizes that differ: at construction.
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { (void)(kronex::kron(K, M) + kronex::kron(K, kronex::identity(4))); },
                                                        {"(5,5)", "(5,4)"});
}

BOOST_AUTO_TEST_CASE(singular_sums_and_pseudo_inverse) {
  // Periodic Laplacians without shift: the constants are the null space, index (0,0).
  const auto K = gallery::laplacian<double>(6, boundary::periodic), M = gallery::bspline_mass<double>(6, 1, boundary::periodic);
  const auto K5 = gallery::laplacian<double>(5, boundary::periodic), M5 = gallery::bspline_mass<double>(5, 1, boundary::periodic);
  auto L = kronex::kron(K, M5) + kronex::kron(M, K5);
  const auto b = kronex_test::random_tensor<double, 2>({6, 5});
  kronex_test::expect_error<kronex::singular_factor>([&] { xt::xtensor<double, 2> x = L.solve(b); },
                                                     {"singular", "(0,0)", "pseudo_inverse"});
  // The minimum-norm least-squares solution, for an inconsistent right-hand side too (b has a
  // constant component).
  auto P = L.pseudo_inverse(1e-10);
  xt::xtensor<double, 2> x = P.apply(b);
  BOOST_TEST(err(x, kronex::reference::apply(P, b)) < 1e-10);
  // With a non-identity M (not orthogonal eigenvectors): a Dirichlet Laplacian with a singular
  // stiffness on one axis only, via K ⊗ M with K periodic and M clamped.
  const auto Mc = gallery::bspline_mass<double>(5, 2);
  auto L2 = kronex::kron(K, Mc);
  auto P2 = L2.pseudo_inverse(1e-10);
  xt::xtensor<double, 2> x2 = P2.apply(b);
  BOOST_TEST(err(x2, kronex::reference::apply(P2, b)) < 1e-10);
}

} // namespace
