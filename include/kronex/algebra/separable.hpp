#pragma once
// The separability rule: when a sum of Kronecker products can be solved by fast
// diagonalisation. For every axis d the terms may use at most two different matrices (compared
// by value, after their transpose or adjoint), M_d and K_d, where M_d is hermitian positive
// definite (or the identity) and K_d hermitian. Then K_d V_d = M_d V_d Lambda_d with
// V_d^H M_d V_d = I diagonalises every term, and the sum's eigenvalue at (i_1, ..., i_D) is
// sum_t c_t prod_d (lambda_d[i_d] if term t uses K_d, else 1).
//
// analyse_separable() reads the terms' entries (O(sum n_d^2) memory) and decides; it throws
// not_separable naming the axis and the matrices found there, or the term that is not a
// Kronecker product. To tell M from K on an axis with two matrices it tries a Cholesky
// factorization of each (O(n_d^3), as the eigen set-up); the eigenproblems themselves are
// fast_diagonalisation.hpp's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "../core/error.hpp"
#include "../lapack/lapack.hpp"
#include "../plan/operator_tree.hpp"

namespace kronex::detail {

template <class T>
struct separable_axis {
  std::size_t n = 0;
  // The two matrices, dense (row-major). m_identity: M_d is the identity (m is empty). has_k:
  // some term uses K_d; otherwise every term uses M_d on this axis.
  bool m_identity = false, has_k = false;
  xt::xtensor<T, 2> m, k;
  std::string m_name, k_name;  // "f4 (term 1)": where the program wrote them
};

template <class T>
struct separable_sum {
  std::vector<separable_axis<T>> axes;
  std::vector<T> coefs;                       // per term
  std::vector<std::vector<bool>> uses_k;      // [term][axis]
  shape_t sizes;
};

// op(A) as a dense row-major matrix.
template <class T>
xt::xtensor<T, 2> dense_matrix(const factor_view<T>& f, op o) {
  xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({f.n, f.n});
  for (std::size_t i = 0; i < f.n; ++i)
    for (std::size_t j = 0; j < f.n; ++j) {
      const T v = is_conjugated(o) ? conj_if_complex(f(i, j)) : f(i, j);
      if (is_transposed(o)) a(j, i) = v;
      else a(i, j) = v;
    }
  return a;
}

template <class T>
bool is_identity_matrix(const xt::xtensor<T, 2>& a) {
  for (std::size_t i = 0; i < a.shape()[0]; ++i)
    for (std::size_t j = 0; j < a.shape()[1]; ++j)
      if (a(i, j) != (i == j ? T(1) : T(0))) return false;
  return true;
}

// Hermitian up to rounding: |a_ij - conj(a_ji)| <= n eps max|a|.
template <class T>
bool is_hermitian(const xt::xtensor<T, 2>& a) {
  const std::size_t n = a.shape()[0];
  double amax = 0;
  for (const T& v : a) amax = std::max(amax, double(std::abs(v)));
  const double tol = double(n) * double(std::numeric_limits<real_t<T>>::epsilon()) * amax;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j)
      if (double(std::abs(a(i, j) - conj_if_complex(a(j, i)))) > tol) return false;
  return true;
}

// A condition estimate of a hermitian matrix from its Cholesky factor, (max L_ii / min L_ii)^2
// (a lower bound of its 2-norm condition number); infinity when it is not positive definite.
template <class T>
double cholesky_condition(const xt::xtensor<T, 2>& a) {
  const std::size_t n = a.shape()[0];
  std::vector<T> c(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) c[i + j * n] = a(i, j);
  if (lapack::potrf<T>(lapack::int_t(n), c.data()) != 0) return std::numeric_limits<double>::infinity();
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double d = double(std::abs(c[i + i * n]));
    lo = std::min(lo, d);
    hi = std::max(hi, d);
  }
  return lo > 0 ? (hi / lo) * (hi / lo) : std::numeric_limits<double>::infinity();
}

// Which of an axis's two matrices is M: the identity if one is; else the better conditioned of
// those that are positive definite (a mass matrix rather than a stiffness, which may be
// singular, or nearly so, and would make the eigenvalues huge and inaccurate). The eigen set-up
// reports an axis where neither is definite.
template <class T>
std::size_t choose_m(const xt::xtensor<T, 2>& a, const xt::xtensor<T, 2>& b) {
  if (is_identity_matrix(a)) return 0;
  if (is_identity_matrix(b)) return 1;
  return cholesky_condition(b) < cholesky_condition(a) ? 1 : 0;
}

