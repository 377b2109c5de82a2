// Operator sums on the device: the fast-diagonalisation solve, an applied sum and a composition,
// against the dense reference; a solve makes no host<->device transfer (checked under
// kronex::no_transfer_guard), and compile makes exactly the uploads its plan counts (one dense
// V_d per transformed axis and per transform, the scaling's coefficients and eigenvalues, and a
// pseudo-inverse's rank-one tensors), pseudo-inverses included.
// Built against the CPU device (CI) and CUDA (a GPU machine).
#define BOOST_TEST_MODULE test_device_sums
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <string>

#include "kronex_device_test_support.hpp"

namespace {

namespace gallery = kronex::gallery;
using kronex_test::random_tensor;
using kronex_test::rel_error;

template <class T>
void check_laplacian_like_sum() {
  const auto K0 = gallery::bspline_stiffness<T>(6, 2), M0 = gallery::bspline_mass<T>(6, 2);
  const auto K1 = gallery::bspline_stiffness<T>(5, 2), M1 = gallery::bspline_mass<T>(5, 2);
  const auto K2 = gallery::bspline_stiffness<T>(4, 2), M2 = gallery::bspline_mass<T>(4, 2);
  auto L = kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) + 0.25 * kronex::kron(M0, M1, M2);
  const auto b = random_tensor<T, 3>({6, 5, 4});
  const kronex::device_tensor<T, 3> bd(b);
  kronex::device_tensor<T, 3> xd(b.shape());

  const auto before = kronex::transfers();
  auto S = kronex::compile(L.inverse(), bd);
  const auto uploads = kronex::transfers() - before;
  const kronex::plan_description& plan = S.plan();
  BOOST_TEST_MESSAGE(plan);
  BOOST_TEST(uploads.uploads == plan.setup_transfers);
  BOOST_TEST(uploads.upload_bytes == plan.setup_transfer_bytes);
  BOOST_TEST(plan.setup_transfers == 3 * 2 + 2);  // V_d twice (V^H and V) per axis, coefficients, eigenvalues
  BOOST_TEST(plan.run_transfers() == 0u);
  {
    kronex::no_transfer_guard guard;
    S(bd, xd);
    S(xd, xd);  // in place: L^{-2} b
  }
  const auto x1 = kronex::reference::solve(L, b);
  BOOST_TEST(rel_error(xd.to_host(), kronex::reference::solve(L, x1)) < 1e-10, kronex::value_traits<T>::name);
  // The lazy form, and the applied sum (each term's GEMMs, then axpy on the device).
  xt::xtensor<T, 3> lazy = kronex::device_tensor<T, 3>(L.solve(bd)).to_host();
  BOOST_TEST(rel_error(lazy, x1) < 1e-10);
  auto A = kronex::compile(L, bd);
  {
    kronex::no_transfer_guard guard;
    A(bd, xd);
  }
  BOOST_TEST(rel_error(xd.to_host(), kronex::reference::apply(L, b)) < 1e-12);
}

BOOST_AUTO_TEST_CASE(fast_diagonalisation_on_the_device) {
  check_laplacian_like_sum<double>();
  check_laplacian_like_sum<std::complex<double>>();
}

BOOST_AUTO_TEST_CASE(compositions_and_transposes_on_the_device) {
  const auto A = kronex_test::band<double>(6, 1, 2, kronex::boundary::clamped);
  const auto B = kronex_test::band<double>(5, 2, 1, kronex::boundary::periodic);
  const auto C = kronex_test::band<double>(6, 1, 1, kronex::boundary::clamped);
  const auto E = kronex_test::band<double>(5, 1, 1, kronex::boundary::clamped);
  auto P = (kronex::kron(A, B) * (kronex::kron(C, E) - 0.5 * kronex::kron(A, E))).transpose();
  const auto b = random_tensor<double, 2>({6, 5});
  const kronex::device_tensor<double, 2> bd(b);
  xt::xtensor<double, 2> y = kronex::device_tensor<double, 2>(P.apply(bd)).to_host();
  BOOST_TEST(rel_error(y, kronex::reference::apply(P, b)) < 1e-12);
  // The solve of a composition: each factor's own inverse, last to first.
  auto Q = kronex::kron(A, B) * kronex::kron(C, E);
  xt::xtensor<double, 2> x = kronex::device_tensor<double, 2>(Q.solve(bd)).to_host();
  BOOST_TEST(rel_error(x, kronex::reference::solve(Q, b)) < 1e-11);
}

