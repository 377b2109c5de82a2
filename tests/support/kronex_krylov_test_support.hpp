#pragma once
// What the Krylov tests share (tests/host/test_krylov.cpp, tests/device/test_device_krylov.cpp):
// operators assembled by the test itself as entries, their dense matrices and dense solves (the
// oracle), and the variable-coefficient problems that are not Kronecker products.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <random>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "kronex_test_support.hpp"

namespace kronex_krylov_test {

namespace gallery = kronex::gallery;
template <class T>
using mat = xt::xtensor<T, 2>;
template <class T>
using entries = std::vector<kronex::entry<T>>;

// ---- Assembled operators and their dense oracle ------------------------------------------------

// The N x N dense matrix of entries (duplicates summed), built by the test, not by kronex.
template <class T>
mat<T> dense_of(std::size_t n, const entries<T>& e) {
  mat<T> a = xt::zeros<T>({n, n});
  for (const auto& x : e) a(x.row, x.col) += x.value;
  return a;
}

template <class T>
entries<T> nonzeros(const mat<T>& a) {
  entries<T> e;
  for (std::size_t i = 0; i < a.shape()[0]; ++i)
    for (std::size_t j = 0; j < a.shape()[1]; ++j)
      if (a(i, j) != T(0)) e.push_back({i, j, a(i, j)});
  return e;
}

// Appends c * (A_1 ⊗ ... ⊗ A_d) as entries, C-order flattening (the last index fastest).
template <class T>
void add_kron(entries<T>& out, T c, const std::vector<mat<T>>& factors) {
  std::vector<entries<T>> nz;
  for (const auto& f : factors) nz.push_back(nonzeros(f));
  std::vector<std::size_t> at(factors.size(), 0);
  for (;;) {
    std::size_t row = 0, col = 0;
    T v = c;
    for (std::size_t k = 0; k < factors.size(); ++k) {
      const auto& x = nz[k][at[k]];
      row = row * factors[k].shape()[0] + x.row;
      col = col * factors[k].shape()[0] + x.col;
      v *= x.value;
    }
    out.push_back({row, col, v});
    std::size_t k = factors.size();
    while (k-- > 0 && ++at[k] == nz[k].size()) at[k] = 0;
    if (k == std::size_t(-1)) return;
  }
}

// D^{1/2} X D^{1/2}: a variable coefficient d (one value per unknown, here in [1, 2]) that makes
// the operator not a Kronecker product while keeping it symmetric (hermitian) positive definite.
template <class T>
void scale_by_coefficient(entries<T>& e, const std::vector<double>& d) {
  for (auto& x : e) x.value *= T(std::sqrt(d[x.row] * d[x.col]));
}

inline std::vector<double> random_coefficient(std::size_t n) {
  std::vector<double> d(n);
  std::uniform_real_distribution<double> u(1.0, 2.0);
  for (auto& v : d) v = u(kronex_test::rng());
  return d;
}

template <class T, std::size_t D>
xt::xtensor<T, D> dense_solve(const mat<T>& a, const xt::xtensor<T, D>& b) {
  const xt::xtensor<T, 1> flat = xt::flatten(b);
  const xt::xtensor<T, 1> x = xt::linalg::solve(a, flat);
  xt::xtensor<T, D> out = xt::xtensor<T, D>::from_shape(b.shape());
  std::copy(x.begin(), x.end(), out.begin());
  return out;
}

// The 3D test problems on shape (5, 6, 7), quadratic B-splines (M mass, K stiffness):
//   mass:      D^½ (M⊗M⊗M) D^½                      a mass matrix on a mapped domain;
//              preconditioner kron(M, M, M).inverse()
//   laplacian: D^½ (K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M) D^½
//              preconditioner: the same sum without D, inverted by fast diagonalisation
struct problem3d {
  static constexpr std::size_t n0 = 5, n1 = 6, n2 = 7, N = n0 * n1 * n2;
  kronex::banded<double> M0 = gallery::bspline_mass<double>(n0, 2), M1 = gallery::bspline_mass<double>(n1, 2),
                         M2 = gallery::bspline_mass<double>(n2, 2);
  kronex::banded<double> K0 = gallery::bspline_stiffness<double>(n0, 2), K1 = gallery::bspline_stiffness<double>(n1, 2),
                         K2 = gallery::bspline_stiffness<double>(n2, 2);
  double sigma = 20.0;
  std::vector<double> d = random_coefficient(N);
  entries<double> mass_entries, laplacian_entries;

  problem3d() {
    const mat<double> m0 = kronex_test::to_dense(M0), m1 = kronex_test::to_dense(M1), m2 = kronex_test::to_dense(M2);
    const mat<double> k0 = kronex_test::to_dense(K0), k1 = kronex_test::to_dense(K1), k2 = kronex_test::to_dense(K2);
    add_kron(mass_entries, 1.0, {m0, m1, m2});
    add_kron(laplacian_entries, 1.0, {k0, m1, m2});
    add_kron(laplacian_entries, 1.0, {m0, k1, m2});
    add_kron(laplacian_entries, 1.0, {m0, m1, k2});
    add_kron(laplacian_entries, sigma, {m0, m1, m2});
    scale_by_coefficient(mass_entries, d);
    scale_by_coefficient(laplacian_entries, d);
  }
  kronex::shape_t shape() const { return {n0, n1, n2}; }
  auto mass_preconditioner() const { return kronex::kron(M0, M1, M2).inverse(); }
  auto laplacian_sum() const {
    return kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) +
           sigma * kronex::kron(M0, M1, M2);
  }
};

inline const problem3d& problem() {
  static const problem3d p;
  return p;
}

// (T⊗I + I⊗T) scaled by D^½ on both sides, T = tridiag(-1, 4, -1) (eigenvalues in (2, 6)); for
// complex types plus i ε S with S real skew-symmetric: still hermitian positive definite.
template <class T>
struct problem2d {
  static constexpr std::size_t n0 = 7, n1 = 6, N = n0 * n1;
  mat<T> T0 = tridiag(n0), T1 = tridiag(n1);
  entries<T> e;

  static mat<T> tridiag(std::size_t n) {
    mat<T> t = xt::zeros<T>({n, n});
    for (std::size_t i = 0; i < n; ++i) {
      t(i, i) = T(4);
      if (i + 1 < n) t(i, i + 1) = t(i + 1, i) = T(-1);
    }
    return t;
  }
  static mat<T> eye(std::size_t n) { return xt::eye<T>(n); }

  // The solution of A x = b by a dense solve in the wider type (the oracle for float and
  // complex<float> solves).
  auto wide_reference(const xt::xtensor<T, 2>& b) const {
    using W = kronex_test::wide_t<T>;
    entries<W> wide;
    for (const auto& x : e) wide.push_back({x.row, x.col, W(x.value)});
    return dense_solve(dense_of(N, wide), kronex_test::widen(b));
  }

  problem2d() {
    add_kron(e, T(1), {T0, eye(n1)});
    add_kron(e, T(1), {eye(n0), T1});
    scale_by_coefficient(e, random_coefficient(N));
    if constexpr (kronex::value_traits<T>::is_complex) {
      for (std::size_t i = 0; i + 1 < N; ++i) {
        e.push_back({i, i + 1, T(0, 0.4)});
        e.push_back({i + 1, i, T(0, -0.4)});
      }
    }
  }
};

} // namespace kronex_krylov_test
