#pragma once
// Operator algebra over Kronecker products, as lazy as kron(): A + B, A - B, -A, c * A, A * c,
// and the composition A * B (apply B, then A). Each composite records its operands by the
// closure rules (closure.hpp) and, like kron_expr, how it is to be used: transposed or adjoint,
// inverted or pseudo-inverted. Nothing is computed until evaluation: describe<T>() gives the
// normal-form operator_tree<T> (plan/operator_tree.hpp) that backends compile.
//
// Coefficients are kept as std::complex<double> and converted to the value type when the
// expression is described: a coefficient with an imaginary part on a real operator is an error
// then.
#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../plan/operator_tree.hpp"
#include "kron.hpp"

namespace kronex {

enum class node_kind { scaled, sum, product };

template <node_kind K, class... Children>
class composite_expr;

namespace detail {

template <class E>
struct is_operator_expr_impl : std::false_type {};
template <class... C>
struct is_operator_expr_impl<kron_expr<C...>> : std::true_type {};
template <node_kind K, class... C>
struct is_operator_expr_impl<composite_expr<K, C...>> : std::true_type {};
template <class E>
inline constexpr bool is_operator_expr = is_operator_expr_impl<std::decay_t<E>>::value;

// Operators with no Kronecker structure (sparse_operator, matrix_free: operators/flat_operator.hpp
// marks them with flat_operator_tag) take part in sums, scalar multiples and compositions as
// leaves that are applied, never solved.
template <class E, class = void>
struct is_flat_operand_impl : std::false_type {};
template <class E>
struct is_flat_operand_impl<E, std::void_t<typename E::flat_operator_tag>> : std::true_type {};
template <class E>
inline constexpr bool is_flat_operand = is_flat_operand_impl<std::decay_t<E>>::value;

// What +, -, unary -, scalar multiples and compositions take.
template <class E>
inline constexpr bool is_algebra_operand = is_operator_expr<E> || is_flat_operand<E>;

template <class S>
struct is_scalar_impl : std::is_arithmetic<S> {};
template <class U>
struct is_scalar_impl<std::complex<U>> : std::true_type {};
template <class S>
inline constexpr bool is_scalar = is_scalar_impl<std::decay_t<S>>::value;

template <class S>
std::complex<double> to_coefficient(const S& s) {
  if constexpr (std::is_arithmetic_v<S>) return {double(s), 0.0};
  else return {double(s.real()), double(s.imag())};
}

// A coefficient in value type T; an imaginary part on a real operator is refused.
template <class T>
T coefficient_as(const std::complex<double>& c) {
  if constexpr (value_traits<T>::is_complex) {
    return T(typename T::value_type(c.real()), typename T::value_type(c.imag()));
  } else {
    if (c.imag() != 0)
      throw error(message("kronex: the coefficient (", c.real(), ",", c.imag(), ") is complex but the operator's value type is ",
                          value_traits<T>::name));
    return T(c.real());
  }
}

// Any operator expression as a tree (a Kronecker product becomes a leaf).
template <class T, class... C>
operator_tree<T> tree_of(const kron_expr<C...>& e) {
  return operator_tree<T>::from_leaf(e.template describe<T>());
}
template <class T, node_kind K, class... C>
operator_tree<T> tree_of(const composite_expr<K, C...>& e) {
  return e.template describe<T>();
}
template <class T, class E, class = std::enable_if_t<is_flat_operand<E>>>
operator_tree<T> tree_of(const E& e) {
  static_assert(std::is_same_v<T, typename E::value_type>,
                "kronex: a sparse_operator or matrix_free in an expression must have the operand's value type");
  return operator_tree<T>::from_flat(e.action());
}

// How a composite is used: as is, inverted, pseudo-inverted; pseudo-inverting an inverse or
// inverting a pseudo-inverse is recorded, and refused when described.
struct inversion {
  enum class state { none, inverse, pseudo, undefined };
  state s = state::none;
  double rtol = -1;

