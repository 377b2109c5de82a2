#pragma once
// operator_tree<T>: the type-erased form of an operator built with kronex's algebra (sums,
// scalar multiples, compositions, inverses of sums), as operator_desc<T> is for one Kronecker
// product. The typed expressions (expr/algebra.hpp) describe themselves into a tree, and the
// tree is kept in a normal form that backends compile without further rewriting:
//   - transposes and adjoints sit on the Kronecker leaves only ((A B)^T = B^T A^T,
//     (A + B)^T = A^T + B^T, a conjugated coefficient for adjoints);
//   - inverses sit on leaves ((A B)^{-1} = B^{-1} A^{-1}, (c A)^{-1} = A^{-1} / c) or on a sum
//     (inverse_sum: solved by fast diagonalisation, or its pseudo-inverse with rtol >= 0);
//   - sums and products are flat: no sum directly inside a sum, no product inside a product.
// Operators with no Kronecker structure (sparse_operator, matrix_free) are leaves too
// (kind::flat), known only by their action: they are applied, never solved.
#include <algorithm>
#include <complex>
#include <functional>
#include <locale>
#include <cstddef>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "csr_matrix.hpp"
#include "operator_desc.hpp"

namespace kronex {

namespace detail {
// A coefficient (or a tolerance) as plans print it: six significant digits, the classic locale,
// a complex number with no imaginary part as a real one.
template <class V>
std::string format_coefficient(const V& v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(6);
  if constexpr (value_traits<V>::is_complex) {
    if (v.imag() == 0) os << v.real();
    else os << v;
  } else {
    os << v;
  }
  return os.str();
}
} // namespace detail

// An operator known only by its action y = op(A) x on C-order buffers (x and y distinct): a
// sparse_operator or a matrix_free in an expression. Shared, immutable, between trees. The
// functions take host buffers; on the device a sparse_operator's matrix (csr) is uploaded and
// multiplied there, and a matrix_free's apply is called with device pointers, as the device
// Krylov solvers call it.
template <class T>
struct flat_action {
  std::string name;    // as plans print it: "sparse_operator(7,6,8)"
  std::string method;  // the plan step's method: "csr_spmv", "matrix_free"
  shape_t shape;
  std::function<void(const T*, T*)> apply;
  // A^T x and A^H x; empty when the operator cannot give them (a matrix_free).
  std::function<void(const T*, T*)> apply_transposed, apply_adjoint;
  std::shared_ptr<const detail::csr_matrix<T>> csr;  // a sparse_operator's matrix; null for a matrix_free
  double flops = 0, bytes = 0;  // of one apply, for the plan's costs
};

template <class T>
struct operator_tree {
  using value_type = T;
  enum class kind {
    kron,         // coef * (a Kronecker product, maybe transposed or inverted): `leaf`
    sum,          // coef * sum of `terms` (each with its own coef)
    product,      // coef * terms[0] * terms[1] * ... (applied last to first)
    inverse_sum,  // coef * (sum of `terms`)^{-1}, or its pseudo-inverse when rtol >= 0
    flat,         // coef * op(an operator known by its action): `flat`, `flat_op`
  };
  kind what = kind::kron;
  T coef = T(1);
  operator_desc<T> leaf;                 // kind::kron
  std::vector<operator_tree> terms;      // the other kinds
  double rtol = -1;                      // inverse_sum: the pseudo-inverse's relative tolerance
  std::shared_ptr<const flat_action<T>> flat;  // kind::flat
  op flat_op = op::none;                       // kind::flat: as is, transposed, adjoint, conjugated
  compile_options options;               // set on the root by compile(expr, like, options)

  static operator_tree from_leaf(operator_desc<T> d) {
    operator_tree t;
    t.leaf = std::move(d);
    return t;
  }

  // True for a plain Kronecker product with coefficient 1: what the single-product plans run.
  bool is_plain_kron() const { return what == kind::kron && coef == T(1); }

