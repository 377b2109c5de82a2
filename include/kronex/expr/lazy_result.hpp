#pragma once
// lazy_result: the value of `K.solve(b)` or `K.apply(x)` before it is evaluated. It describes the
// work; evaluation compiles a plan for the operand's backend (chosen by the operand's type, see
// backend_traits) and runs it once.
//
// A lazy result is evaluated at most once, and only as an rvalue: assigning it, `.eval()` on a
// temporary, or `std::move(r).eval()`. Evaluating a named lazy result twice would factor twice and
// could read operands that changed in between, so it does not compile; for repeated solves keep
// a compiled operator (kronex::compile), which factors once.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "closure.hpp"

namespace kronex {

// Specialised by each backend for the tensor types it accepts (host: xtensor expressions).
template <class Tensor, class = void>
struct backend_traits;

template <class OpClosure, class OperandClosure>
class lazy_result;

namespace detail {
template <class E>
struct is_lazy_result : std::false_type {};
template <class O, class B>
struct is_lazy_result<lazy_result<O, B>> : std::true_type {};

template <class E, class = void>
struct evaluated_operand { using type = E; };
template <class E>
struct evaluated_operand<E, std::enable_if_t<is_lazy_result<E>::value>> { using type = typename E::result_type; };

template <class>
inline constexpr bool always_false = false;

template <class B>
decltype(auto) evaluate_operand(B&& b) {
  if constexpr (is_lazy_result<std::decay_t<B>>::value) {
    static_assert(!std::is_const_v<std::remove_reference_t<B>>,
                  "kronex: a named lazy result used as an operand must be moved in "
                  "(K.apply(std::move(r))): a lazy result is evaluated once, as an rvalue");
    return std::move(b).eval();   // nested expression: evaluated first, into a temporary
  } else {
    return std::forward<B>(b);
  }
}

} // namespace detail

template <class OpClosure, class OperandClosure>
class lazy_result {
  using op_type = std::decay_t<OpClosure>;
  using operand_type = typename detail::evaluated_operand<std::decay_t<OperandClosure>>::type;
  using backend = backend_traits<operand_type>;

public:
  using backend_type = backend;
  using value_type = typename backend::template value_type<op_type>;
  using result_type = typename backend::template result_type<value_type, op_type::rank>;

  template <class O, class B>
  lazy_result(O&& o, B&& b) : m_op(std::forward<O>(o)), m_operand(std::forward<B>(b)) {}

  result_type eval() && {
    decltype(auto) operand = detail::evaluate_operand(std::move(m_operand));
    return backend::template evaluate<value_type, op_type::rank>(m_op.template describe<value_type>(), operand);
  }
  operator result_type() && { return std::move(*this).eval(); }

  template <class U = void>
  result_type eval() & {
    static_assert(detail::always_false<U>,
                  "kronex: a lazy result is evaluated once, as an rvalue. Assign it directly "
                  "(xt::xtensor<T, D> x = K.solve(b);), call std::move(r).eval(), or keep "
                  "kronex::compile(K.inverse(), b) for repeated solves.");
    return {};
  }
  // The same rule for `xt::xtensor<T, D> x = r;` with a named r: the message, not a bare
  // "no conversion" error.
  template <class U>
  operator U() & {
    static_assert(detail::always_false<U>,
                  "kronex: a lazy result is evaluated once, as an rvalue. Assign it directly "
                  "(xt::xtensor<T, D> x = K.solve(b);), call std::move(r).eval(), or keep "
                  "kronex::compile(K.inverse(), b) for repeated solves.");
    return U{};
  }

  // For explain(): the operator and the operand this result would be computed from.
  const op_type& op() const noexcept { return m_op; }
  const std::decay_t<OperandClosure>& operand() const noexcept { return m_operand; }

private:
  OpClosure m_op;
  OperandClosure m_operand;
};

} // namespace kronex
