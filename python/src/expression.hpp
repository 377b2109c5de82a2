#pragma once
// expression: an operator as Python builds it (kron(...), sums, scalar multiples, compositions,
// transposes, inverses), recorded without a value type. Compiling turns it into the
// operator_tree<T> of the value type the operand needs, with the same normalisation helpers the
// C++ expressions use (combine_trees, apply_op, invert, pseudo_invert), so Python compiles
// exactly the plans C++ does for the same expression.
#include <complex>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <kronex/core/shape.hpp>
#include <kronex/expr/algebra.hpp>
#include <kronex/factors/factor_view.hpp>
#include <kronex/plan/operator_tree.hpp>

#include "factor_source.hpp"
#include "sparse_source.hpp"

namespace kronex::python {

// kron() takes 1 to 6 factors, as in C++.
inline constexpr std::size_t max_factors = 6;

class expression;
using expression_ptr = std::shared_ptr<const expression>;
using factor_ptr = std::shared_ptr<const factor_source>;

class expression {
public:
  enum class form { kron, sparse, scaled, sum, product, transpose, adjoint, inverse, pseudo_inverse };

  // kron(f0, ..., fd-1), in value type t (the factors' widest, or wider).
  static expression_ptr kron(std::vector<factor_ptr> factors, dtype t);
  // An assembled sparse matrix as an operator: applied, never solved (a Krylov solver solves it).
  static expression_ptr sparse(std::shared_ptr<const sparse_source> a);
  static expression_ptr scaled(const expression_ptr& a, value c);
  // a + c b (c = 1 or -1 from Python): a sum of sums is kept flat, so `L = L + K` in a loop
  // does not nest.
  static expression_ptr sum(const expression_ptr& a, const expression_ptr& b, value c);
  // a b: b applied first.
  static expression_ptr product(const expression_ptr& a, const expression_ptr& b);
  static expression_ptr method(const expression_ptr& a, form m, double rtol = -1);
  // The same operator in a wider value type (its factors are converted when compiled).
  static expression_ptr as_type(const expression_ptr& a, dtype t);

  dtype type() const noexcept { return m_type; }
  const shape_t& sizes() const noexcept { return m_sizes; }
  form what() const noexcept { return m_form; }
  // Every factor it uses, each once: what a compiled operator keeps alive.
  std::vector<factor_ptr> factors() const;
  // "kron(f0,f1)+0.5*kron(f2,f3)": the expression as plans print it (in its own value type).
  std::string text() const;

  // The tree kronex compiles, in value type T (the factors are built in T on first use).
  template <class T>
  operator_tree<T> tree() const;

private:
  expression(form f, dtype t, shape_t sizes) : m_form(f), m_type(t), m_sizes(std::move(sizes)) {}

  form m_form;
  dtype m_type;
  shape_t m_sizes;
  std::vector<factor_ptr> m_factors;       // kron
  std::shared_ptr<const sparse_source> m_sparse;  // sparse
  std::vector<expression_ptr> m_operands;  // the others
  std::vector<value> m_coefs;              // scaled: one; sum: one per operand
  double m_rtol = -1;                      // pseudo_inverse
};

template <class T>
operator_tree<T> expression::tree() const {
  using kronex::detail::inversion;
  switch (m_form) {
    case form::kron: {
      operator_desc<T> d;
      for (const auto& f : m_factors) d.factors.push_back(make_view<T>(f->get<T>()));
      return operator_tree<T>::from_leaf(std::move(d));
    }
    case form::sparse: return operator_tree<T>::from_flat(m_sparse->action<T>());
    case form::transpose:
    case form::adjoint: {
      operator_tree<T> t = m_operands.front()->tree<T>();
      kronex::detail::apply_op(t, m_form == form::transpose ? op::transpose : op::adjoint);
      return t;
    }
    case form::inverse: {
      operator_tree<T> t = m_operands.front()->tree<T>();
      kronex::detail::invert(t);
      return t;
    }
    case form::pseudo_inverse: {
      operator_tree<T> t = m_operands.front()->tree<T>();
      kronex::detail::pseudo_invert(t, m_rtol);
      return t;
    }
    case form::scaled:
    case form::sum:
    case form::product: break;
  }
  std::vector<operator_tree<T>> operands;
  for (const auto& e : m_operands) operands.push_back(e->tree<T>());
  const node_kind k = m_form == form::scaled ? node_kind::scaled : m_form == form::sum ? node_kind::sum : node_kind::product;
  return kronex::detail::combine_trees<T>(k, std::move(operands), m_coefs.data(), op::none, inversion{});
}

} // namespace kronex::python