  inversion inverted() const { return {s == state::none ? state::inverse : s == state::inverse ? state::none : state::undefined, rtol}; }
  inversion pseudo_inverted(double r) const { return {s == state::none ? state::pseudo : state::undefined, r}; }
};

// One combination of composite_expr::describe, from its operands' trees: the coefficients
// multiplied in (a scalar multiple's one, a sum's one per term), sums and products flattened,
// then the combination's op and inversion. Code that builds trees at run time (the kronex
// DSL) combines with it too, so both give the same tree.
template <class T>
operator_tree<T> combine_trees(node_kind k, std::vector<operator_tree<T>> operands, const std::complex<double>* coefs,
                               op o, const inversion& inv) {
  using kind = typename operator_tree<T>::kind;
  operator_tree<T> t;
  if (k == node_kind::scaled) {
    t = std::move(operands.front());
    t.coef *= coefficient_as<T>(coefs[0]);
  } else {
    t.what = k == node_kind::sum ? kind::sum : kind::product;
    t.terms = std::move(operands);
    if (k == node_kind::sum)
      for (std::size_t i = 0; i < t.terms.size(); ++i) t.terms[i].coef *= coefficient_as<T>(coefs[i]);
    flatten(t);
  }
  apply_op(t, o);
  switch (inv.s) {
    case inversion::state::none: break;
    case inversion::state::inverse: invert(t); break;
    case inversion::state::pseudo: pseudo_invert(t, inv.rtol); break;
    case inversion::state::undefined:
      throw error("kronex: the inverse of a pseudo-inverse, or the pseudo-inverse of an inverse, is not defined");
  }
  return t;
}

template <class A, class B>
void check_same_sizes(const A& a, const B& b, const char* what) {
  const shape_t sa = a.sizes(), sb = b.sizes();
  if (sa != sb)
    throw dimension_mismatch(message("kronex: ", what, " of operators with different sizes: ", format_shape(sa), " and ",
                                     format_shape(sb)));
}

} // namespace detail

template <node_kind K, class... Children>
class composite_expr {
  static constexpr std::size_t arity = sizeof...(Children);
  static_assert(arity >= 1 && arity <= 2);

public:
  // The number of factors (the operand's rank); an operator with no Kronecker structure has
  // rank 0 (any), and its shape is checked at run time.
  static constexpr std::size_t rank = std::max({std::decay_t<Children>::rank...});
  static_assert(((std::decay_t<Children>::rank == rank || std::decay_t<Children>::rank == 0) && ...),
                "kronex: operators combined with +, - or * must have the same number of factors");

  using value_type = typename detail::common_value_type<typename std::decay_t<Children>::value_type...>::type;
  using coefficients = std::array<std::complex<double>, arity>;

  template <class... F>
  explicit composite_expr(const coefficients& c, op o, detail::inversion inv, F&&... f)
      : m_children(std::forward<F>(f)...), m_coefs(c), m_op(o), m_inv(inv) {}

  auto transpose() const& { return with(compose_transpose(m_op), m_inv); }
  auto transpose() && { return std::move(*this).with(compose_transpose(m_op), m_inv); }
  auto adjoint() const& { return with(compose_adjoint(m_op), m_inv); }
  auto adjoint() && { return std::move(*this).with(compose_adjoint(m_op), m_inv); }
  auto inverse() const& { return with(m_op, m_inv.inverted()); }
  auto inverse() && { return std::move(*this).with(m_op, m_inv.inverted()); }
  // The Moore-Penrose pseudo-inverse of a sum of Kronecker products: eigenvalue sums below rtol
  // times the largest are dropped (docs/preconditioners.md).
  auto pseudo_inverse(double rtol) const& { return with(m_op, m_inv.pseudo_inverted(rtol)); }
  auto pseudo_inverse(double rtol) && { return std::move(*this).with(m_op, m_inv.pseudo_inverted(rtol)); }

  template <class B>
  auto solve(B&& b) const& {
    check_rank<B>();
    return make_result(inverse(), std::forward<B>(b));
  }
  template <class B>
  auto solve(B&& b) && {
    check_rank<B>();
    return make_result(std::move(*this).inverse(), std::forward<B>(b));
  }
  template <class X>
  auto apply(X&& x) const& {
    check_rank<X>();
    return make_result(with(m_op, m_inv), std::forward<X>(x));
  }
  template <class X>
  auto apply(X&& x) && {
    check_rank<X>();
    return make_result(std::move(*this), std::forward<X>(x));
  }

  // An expression of sparse_operator or matrix_free operators alone (rank 0) can be combined
  // further, but not evaluated.
  template <class U = void>
  static constexpr void check_rank() {
    static_assert(rank > 0 || !std::is_same_v<U, U>,
                  "kronex: an expression of sparse_operator or matrix_free operators alone has no tensor rank; "
                  "combine it with a Kronecker expression, or use the operators' own apply() and a Krylov solver");
  }

