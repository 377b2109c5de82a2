#pragma once
// kron(f1, ..., fd): the lazy Kronecker-product operator A_1 ⊗ ... ⊗ A_d, where factor k acts along
// axis k of the tensor. It only records the factors (by the closure rules of closure.hpp) and how
// they are to be used: transposed or adjoint, inverted or not. Nothing is computed here.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "../factors/factor_view.hpp"
#include "../plan/operator_desc.hpp"
#include "closure.hpp"
#include "lazy_result.hpp"

namespace kronex {

namespace detail {
// The value type shared by all typed factors (void if all are identities), or a readable error.
template <class... V>
struct common_value_type { using type = void; };
template <class V, class... Rest>
struct common_value_type<V, Rest...> {
  using rest = typename common_value_type<Rest...>::type;
  static_assert(std::is_void_v<V> || std::is_void_v<rest> || std::is_same_v<V, rest>,
                "kronex::kron: all factors must have the same value type (float, double, "
                "std::complex<float> or std::complex<double>); convert them first");
  using type = std::conditional_t<std::is_void_v<V>, rest, V>;
};

template <class F>
std::size_t factor_size(const F& f) { return f.size(); }
template <class T, xt::layout_type L>
std::size_t factor_size(const xt::xtensor<T, 2, L>& f) { return f.shape()[0]; }
} // namespace detail

template <class... Closures>
class kron_expr {
public:
  static constexpr std::size_t rank = sizeof...(Closures);
  // void when every factor is an identity: the operand then decides.
  using value_type = typename detail::common_value_type<
      typename factor_value_type<std::decay_t<Closures>>::type...>::type;

  template <class... F>
  explicit kron_expr(op o, bool inverse, F&&... f) : m_factors(std::forward<F>(f)...), m_op(o), m_inverse(inverse) {}

  op trans() const noexcept { return m_op; }
  bool inverted() const noexcept { return m_inverse; }
  const std::tuple<Closures...>& factors() const noexcept { return m_factors; }

  // (A1 ⊗ A2)^T = A1^T ⊗ A2^T: folded per factor at compile time, never formed.
  auto transpose() const& { return with(compose_transpose(m_op), m_inverse); }
  auto transpose() && { return std::move(*this).with(compose_transpose(m_op), m_inverse); }
  auto adjoint() const& { return with(compose_adjoint(m_op), m_inverse); }
  auto adjoint() && { return std::move(*this).with(compose_adjoint(m_op), m_inverse); }
  auto inverse() const& { return with(m_op, !m_inverse); }
  auto inverse() && { return std::move(*this).with(m_op, !m_inverse); }

  // The pseudo-inverse (a one-term operator sum's, expr/algebra.hpp).
  auto pseudo_inverse(double rtol) const&;
  auto pseudo_inverse(double rtol) &&;

  // x = K^{-1} b, lazily (b is held by the closure rules too).
  template <class B>
  auto solve(B&& b) const& { return make_result(inverse(), std::forward<B>(b)); }
  template <class B>
  auto solve(B&& b) && { return make_result(std::move(*this).inverse(), std::forward<B>(b)); }
  // y = K x, lazily.
  template <class X>
  auto apply(X&& x) const& { return make_result(with(m_op, m_inverse), std::forward<X>(x)); }
  template <class X>
  auto apply(X&& x) && { return make_result(std::move(*this), std::forward<X>(x)); }

  // The type-erased view that plans are compiled from (T: the value type to compile for).
  template <class T>
  operator_desc<T> describe() const {
    static_assert(std::is_void_v<value_type> || std::is_same_v<T, value_type>,
                  "kronex: the operand's value type must match the factors' value type");
    operator_desc<T> d;
    d.trans = m_op;
    d.inverse = m_inverse;
    std::apply([&](const auto&... f) { (d.factors.push_back(make_view<T>(f)), ...); }, m_factors);
    return d;
  }

  shape_t sizes() const {
    shape_t s;
    std::apply([&](const auto&... f) { (s.push_back(detail::factor_size(f)), ...); }, m_factors);
    return s;
  }

private:
  template <class O, class B>
  static auto make_result(O&& o, B&& b) {
    return lazy_result<std::decay_t<O>, detail::closure_t<B&&>>(std::forward<O>(o), std::forward<B>(b));
  }

  // A new expression over the same factors: referring to them (lvalue *this) or taking them over.
  auto with(op o, bool inv) const& {
    return std::apply([&](const auto&... f) { return kron_expr<const std::decay_t<Closures>&...>(o, inv, f...); },
                      m_factors);
  }
  auto with(op o, bool inv) && {
    return std::apply([&](auto&&... f) { return kron_expr<Closures...>(o, inv, std::forward<Closures>(f)...); },
                      std::move(m_factors));
  }

  std::tuple<Closures...> m_factors;
  op m_op;
  bool m_inverse;
};

template <class... F>
auto kron(F&&... f) {
  static_assert(sizeof...(F) >= 1 && sizeof...(F) <= 6, "kronex::kron takes 1 to 6 factors");
  static_assert((is_factor<std::decay_t<F>>::value && ...),
                "kronex::kron: each factor must be a kronex::banded<T>, an xt::xtensor<T, 2>, "
                "kronex::identity(n), kronex::diagonal(v), a kronex::function_solver<T> or a kronex::any_factor<T>");
  std::size_t mode = 0;
  (detail::check_factor(f, mode++), ...);
  return kron_expr<detail::closure_t<F&&>...>(op::none, false, std::forward<F>(f)...);
}

} // namespace kronex

// The operator algebra (+, -, *, pseudo_inverse) comes with kron().
#include "algebra.hpp"
