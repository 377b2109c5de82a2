#pragma once
// The two verbs that turn expressions into plans:
//   compile(expr, like): a reusable compiled operator; `like` is a tensor (its type picks the
//                        backend) or a shape (host). Factors once; call it many times.
//   explain(...):        the printed plan from the check and plan phases only: nothing is
//                        factored (but a split factor solved across ranks, see explain_plan),
//                        allocated or uploaded (explain_plan() gives it as a value).
#include <sstream>
#include <string>
#include <type_traits>

#include "backends/host/host_operator.hpp"
#include "expr/kron.hpp"

namespace kronex {


namespace detail {
// The value type compile(expr, like) and explain_plan(expr, like) work in: the backend's choice
// for a tensor `like`, the factors' for a shape (the host).
template <class E, class Like, class = void>
struct target_value_type {
  using type = typename E::value_type;
  static_assert(!std::is_void_v<type>,
                "kronex::compile/explain: with only identity factors the value type is unknown; pass a "
                "tensor as `like` instead of a shape");
};
template <class E, class Like>
struct target_value_type<E, Like, std::enable_if_t<has_backend<Like>::value>> {
  using type = typename backend_traits<Like>::template value_type<E>;
  static_assert(check_backend<Like, type, E::rank>());
};

// The expression's description in value type T, compiled with `options`.
template <class T, class E>
operator_desc<T> describe_with(const E& expr, const compile_options& options) {
  operator_desc<T> d = expr.template describe<T>();
  d.options = options;
  return d;
}
} // namespace detail

// With options (compile_options: the singularity threshold, a check of the factors for NaN
// and Inf); compile(expr, like) uses the defaults.
template <class... C, class Like>
auto compile(const kron_expr<C...>& expr, const Like& like, const compile_options& options) {
  using E = kron_expr<C...>;
  using T = typename detail::target_value_type<E, Like>::type;
  const operator_desc<T> d = detail::describe_with<T>(expr, options);
  if constexpr (detail::has_backend<Like>::value)
    return backend_traits<Like>::template compile<T, E::rank>(d, like);
  else
    return host_operator<T, E::rank>(d, detail::to_shape(like));
}

template <class... C, class Like>
auto compile(const kron_expr<C...>& expr, const Like& like) {
  return compile(expr, like, compile_options{});
}

// The plan that compile(expr, like) would instantiate, from the check and plan phases only:
// nothing is factored, uploaded or allocated, so a plan for any size can be explained. Numbers
// that depend on the factorization (LU fill, swaps) are estimates here; the compiled operator's
// plan() has the exact ones. Errors found by the check phase (shapes, limits) are thrown. One
// exception: a distributed plan that may solve a split mode across ranks factors that one 1D
// factor (whether the solve pipelines depends on its pivots; docs/distributed.md), so a singular
// one throws here too.
template <class... C, class Like>
plan_description explain_plan(const kron_expr<C...>& expr, const Like& like, const compile_options& options = {}) {
  using E = kron_expr<C...>;
  using T = typename detail::target_value_type<E, Like>::type;
  const operator_desc<T> d = detail::describe_with<T>(expr, options);
  if constexpr (detail::has_backend<Like>::value)
    return backend_traits<Like>::template explain<T, E::rank>(d, like);
  else
    return detail::host_plan<T>::explain(d, detail::to_shape(like));
}

template <class... C, class Like>
std::string explain(const kron_expr<C...>& expr, const Like& like) {
  return to_string(explain_plan(expr, like));
}

namespace detail {
// The tree of an algebra expression in the value type compile/explain work in, with `options`;
// the backend must compile trees (a readable error otherwise).
template <class E, class Like>
auto tree_with(const E& expr, const compile_options& options) {
  using T = typename target_value_type<E, Like>::type;
  E::template check_rank<Like>();
  if constexpr (has_backend<Like>::value)
    static_assert(backend_traits<Like>::template has_tree_compile<T, E::rank, Like>(),
                  "kronex: operator sums, scalar multiples and compositions run on host, device and distributed "
                  "operands; this operand's backend compiles single Kronecker products");
  operator_tree<T> t = expr.template describe<T>();
  t.options = options;
  return t;
}
} // namespace detail

// Operators built with the algebra (sums, scalar multiples, compositions, and their inverses and
// pseudo-inverses): the same verbs. The plan shows the terms, the combinations and, for an
// inverse of a sum, the eigen set-up of fast diagonalisation (docs/preconditioners.md).
template <node_kind K, class... C, class Like>
auto compile(const composite_expr<K, C...>& expr, const Like& like, const compile_options& options) {
  using E = composite_expr<K, C...>;
  const auto t = detail::tree_with<E, Like>(expr, options);
  using T = typename decltype(t)::value_type;
  if constexpr (detail::has_backend<Like>::value)
    return backend_traits<Like>::template compile<T, E::rank>(t, like);
  else
    return host_operator<T, E::rank, detail::host_composite_plan<T>>(t, detail::to_shape(like));
}

template <node_kind K, class... C, class Like>
auto compile(const composite_expr<K, C...>& expr, const Like& like) {
  return compile(expr, like, compile_options{});
}

template <node_kind K, class... C, class Like>
plan_description explain_plan(const composite_expr<K, C...>& expr, const Like& like, const compile_options& options = {}) {
  using E = composite_expr<K, C...>;
  const auto t = detail::tree_with<E, Like>(expr, options);
  using T = typename decltype(t)::value_type;
  if constexpr (detail::has_backend<Like>::value)
    return backend_traits<Like>::template explain<T, E::rank>(t, like);
  else
    return detail::host_composite_plan<T>::explain(t, detail::to_shape(like));
}

template <node_kind K, class... C, class Like>
std::string explain(const composite_expr<K, C...>& expr, const Like& like) {
  return to_string(explain_plan(expr, like));
}

namespace detail {
// The operand a nested lazy result is finally computed from: its backend and shape are those of
// every result in the chain.
template <class R>
const auto& innermost_operand(const R& r) {
  if constexpr (is_lazy_result<std::decay_t<decltype(r.operand())>>::value) return innermost_operand(r.operand());
  else return r.operand();
}
} // namespace detail

// The plan that evaluating this lazy result would run (check and plan phases only). For a
// nested result (K.apply(M.solve(b))), the outer plan: its operand has the innermost operand's
// backend and shape.
template <class O, class B>
std::string explain(const lazy_result<O, B>& r) {
  return explain(r.op(), detail::innermost_operand(r));
}

} // namespace kronex
