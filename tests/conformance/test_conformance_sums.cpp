// The conformance suite for operator sums: one source, built once per backend with the same
// adaptor headers as test_conformance.cpp (host, CPU device, CUDA, MPI at 1 to 4 ranks), every
// result checked against the dense reference (the dense sum of dense Kronecker products of the
// test's own matrices, solved by dense LU in double precision), never against another backend.
//
// Covered: fast-diagonalisation solves of Laplacian-like sums K⊗M⊗… + M⊗K⊗… + σ M⊗M⊗… in 1D to
// 4D, with σ ≠ 0 and σ = 0, sums with K on several axes in one term, sizes that
// split unevenly over 2, 3 and 4 ranks; the applied sum; the transposed and adjoint sums; a
// composition's solve. Random hermitian positive definite matrices (genuinely complex for complex types), all four
// value types (1e-10 relative in double for these well-conditioned sums, 1e-4 in float).
// Compiled out of place and in place, and as a lazy result.
#define BOOST_TEST_MODULE test_conformance_sums
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include KRONEX_CONFORMANCE_BACKEND

#include "kronex_test_support.hpp"

namespace {

using backend = kronex_conformance::backend;
using kronex_test::wide_t;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

template <class T>
using mat = xt::xtensor<T, 2>;

// Random hermitian n x n matrices: definite (diagonal shifted by n + 1) or not.
template <class T>
mat<T> random_hermitian(std::size_t n, bool definite) {
  mat<T> a = mat<T>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) {
      T v = kronex_test::random_value<T>();
      if (i == j) v = T(std::real(v) + (definite ? double(n) + 1.0 : 0.0));
      a(i, j) = v;
      a(j, i) = kronex::detail::conj_if_complex(v);
    }
  return a;
}

template <class T>
double tolerance() { return std::is_same_v<kronex::real_t<T>, double> ? 1e-10 : 1e-4; }

// The matrices of one case, per axis, in T and (for the reference) in double precision.
template <class T, std::size_t D>
struct sum_case {
  std::array<mat<T>, D> K, M;
  std::array<mat<wide_t<T>>, D> wK, wM;
  double sigma = 0;
  bool k_twice = false;  // a term with K on axes 0 and D-1
  std::array<std::size_t, D> shape{};
  std::string text() const {
    std::string s = std::string(kronex::value_traits<T>::name) + " shape (";
    for (std::size_t k = 0; k < D; ++k) s += (k ? "," : "") + std::to_string(shape[k]);
    return s + ") sigma=" + std::to_string(sigma) + (k_twice ? " K twice" : "");
  }
};

template <class T, std::size_t D>
sum_case<T, D> make_case(const std::array<std::size_t, D>& shape, double sigma, bool k_twice) {
  sum_case<T, D> c;
  c.shape = shape;
  c.sigma = sigma;
  c.k_twice = k_twice;
  for (std::size_t d = 0; d < D; ++d) {
    // Definite K too: every eigenvalue sum is then at least sigma plus a positive amount, so
    // the sums are well conditioned (an indefinite K is tested in test_operator_sums).
    c.K[d] = random_hermitian<T>(shape[d], true);
    c.M[d] = random_hermitian<T>(shape[d], true);
    c.wK[d] = c.K[d];
    c.wM[d] = c.M[d];
  }
  return c;
}

// sum_d kron(M.., K at d, M..) + sigma kron(M, ..., M) (+ kron(K, M, .., K) when k_twice).
template <std::size_t D, class U>
auto laplacian_like(const std::array<mat<U>, D>& K, const std::array<mat<U>, D>& M, double sigma, bool k_twice) {
  using kronex::kron;
  if constexpr (D == 1) {
    return kron(K[0]) + sigma * kron(M[0]) + (k_twice ? 0.5 : 0.0) * kron(K[0]);
  } else if constexpr (D == 2) {
    return kron(K[0], M[1]) + kron(M[0], K[1]) + sigma * kron(M[0], M[1]) + (k_twice ? 0.5 : 0.0) * kron(K[0], K[1]);
  } else if constexpr (D == 3) {
    return kron(K[0], M[1], M[2]) + kron(M[0], K[1], M[2]) + kron(M[0], M[1], K[2]) + sigma * kron(M[0], M[1], M[2]) +
           (k_twice ? 0.5 : 0.0) * kron(K[0], M[1], K[2]);
  } else {
    return kron(K[0], M[1], M[2], M[3]) + kron(M[0], K[1], M[2], M[3]) + kron(M[0], M[1], K[2], M[3]) +
           kron(M[0], M[1], M[2], K[3]) + sigma * kron(M[0], M[1], M[2], M[3]) +
           (k_twice ? 0.5 : 0.0) * kron(K[0], M[1], M[2], K[3]);
  }
}

