// Operator sums on the device: the fast-diagonalisation solve, an applied sum and a composition,
// against the dense reference; a solve makes no host<->device transfer (checked under
// kronex::no_transfer_guard), and compile makes exactly the uploads its plan counts (one dense
// V_d per transformed axis and per transform, the scaling's coefficients and eigenvalues, and a
// pseudo-inverse's rank-one tensors), pseudo-inverses included. And sparse_operator and
// matrix_free leaves in those expressions, the CSR matrices uploaded once.
// Built against the CPU device (CI) and CUDA (a GPU machine).
#define BOOST_TEST_MODULE test_device_sums
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

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

// sparse_operator and matrix_free inside expressions on device tensors, against the dense reference
// (which forms each operator column by column): the sparse matrix, as is, transposed, adjoint or
// conjugated, is built in CSR on the host and uploaded once at compile (the plan counts it: three
// uploads per leaf); a run makes no transfer, in place too. A matrix_free's function gets device
// pointers: here y = x as a device copy, so that the function runs on any device.
namespace {

template <class T>
kronex::sparse_operator<T> random_sparse(const kronex::shape_t& shape) {
  const std::size_t N = kronex::detail::product(shape);
  std::vector<kronex::entry<T>> e;
  std::uniform_int_distribution<std::size_t> col(0, N - 1);
  for (std::size_t i = 0; i < N; ++i) {
    e.push_back({i, i, T(4) + kronex_test::random_value<T>()});
    for (int k = 0; k < 5; ++k) e.push_back({i, col(kronex_test::rng()), kronex_test::random_value<T>()});
  }
  return kronex::sparse_operator<T>::from_entries(shape, e);
}

template <class T>
void check_flat_leaves() {
  const auto S = random_sparse<T>({4, 5, 3});
  const auto A = gallery::bspline_mass<T>(4, 2), B = gallery::laplacian<T>(5), C = gallery::bspline_mass<T>(3, 1);
  const auto K = kronex::kron(A, B, C);
  const auto x = random_tensor<T, 3>({4, 5, 3});
  const kronex::device_tensor<T, 3> xd(x);
  const T c = kronex_test::random_value<T>();
  const auto check = [&](const auto& expr, std::size_t sparse_leaves, const char* what) {
    BOOST_TEST_CONTEXT(what << " [" << kronex::value_traits<T>::name << "]") {
      const xt::xtensor<T, 3> ref = kronex::reference::evaluate(expr, x);
      const auto before = kronex::transfers();
      auto op = kronex::compile(expr, xd);
      const auto uploads = kronex::transfers() - before;
      BOOST_TEST_MESSAGE(op.plan());
      BOOST_TEST(uploads.uploads == op.plan().setup_transfers);
      BOOST_TEST(uploads.upload_bytes == op.plan().setup_transfer_bytes);
      const auto csr = kronex::detail::device_csr<T>::uploads(*S.csr_arrays());
      BOOST_TEST(op.plan().setup_transfers >= sparse_leaves * csr.first);
      BOOST_TEST(op.plan().run_transfers() == 0u);
      kronex::device_tensor<T, 3> yd(x.shape());
      {
        kronex::no_transfer_guard guard;
        op(xd, yd);
      }
      BOOST_TEST(rel_error(yd.to_host(), ref) < 1e-12);
      // In place: the leaf's out-of-place product goes through the plan's scratch.
      kronex::device_tensor<T, 3> zd(x);
      {
        kronex::no_transfer_guard guard;
        op(zd, zd);
      }
      BOOST_TEST(rel_error(zd.to_host(), ref) < 1e-12);
    }
  };
  check(S + K, 1, "S + K");
  check(c * S - K, 1, "c S - K");
  check(K.inverse() * S, 1, "K^-1 S");
  check(S * K.inverse() + 2.0 * S, 2, "S K^-1 + 2 S");
  check((S + K).transpose(), 1, "(S + K)^T");
  check((S * K).adjoint(), 1, "(S K)^H = K^H S^H");
  check((c * S + K).adjoint().transpose(), 1, "conj(c S + K)");

  // A matrix_free with device pointers: y = x.
  const kronex::matrix_free<T> I({4, 5, 3}, [](const T* in, T* out) { kronex::device::copy(out, in, 60 * sizeof(T)); });
  auto op = kronex::compile(S + c * I + K, xd);
  kronex::device_tensor<T, 3> yd(x.shape());
  {
    kronex::no_transfer_guard guard;
    op(xd, yd);
  }
  const xt::xtensor<T, 3> Kx = K.apply(x);
  const xt::xtensor<T, 3> want = S.apply(x) + c * x + Kx;
  BOOST_TEST(rel_error(yd.to_host(), want) < 1e-12);
  // It gives no transpose: refused when compiling, naming it.
  kronex_test::expect_error<kronex::invalid_operator>([&] { auto t = kronex::compile((I + K).transpose(), xd); },
                                                      {"matrix_free(4,5,3)", "transpose"});
}

} // namespace

BOOST_AUTO_TEST_CASE(sparse_and_matrix_free_operators_in_device_expressions) {
  check_flat_leaves<double>();
  check_flat_leaves<std::complex<double>>();
}

// And as the operator of a device Krylov solve: S + K preconditioned by K^-1, against the host's.
BOOST_AUTO_TEST_CASE(device_krylov_with_a_sparse_sum_as_the_operator) {
  const auto M = gallery::bspline_mass<double>(5, 2);
  const auto S = gallery::variable_mass<double>({5, 5, 5}, 2, [](const double* p) { return 1.5 + p[0] * p[1]; });
  const auto K = kronex::kron(M, M, M);
  const auto b = random_tensor<double, 3>({5, 5, 5});
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-11;
  xt::xtensor<double, 3> x = xt::zeros<double>({5, 5, 5});
  const auto host = kronex::cg(S + 0.5 * K, b, x, K.inverse(), opt);
  const kronex::device_tensor<double, 3> bd(b);
  kronex::device_tensor<double, 3> xd(xt::xtensor<double, 3>(xt::zeros<double>({5, 5, 5})));
  const auto dev = kronex::cg(S + 0.5 * K, bd, xd, K.inverse(), opt);
  BOOST_TEST(dev.converged);
  BOOST_TEST(host.converged);
  BOOST_TEST(dev.relative_residual <= 1e-11);
  BOOST_TEST(std::abs(double(dev.iterations) - double(host.iterations)) <= 1.0);
  BOOST_TEST(rel_error(xd.to_host(), x) < 1e-9);
}

