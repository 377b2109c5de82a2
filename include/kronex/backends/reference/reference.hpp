#pragma once
// The reference backend: the one simple oracle every other backend is checked against. It forms
// the dense Kronecker product of the (transposed/adjoint) factors with xt::linalg::kron and
// solves with dense LU (xt::linalg::solve) or multiplies. O(N^2) memory and O(N^3) work in the
// total size N: small tensors only. It shares nothing with the host kernels but factor_view.
#include <cstddef>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xtensor.hpp>

#include "../../expr/kron.hpp"

namespace kronex::reference {

// op(A) as a dense matrix.
template <class T>
xt::xtensor<T, 2> dense(const factor_view<T>& f, op o = op::none) {
  xt::xtensor<T, 2> a = xt::zeros<T>({f.n, f.n});
  for (std::size_t i = 0; i < f.n; ++i)
    for (std::size_t j = 0; j < f.n; ++j) {
      const T v = is_conjugated(o) ? detail::conj_if_complex(f(i, j)) : f(i, j);
      if (is_transposed(o)) a(j, i) = v;
      else a(i, j) = v;
    }
  return a;
}

// The dense matrix op(A_1) ⊗ ... ⊗ op(A_d) (not inverted).
template <class T>
xt::xtensor<T, 2> dense_kron(const operator_desc<T>& d) {
  xt::xtensor<T, 2> k = xt::ones<T>({std::size_t(1), std::size_t(1)});
  for (const auto& f : d.factors) k = xt::linalg::kron(k, dense(f, d.trans));
  return k;
}

// K b or K^{-1} b for the expression's operator K, in C order (factor k along axis k).
template <class... C, class E>
auto evaluate(const kron_expr<C...>& expr, const E& b) {
  using T = typename E::value_type;
  constexpr std::size_t D = kron_expr<C...>::rank;
  const operator_desc<T> d = expr.template describe<T>();
  detail::check_operand_shape(d, shape_t(b.shape().begin(), b.shape().end()), "operand");
  const xt::xtensor<T, 2> k = dense_kron(d);
  const xt::xtensor<T, 1> flat = xt::flatten(xt::xtensor<T, D>(b));
  xt::xtensor<T, 1> r = d.inverse ? xt::xtensor<T, 1>(xt::linalg::solve(k, flat))
                                  : xt::xtensor<T, 1>(xt::linalg::dot(k, flat));
  xt::xtensor<T, D> x = xt::zeros<T>(b.shape());
  std::copy(r.begin(), r.end(), x.begin());
  return x;
}

// The dense matrix of an operator built with the algebra: sums, products and inverses formed
// and inverted densely (xt::linalg::inv; pinv with rtol for a pseudo-inverse).
template <class T>
xt::xtensor<T, 2> dense_operator(const operator_tree<T>& t) {
  using K = typename operator_tree<T>::kind;
  xt::xtensor<T, 2> a;
  switch (t.what) {
    case K::kron:
      a = dense_kron(t.leaf);
      if (t.leaf.inverse) a = xt::linalg::inv(a);
      break;
    case K::sum:
    case K::inverse_sum:
      for (std::size_t k = 0; k < t.terms.size(); ++k) {
        xt::xtensor<T, 2> term = dense_operator(t.terms[k]);
        if (k == 0) a = term;
        else a += term;
      }
      if (t.what == K::inverse_sum) a = t.rtol >= 0 ? xt::xtensor<T, 2>(xt::linalg::pinv(a, t.rtol)) : xt::xtensor<T, 2>(xt::linalg::inv(a));
      break;
    case K::product:
      for (std::size_t k = 0; k < t.terms.size(); ++k) {
        xt::xtensor<T, 2> f = dense_operator(t.terms[k]);
        if (k == 0) a = f;
        else a = xt::linalg::dot(a, f);
      }
      break;
    case K::flat: {  // column j = op(A) e_j
      const std::size_t n = detail::product(t.flat->shape);
      a = xt::zeros<T>({n, n});
      std::vector<T> e(n, T(0)), col(n);
      const auto f = detail::flat_function(t);
      for (std::size_t j = 0; j < n; ++j) {
        e[j] = T(1);
        f(e.data(), col.data());
        e[j] = T(0);
        for (std::size_t i = 0; i < n; ++i) a(i, j) = col[i];
      }
      break;
    }
  }
  return xt::xtensor<T, 2>(a * t.coef);
}

// op(b) for an operator built with the algebra.
template <node_kind K, class... C, class E>
auto evaluate(const composite_expr<K, C...>& expr, const E& b) {
  using T = typename E::value_type;
  constexpr std::size_t D = composite_expr<K, C...>::rank;
  const operator_tree<T> t = expr.template describe<T>();
  detail::check_shape(shape_t(b.shape().begin(), b.shape().end()), t.sizes(), "operand", detail::shape_source::factors);
  const xt::xtensor<T, 2> a = dense_operator(t);
  const xt::xtensor<T, 1> flat = xt::flatten(xt::xtensor<T, D>(b));
  const xt::xtensor<T, 1> r = xt::linalg::dot(a, flat);
  xt::xtensor<T, D> x = xt::zeros<T>(b.shape());
  std::copy(r.begin(), r.end(), x.begin());
  return x;
}

template <class... C, class E>
auto solve(const kron_expr<C...>& expr, const E& b) { return evaluate(expr.inverse(), b); }
template <node_kind K, class... C, class E>
auto solve(const composite_expr<K, C...>& expr, const E& b) { return evaluate(expr.inverse(), b); }
template <node_kind K, class... C, class E>
auto apply(const composite_expr<K, C...>& expr, const E& x) { return evaluate(expr, x); }
template <class... C, class E>
auto apply(const kron_expr<C...>& expr, const E& x) { return evaluate(expr, x); }

} // namespace kronex::reference