template <class T>
separable_sum<T> analyse_separable(const operator_tree<T>& s) {
  using K = typename operator_tree<T>::kind;
  separable_sum<T> out;
  const std::size_t terms = s.terms.size();
  for (std::size_t t = 0; t < terms; ++t) {
    const auto& term = s.terms[t];
    if (term.what == K::flat)
      throw not_separable(message("kronex: cannot solve ", s.text(), ": term ", t, " (", term.text(),
                                  ") has no Kronecker structure; use a Krylov solver (kronex::cg, bicgstab, gmres, "
                                  "minres), with this sum's Kronecker terms as a preconditioner"));
    if (term.what != K::kron || term.leaf.inverse)
      throw not_separable(message("kronex: cannot solve ", s.text(), ": term ", t, " (", term.text(),
                                  ") is not a Kronecker product of matrices; only sums of Kronecker products "
                                  "are solved (fast diagonalisation)"));
    for (std::size_t d = 0; d < term.leaf.factors.size(); ++d)
      if (term.leaf.factors[d].kind == factor_kind::function)
        throw not_separable(message("kronex: cannot solve ", s.text(), ": f", t * term.leaf.factors.size() + d,
                                    " (term ", t, ", axis ", d, ") is a function solver, whose entries are unknown"));
  }
  const std::size_t D = s.terms.front().leaf.factors.size();
  out.sizes = s.terms.front().leaf.sizes();
  out.uses_k.assign(terms, std::vector<bool>(D, false));
  for (const auto& term : s.terms) out.coefs.push_back(term.coef);
  for (std::size_t d = 0; d < D; ++d) {
    // The distinct matrices on this axis, in order of first use, and which terms use each.
    std::vector<xt::xtensor<T, 2>> mats;
    std::vector<std::string> names;
    std::vector<std::vector<std::size_t>> users;
    for (std::size_t t = 0; t < terms; ++t) {
      const auto& leaf = s.terms[t].leaf;
      xt::xtensor<T, 2> a = dense_matrix(leaf.factors[d], leaf.trans);
      std::size_t found = mats.size();
      for (std::size_t m = 0; m < mats.size(); ++m)
        if (mats[m] == a) found = m;
      if (found == mats.size()) {
        if (mats.size() == 2)
          throw not_separable(message("kronex: cannot solve ", s.text(), ": axis ", d, " uses three different matrices, ",
                                      names[0], ", ", names[1], " and f", t * D + d, " (term ", t,
                                      "); fast diagonalisation needs at most two per axis"));
        mats.push_back(std::move(a));
        names.push_back(message("f", t * D + d, " (term ", t, ")"));
        users.emplace_back();
      }
      users[found].push_back(t);
    }
    separable_axis<T> ax;
    ax.n = out.sizes[d];
    for (std::size_t m = 0; m < mats.size(); ++m)
      if (!is_hermitian(mats[m]))
        throw not_separable(message("kronex: cannot solve ", s.text(), ": ", names[m], " on axis ", d, " is not ",
                                    value_traits<T>::is_complex ? "hermitian" : "symmetric",
                                    "; fast diagonalisation needs symmetric (hermitian) matrices"));
    if (mats.size() == 1) {
      // One matrix: every term uses it, as M if it is the identity (nothing to do on this
      // axis), else as K with M = I (its eigenvalues multiply every term).
      if (is_identity_matrix(mats[0])) {
        ax.m_identity = true;
        ax.m_name = names[0];
      } else {
        ax.m_identity = true;
        ax.has_k = true;
        ax.k = std::move(mats[0]);
        ax.k_name = names[0];
        for (std::size_t t : users[0]) out.uses_k[t][d] = true;
      }
    } else {
      const std::size_t mi = choose_m(mats[0], mats[1]);
      const std::size_t ki = 1 - mi;
      ax.m_identity = is_identity_matrix(mats[mi]);
      if (!ax.m_identity) ax.m = std::move(mats[mi]);
      ax.has_k = true;
      ax.k = std::move(mats[ki]);
      ax.m_name = names[mi];
      ax.k_name = names[ki];
      for (std::size_t t : users[ki]) out.uses_k[t][d] = true;
    }
    out.axes.push_back(std::move(ax));
  }
  return out;
}

} // namespace kronex::detail