// op(b) on the backend, compiled out of place and in place and lazily, against the reference.
template <class T, std::size_t D, class Op, class RefOp>
void check_operator(const Op& A, const RefOp& Aw, const xt::xtensor<T, D>& b, const std::string& what) {
  using tensor = typename backend::template tensor<T, D>;
  const auto ref = kronex::reference::evaluate(Aw, kronex_test::widen(b));
  const double tol = tolerance<T>();
  for (const auto& layout : backend::template layouts<D>()) {
    BOOST_TEST_CONTEXT(what << ", " << backend::layout_text(layout)) {
      const tensor bd = backend::upload(b, layout);
      auto S = kronex::compile(A, bd);
      tensor xd = backend::like(bd);
      S(bd, xd);
      const double err = kronex_test::rel_error(kronex_test::widen(backend::download(xd)), ref);
      BOOST_TEST(err <= tol, "compiled: relative error " << err << "\n" << S);
      tensor yd = bd;
      S(yd, yd);
      BOOST_TEST(kronex_test::rel_error(kronex_test::widen(backend::download(yd)), ref) <= tol, "in place");
      tensor zd = A.apply(bd);
      BOOST_TEST(kronex_test::rel_error(kronex_test::widen(backend::download(zd)), ref) <= tol, "lazy");
      BOOST_TEST(kronex_test::rel_error(backend::download(bd), b) == 0.0, "the input was modified");
    }
  }
}

template <class T, std::size_t D>
void check_case(const std::array<std::size_t, D>& shape, double sigma, bool k_twice) {
  const sum_case<T, D> c = make_case<T, D>(shape, sigma, k_twice);
  const auto L = laplacian_like<D>(c.K, c.M, c.sigma, c.k_twice);
  const auto Lw = laplacian_like<D>(c.wK, c.wM, c.sigma, c.k_twice);
  const xt::xtensor<T, D> b = kronex_test::random_tensor<T, D>(shape);
  check_operator<T, D>(L.inverse(), Lw.inverse(), b, c.text() + ", solve");
  check_operator<T, D>(L, Lw, b, c.text() + ", apply");
  check_operator<T, D>(L.adjoint().inverse(), Lw.adjoint().inverse(), b, c.text() + ", adjoint solve");
  check_operator<T, D>(L.transpose(), Lw.transpose(), b, c.text() + ", transpose apply");
  // A composition: (L P)^{-1} = P^{-1} L^{-1}, P = M ⊗ ... ⊗ M (banded LU on dense factors).
  const auto P = laplacian_like<D>(c.M, c.M, 0.0, false);  // a sum of D definite terms
  const auto Pw = laplacian_like<D>(c.wM, c.wM, 0.0, false);
  check_operator<T, D>((L * P).inverse(), (Lw * Pw).inverse(), b, c.text() + ", composition solve");
}

// Sizes that split unevenly over 2, 3 and 4 ranks.
constexpr std::size_t sizes[] = {5, 7, 10};

BOOST_AUTO_TEST_CASE_TEMPLATE(one_to_four_dimensions, T, value_types) {
  check_case<T, 1>({7}, 0.5, false);
  check_case<T, 1>({5}, 0.0, true);
  check_case<T, 2>({sizes[0], sizes[2]}, 1.0, false);
  check_case<T, 2>({sizes[1], sizes[0]}, 0.0, true);
  check_case<T, 3>({sizes[2], sizes[0], sizes[1]}, 0.25, true);
  check_case<T, 3>({4, 5, 3}, 0.0, false);
  if constexpr (backend::max_rank >= 4) check_case<T, 4>({3, 4, 5, 3}, 2.0, true);
}

} // namespace
