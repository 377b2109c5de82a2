#pragma once
// The host backend's user-facing pieces: host_operator<T, D> (what kronex::compile returns for
// xtensor operands) and the backend_traits that route every xtensor expression to the host.
#include <cstddef>
#include <ostream>
#include <tuple>
#include <type_traits>

#include <xtensor/xexpression.hpp>
#include <xtensor/xtensor.hpp>

#include "../../expr/lazy_result.hpp"
#include "host_plan.hpp"

namespace kronex {

namespace detail {
// An xtensor expression's rank when it is fixed at compile time (xtensor, its views), else 0
// (xarray: checked at run time only).
template <class E, class = void>
struct static_rank : std::integral_constant<std::size_t, 0> {};
template <class E>
struct static_rank<E, std::void_t<decltype(std::tuple_size<typename E::shape_type>::value)>>
    : std::integral_constant<std::size_t, std::tuple_size<typename E::shape_type>::value> {};
template <class E, std::size_t D>
inline constexpr bool rank_matches = static_rank<E>::value == 0 || static_rank<E>::value == D;
} // namespace detail

template <class T, std::size_t D>
class host_operator {
public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = xt::xtensor<T, D>;

  host_operator(const operator_desc<T>& d, const shape_t& shape) : m_plan(d, shape) {}

  // x = K(b) (or K^{-1} b for an inverse). x must already have b's shape; x may be b itself.
  // No allocation, no factorization.
  void operator()(const tensor_type& b, tensor_type& x) {
    check(b, "input");
    check(x, "output");
    m_plan.run(b.data(), x.data());
  }

  // Convenience form that allocates the result. Any xtensor expression is accepted: a non
  // contiguous or column-major one is first copied into C order (the only copy made).
  template <class E>
  tensor_type operator()(const xt::xexpression<E>& b) {
    static_assert(std::is_same_v<typename E::value_type, T>,
                  "kronex: the operand's value type must match the compiled operator's");
    static_assert(detail::rank_matches<E, D>,
                  "kronex: the operand's rank must equal the number of factors");
    const E& e = b.derived_cast();
    if constexpr (std::is_same_v<E, tensor_type>) {
      check(e, "input");
      tensor_type x = tensor_type::from_shape(e.shape());
      m_plan.run(e.data(), x.data());
      return x;
    } else {
      check(e, "input");  // before the copy: a wrong rank would be reshaped (reading garbage) by it
      tensor_type x = e;  // evaluates views and other layouts into C order
      m_plan.run(x.data(), x.data());
      return x;
    }
  }

  // Raw form for application buffers: C-order arrays of shape(); x may equal b.
  void run(const T* b, T* x) { m_plan.run(b, x); }

  const plan_description& plan() const noexcept { return m_plan.description(); }
  const shape_t& shape() const noexcept { return m_plan.shape(); }

  friend std::ostream& operator<<(std::ostream& os, const host_operator& h) { return os << h.plan(); }

private:
  template <class X>
  void check(const X& t, const char* what) const {
    detail::check_shape(shape_t(t.shape().begin(), t.shape().end()), m_plan.shape(), what, detail::shape_source::compiled);
  }

  detail::host_plan<T> m_plan;
};

template <class E>
struct backend_traits<E, std::enable_if_t<xt::is_xexpression<E>::value>> {
  static constexpr bool is_backend = true;

  template <class Op>
  using value_type = std::conditional_t<std::is_void_v<typename Op::value_type>,
                                        typename E::value_type, typename Op::value_type>;
  template <class T, std::size_t D>
  using result_type = xt::xtensor<T, D>;
  template <class T, std::size_t D>
  using compiled_type = host_operator<T, D>;

  static shape_t shape(const E& e) { return shape_t(e.shape().begin(), e.shape().end()); }

  template <class T, std::size_t D>
  static host_operator<T, D> compile(const operator_desc<T>& d, const E& like) {
    static_assert(detail::rank_matches<E, D>, "kronex::compile: the tensor's rank must equal the number of factors");
    return host_operator<T, D>(d, shape(like));
  }

  template <class T, std::size_t D>
  static xt::xtensor<T, D> evaluate(const operator_desc<T>& d, const E& b) {
    static_assert(std::is_same_v<typename E::value_type, T>,
                  "kronex: the operand's value type must match the factors' value type");
    static_assert(detail::rank_matches<E, D>, "kronex: the operand's rank must equal the number of factors");
    host_operator<T, D> h(d, shape(b));
    return h(b);
  }
};

} // namespace kronex
