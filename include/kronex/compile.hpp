#pragma once
// The two verbs that turn expressions into plans:
//   compile(expr, like): a reusable compiled operator; `like` is a tensor (its type picks the
//                        backend) or a shape (host). Factors once; call it many times.
//   explain(...):        the printed plan, without running the solve (it does compile: the
//                        factorizations run, so a singular factor throws here too).
#include <sstream>
#include <string>
#include <type_traits>

#include "backends/host/host_operator.hpp"
#include "expr/kron.hpp"

namespace kronex {

namespace detail {
template <class L, class = void>
struct has_backend : std::false_type {};
template <class L>
struct has_backend<L, std::void_t<decltype(backend_traits<L>::is_backend)>> : std::true_type {};
} // namespace detail

template <class... C, class Like>
auto compile(const kron_expr<C...>& expr, const Like& like) {
  using E = kron_expr<C...>;
  constexpr std::size_t D = E::rank;
  if constexpr (detail::has_backend<Like>::value) {
    using B = backend_traits<Like>;
    using T = typename B::template value_type<E>;
    return B::template compile<T, D>(expr.template describe<T>(), like);
  } else {
    using T = typename E::value_type;
    static_assert(!std::is_void_v<T>,
                  "kronex::compile: with only identity factors the value type is unknown; pass a "
                  "tensor as `like` instead of a shape");
    return host_operator<T, D>(expr.template describe<T>(), detail::to_shape(like));
  }
}

template <class... C, class Like>
std::string explain(const kron_expr<C...>& expr, const Like& like) {
  return to_string(compile(expr, like).plan());
}

// The plan that evaluating this lazy result would run.
template <class O, class B>
std::string explain(const lazy_result<O, B>& r) {
  if constexpr (detail::is_lazy_result<std::decay_t<B>>::value) {
    // The operand is itself lazy: the plan is compiled for its result's backend and shape.
    using R = lazy_result<O, B>;
    using T = typename R::value_type;
    using compiled = typename R::backend_type::template compiled_type<T, O::rank>;
    return to_string(compiled(r.op().template describe<T>(), r.op().sizes()).plan());
  } else {
    return explain(r.op(), r.operand());
  }
}

} // namespace kronex