  shape_t sizes() const {
    return what == kind::kron ? leaf.sizes() : what == kind::flat ? flat->shape : terms.front().sizes();
  }

  static operator_tree from_flat(std::shared_ptr<const flat_action<T>> f) {
    operator_tree t;
    t.what = kind::flat;
    t.flat = std::move(f);
    return t;
  }

  // The expression as printed in plans: "kron(f0,f1)+0.5*kron(f2,f3)", "inverse(...)",
  // "pseudo_inverse(..., rtol=1e-10)"; factors numbered across the whole tree.
  std::string text() const {
    std::size_t next = 0;
    return text_from(next);
  }

private:
  std::string text_from(std::size_t& next) const {
    std::string body;
    switch (what) {
      case kind::kron:
        body = leaf.text(next);
        next += leaf.factors.size();
        break;
      case kind::flat:
        body = flat->name;
        if (flat_op == op::transpose) body += "^T";
        if (flat_op == op::adjoint) body += "^H";
        if (flat_op == op::conjugate) body = "conj(" + body + ")";
        break;
      case kind::sum:
      case kind::inverse_sum:
        for (std::size_t k = 0; k < terms.size(); ++k) {
          std::string t = terms[k].text_from(next);
          if (k > 0 && t[0] != '-') body += "+";
          body += t;
        }
        if (what == kind::inverse_sum)
          body = rtol >= 0 ? "pseudo_inverse(" + body + ", rtol=" + detail::format_coefficient(rtol) + ")" : "inverse(" + body + ")";
        else if (coef != T(1))
          body = "(" + body + ")";
        break;
      case kind::product:
        for (std::size_t k = 0; k < terms.size(); ++k) {
          const std::string t = terms[k].text_from(next);
          const bool paren = terms[k].what == kind::sum && terms[k].coef == T(1);
          body += (k ? "*" : "") + (paren ? "(" + t + ")" : t);
        }
        break;
    }
    if (coef == T(1)) return body;
    if (coef == T(-1)) return "-" + body;
    return detail::format_coefficient(coef) + "*" + body;
  }

};

namespace detail {

inline op compose_ops(op outer, op inner) {
  return make_op(is_transposed(outer) != is_transposed(inner), is_conjugated(outer) != is_conjugated(inner));
}

// op(tree): pushed down to the leaves.
template <class T>
void apply_op(operator_tree<T>& t, op o) {
  using K = typename operator_tree<T>::kind;
  if (o == op::none) return;
  if (is_conjugated(o)) t.coef = conj_if_complex(t.coef);
  if (t.what == K::kron) {
    t.leaf.trans = compose_ops(o, t.leaf.trans);
    return;
  }
  if (t.what == K::flat) {
    t.flat_op = compose_ops(o, t.flat_op);
    return;
  }
  if (t.what == K::product && is_transposed(o)) std::reverse(t.terms.begin(), t.terms.end());
  for (auto& c : t.terms) apply_op(c, o);
}

// Sums inside sums and products inside products lifted into their parent, their coefficients
// multiplied in.
template <class T>
void flatten(operator_tree<T>& t) {
  using K = typename operator_tree<T>::kind;
  if (t.what == K::kron || t.what == K::flat) return;
  std::vector<operator_tree<T>> out;
  for (auto& c : t.terms) {
    const bool lift = (t.what == K::product && c.what == K::product) ||
                      (t.what != K::product && c.what == K::sum);
    if (!lift) {
      out.push_back(std::move(c));
      continue;
    }
    if (t.what == K::product) t.coef *= c.coef;
    for (auto& g : c.terms) {
      if (t.what != K::product) g.coef *= c.coef;
      out.push_back(std::move(g));
    }
  }
  t.terms = std::move(out);
}

// inverse(tree).
// The action a kind::flat leaf runs: op(A) as the flat_action gives it (a conjugated A through
// A itself, conj(A x) = conj(A) conj(x), with a scratch buffer). Throws when the action has no
// transpose (a matrix_free operator gives only its own action).
template <class T>
std::function<void(const T*, T*)> flat_function(const operator_tree<T>& t) {
  const flat_action<T>& f = *t.flat;
  const bool real = !value_traits<T>::is_complex;
  const op o = real && t.flat_op == op::adjoint ? op::transpose : real && t.flat_op == op::conjugate ? op::none : t.flat_op;
  const auto& g = o == op::transpose ? f.apply_transposed : o == op::adjoint ? f.apply_adjoint : f.apply;
  if (!g)
    throw invalid_operator(message("kronex: ", t.text(), ": ", f.name, " gives only its own action y = A x, not ",
                                   o == op::transpose ? "its transpose" : "its adjoint"));
  if (o != op::conjugate) return g;
  const std::size_t n = product(f.shape);
  auto scratch = std::make_shared<std::vector<T>>(n);
  return [g, n, scratch](const T* x, T* y) {
    for (std::size_t i = 0; i < n; ++i) (*scratch)[i] = conj_if_complex(x[i]);
    g(scratch->data(), y);
    for (std::size_t i = 0; i < n; ++i) y[i] = conj_if_complex(y[i]);
  };
}

// The inverse of an operator with no Kronecker structure, or of a sum or composition holding one.
template <class T>
[[noreturn]] void throw_no_direct_solve(const operator_tree<T>& t) {
  throw not_separable(message("kronex: ", t.text(), " has no direct solve (a sparse_operator or matrix_free has no "
                              "Kronecker structure): use a Krylov solver (kronex::cg, bicgstab, gmres, minres)"));
}

template <class T>
void invert(operator_tree<T>& t) {
  using K = typename operator_tree<T>::kind;
  switch (t.what) {
    case K::kron:
      t.leaf.inverse = !t.leaf.inverse;
      t.coef = T(1) / t.coef;
      return;
    case K::flat: throw_no_direct_solve(t);
    case K::sum:
      if (t.terms.size() == 1) {  // a scalar multiple: (c A)^{-1} = A^{-1} / c
        operator_tree<T> only = std::move(t.terms.front());
        only.coef *= t.coef;
        t = std::move(only);
        invert(t);
        return;
      }
      t.what = K::inverse_sum;
      t.rtol = -1;
      t.coef = T(1) / t.coef;
      return;
    case K::inverse_sum:
      if (t.rtol >= 0)
        throw error("kronex: the inverse of a pseudo-inverse is not defined; use the operator itself");
      t.what = K::sum;
      t.coef = T(1) / t.coef;
      return;
    case K::product:
      std::reverse(t.terms.begin(), t.terms.end());
      for (auto& c : t.terms) invert(c);
      t.coef = T(1) / t.coef;
      return;
  }
}

// pseudo_inverse(tree, rtol): defined for sums of Kronecker products (and a single product),
// whose pseudo-inverse fast diagonalisation gives.
template <class T>
void pseudo_invert(operator_tree<T>& t, double rtol) {
  using K = typename operator_tree<T>::kind;
  if (!(rtol >= 0))
    throw error(message("kronex: pseudo_inverse needs a relative tolerance >= 0, got ", rtol));
  if (t.what == K::kron && !t.leaf.inverse) {
    operator_tree<T> s;
    s.what = K::inverse_sum;
    s.coef = T(1) / t.coef;
    t.coef = T(1);
    s.terms.push_back(std::move(t));
    s.rtol = rtol;
    t = std::move(s);
    return;
  }
  if (t.what == K::sum) {
    t.what = K::inverse_sum;
    t.coef = T(1) / t.coef;
    t.rtol = rtol;
    return;
  }
  throw not_separable(message("kronex: pseudo_inverse is defined for sums of Kronecker products; ", t.text(),
                              " is not one"));
}

} // namespace detail

} // namespace kronex