// A pseudo-inverse's projections (dot products, the Gram inverse, the rank-one updates) run on
// the device, with their coefficients kept there: one dropped sum (the constants of two periodic
// Laplacians) and five (K ⊗ M with K singular: the constants along axis 0 times any vector on axis
// 1, where M ≠ I makes the eigenvectors non-orthogonal and the Gram matrix matter).
template <class T>
void check_pseudo_inverse() {
  const auto K = gallery::laplacian<T>(6, kronex::boundary::periodic);
  const auto M = gallery::bspline_mass<T>(6, 1, kronex::boundary::periodic);
  const auto K5 = gallery::laplacian<T>(5, kronex::boundary::periodic);
  const auto M5 = gallery::bspline_mass<T>(5, 1, kronex::boundary::periodic);
  const auto Mc = gallery::bspline_mass<T>(5, 2);
  auto L = kronex::kron(K, M5) + kronex::kron(M, K5);
  auto L2 = kronex::kron(K, Mc);
  const auto b = random_tensor<T, 2>({6, 5});  // inconsistent: it has a component along the null space
  const kronex::device_tensor<T, 2> bd(b);
  kronex::device_tensor<T, 2> xd(b.shape());
  auto P = L.pseudo_inverse(1e-10);
  const auto before = kronex::transfers();
  auto S = kronex::compile(P, bd);
  const auto uploads = kronex::transfers() - before;
  BOOST_TEST(uploads.uploads == S.plan().setup_transfers);
  BOOST_TEST(uploads.upload_bytes == S.plan().setup_transfer_bytes);
  // V_d twice per axis, the scaling's two arrays, and per basis the rank-one tensors and G^{-1}.
  BOOST_TEST(S.plan().setup_transfers == 2 * 2 + 2 + 2 * 2);
  {
    kronex::no_transfer_guard guard;
    S(bd, xd);
  }
  BOOST_TEST(rel_error(xd.to_host(), kronex::reference::apply(P, b)) < 1e-10, kronex::value_traits<T>::name);
  auto P2 = L2.pseudo_inverse(1e-10);
  auto S2 = kronex::compile(P2, bd);
  {
    kronex::no_transfer_guard guard;
    S2(bd, xd);
    S2(xd, xd);  // in place: (L2^+)^2 b
  }
  const auto y = kronex::reference::apply(P2, b);
  BOOST_TEST(rel_error(xd.to_host(), kronex::reference::apply(P2, y)) < 1e-10, kronex::value_traits<T>::name);
  // Without the pseudo-inverse the null mode is still refused, naming it.
  kronex_test::expect_error<kronex::singular_factor>([&] { auto S = kronex::compile(L.inverse(), bd); }, {"(0,0)"});
}

BOOST_AUTO_TEST_CASE(pseudo_inverse_on_the_device) {
  check_pseudo_inverse<double>();
  check_pseudo_inverse<std::complex<double>>();
}

} // namespace

// A sparse_operator inside an expression is a host leaf (its action reads host memory): on
// device tensors the compile refuses it, naming it, instead of running it on device pointers.
BOOST_AUTO_TEST_CASE(sparse_operators_in_expressions_are_refused_on_the_device) {
  const auto M = gallery::bspline_mass<double>(4, 1);
  const auto S = gallery::variable_mass<double>({4, 4, 4}, 1, [](const double*) { return 2.0; });
  const kronex::device_tensor<double, 3> bd(random_tensor<double, 3>({4, 4, 4}));
  kronex_test::expect_error<kronex::backend_unavailable>([&] { auto op = kronex::compile(S + kronex::kron(M, M, M), bd); },
                                                         {"sparse_operator(4,4,4)", "host tensors only", "device"});
}