  // The normal-form tree in value type T.
  template <class T>
  operator_tree<T> describe() const {
    static_assert(std::is_void_v<value_type> || std::is_same_v<T, value_type>,
                  "kronex: the operand's value type must match the factors' value type");
    std::vector<operator_tree<T>> operands;
    std::apply([&](const auto&... c) { (operands.push_back(detail::tree_of<T>(c)), ...); }, m_children);
    return detail::combine_trees<T>(K, std::move(operands), m_coefs.data(), m_op, m_inv);
  }

  shape_t sizes() const { return std::get<0>(m_children).sizes(); }

private:
  template <class O, class B>
  static auto make_result(O&& o, B&& b) {
    return lazy_result<std::decay_t<O>, detail::closure_t<B&&>>(std::forward<O>(o), std::forward<B>(b));
  }

  auto with(op o, detail::inversion inv) const& {
    return std::apply([&](const auto&... c) {
      return composite_expr<K, const std::decay_t<Children>&...>(m_coefs, o, inv, c...);
    }, m_children);
  }
  auto with(op o, detail::inversion inv) && {
    return std::apply([&](auto&&... c) {
      return composite_expr<K, Children...>(m_coefs, o, inv, std::forward<Children>(c)...);
    }, std::move(m_children));
  }

  std::tuple<Children...> m_children;
  coefficients m_coefs;
  op m_op;
  detail::inversion m_inv;
};

// A Kronecker product's pseudo-inverse: that of the one-term sum.
template <class... C>
auto kron_expr<C...>::pseudo_inverse(double rtol) const& {
  return composite_expr<node_kind::scaled, const kron_expr&>({1.0}, op::none, detail::inversion{}.pseudo_inverted(rtol),
                                                              *this);
}
template <class... C>
auto kron_expr<C...>::pseudo_inverse(double rtol) && {
  return composite_expr<node_kind::scaled, kron_expr>({1.0}, op::none, detail::inversion{}.pseudo_inverted(rtol),
                                                       std::move(*this));
}

template <class A, class B, class = std::enable_if_t<detail::is_algebra_operand<A> && detail::is_algebra_operand<B>>>
auto operator+(A&& a, B&& b) {
  detail::check_same_sizes(a, b, "the sum");
  return composite_expr<node_kind::sum, detail::closure_t<A&&>, detail::closure_t<B&&>>(
      {1.0, 1.0}, op::none, detail::inversion{}, std::forward<A>(a), std::forward<B>(b));
}

template <class A, class B, class = std::enable_if_t<detail::is_algebra_operand<A> && detail::is_algebra_operand<B>>>
auto operator-(A&& a, B&& b) {
  detail::check_same_sizes(a, b, "the difference");
  return composite_expr<node_kind::sum, detail::closure_t<A&&>, detail::closure_t<B&&>>(
      {1.0, -1.0}, op::none, detail::inversion{}, std::forward<A>(a), std::forward<B>(b));
}

template <class A, class = std::enable_if_t<detail::is_algebra_operand<A>>>
auto operator-(A&& a) {
  return composite_expr<node_kind::scaled, detail::closure_t<A&&>>({-1.0}, op::none, detail::inversion{},
                                                                    std::forward<A>(a));
}

template <class S, class A, class = std::enable_if_t<detail::is_scalar<S> && detail::is_algebra_operand<A>>>
auto operator*(const S& s, A&& a) {
  return composite_expr<node_kind::scaled, detail::closure_t<A&&>>({detail::to_coefficient(s)}, op::none,
                                                                    detail::inversion{}, std::forward<A>(a));
}

template <class A, class S, class = std::enable_if_t<detail::is_scalar<S> && detail::is_algebra_operand<A>>, class = void>
auto operator*(A&& a, const S& s) {
  return composite_expr<node_kind::scaled, detail::closure_t<A&&>>({detail::to_coefficient(s)}, op::none,
                                                                    detail::inversion{}, std::forward<A>(a));
}

// Composition: (A * B) x = A (B x).
template <class A, class B, class = std::enable_if_t<detail::is_algebra_operand<A> && detail::is_algebra_operand<B>>,
          class = void, class = void>
auto operator*(A&& a, B&& b) {
  detail::check_same_sizes(a, b, "the composition");
  return composite_expr<node_kind::product, detail::closure_t<A&&>, detail::closure_t<B&&>>(
      {1.0, 1.0}, op::none, detail::inversion{}, std::forward<A>(a), std::forward<B>(b));
}

} // namespace kronex
