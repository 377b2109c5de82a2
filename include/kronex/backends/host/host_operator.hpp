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
#include "../backend.hpp"
#include "host_composite.hpp"
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

// Plan: host_plan<T> for a Kronecker product, host_composite_plan<T> for operator sums,
// compositions and their inverses; the tensor-level calls are the same.
template <class T, std::size_t D, class Plan = detail::host_plan<T>>
class host_operator : public detail::compiled_operator<Plan> {
  using base = detail::compiled_operator<Plan>;

public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = xt::xtensor<T, D>;

  // Check, plan and instantiate for operands of this shape.
  // (d: an operator_desc<T>, or an operator_tree<T> for a composite plan.)
  template <class Desc>
  host_operator(const Desc& d, const shape_t& shape) : base(std::in_place, d, shape) {}

  // x = K(b) (or K^{-1} b for an inverse). x must already have b's shape; x may be b itself.
  // No allocation, no factorization.
  void operator()(const tensor_type& b, tensor_type& x) {
    check(b, "input");
    check(x, "output");
    this->m_plan.run(b.data(), x.data());
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
    check(e, "input");  // before any copy: a wrong rank would be reshaped (reading garbage) by it
    if constexpr (std::is_same_v<E, tensor_type>) {
      tensor_type x = tensor_type::from_shape(e.shape());
      this->m_plan.run(e.data(), x.data());
      return x;
    } else {
      tensor_type x = e;  // evaluates views and other layouts into C order
      this->m_plan.run(x.data(), x.data());
      return x;
    }
  }

private:
  template <class X>
  void check(const X& t, const char* what) const {
    base::check(shape_t(t.shape().begin(), t.shape().end()), what);
  }
};

namespace detail {
template <class E>
struct host_policy {
  using operand_value_type = typename E::value_type;
  static constexpr std::size_t rank = static_rank<E>::value;
  template <class T, std::size_t D>
  using result_type = xt::xtensor<T, D>;
  template <class T, std::size_t D>
  using compiled_type = host_operator<T, D>;
  template <class T, std::size_t D>
  using compiled_tree_type = host_operator<T, D, host_composite_plan<T>>;

  static shape_t shape(const E& e) { return shape_t(e.shape().begin(), e.shape().end()); }

  template <class T, std::size_t D>
  static host_operator<T, D> compile(const operator_desc<T>& d, const E& like) {
    static_assert(rank_matches<E, D>, "kronex::compile: the tensor's rank must equal the number of factors");
    return host_operator<T, D>(d, shape(like));
  }

  template <class T, std::size_t D>
  static plan_description explain(const operator_desc<T>& d, const E& like) {
    static_assert(rank_matches<E, D>, "kronex::explain: the tensor's rank must equal the number of factors");
    return host_plan<T>::explain(d, shape(like));
  }

  // Operator sums, compositions and their inverses.
  template <class T, std::size_t D>
  static compiled_tree_type<T, D> compile(const operator_tree<T>& t, const E& like) {
    static_assert(rank_matches<E, D>, "kronex::compile: the tensor's rank must equal the number of factors");
    return compiled_tree_type<T, D>(t, shape(like));
  }
  template <class T, std::size_t D>
  static plan_description explain(const operator_tree<T>& t, const E& like) {
    static_assert(rank_matches<E, D>, "kronex::explain: the tensor's rank must equal the number of factors");
    return host_composite_plan<T>::explain(t, shape(like));
  }
};
} // namespace detail

// Every xtensor expression is a host operand.
template <class E>
struct backend_traits<E, std::enable_if_t<xt::is_xexpression<E>::value>>
    : detail::backend_traits_base<detail::host_policy<E>> {};

} // namespace kronex
