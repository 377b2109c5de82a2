#pragma once
// The device backend's user-facing pieces: device_operator<T, D> (what kronex::compile returns
// for device operands) and the backend_traits that route device_tensor and device_view operands
// to it. The same kron(...).solve(b) gives a host plan for an xtensor b and a device plan here.
#include <cstddef>
#include <ostream>
#include <type_traits>

#include "../../expr/lazy_result.hpp"
#include "device_plan.hpp"
#include "device_tensor.hpp"

namespace kronex {

template <class T, std::size_t D>
class device_operator {
public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = device_tensor<T, D>;

  device_operator(const operator_desc<T>& d, const shape_t& shape) : m_plan(d, shape) {}

  // x = K(b) (or K^{-1} b) on the device; x may be b. No allocation, no factorization, no
  // host<->device transfer (unless the plan shows a stage_through_host step).
  void operator()(device_view<const T, D> b, device_view<T, D> x) {
    check(b.shape(), "input");
    check(x.shape(), "output");
    m_plan.run(b.data(), x.data());
  }

  // Allocates the result on the device.
  tensor_type operator()(device_view<const T, D> b) {
    check(b.shape(), "input");
    tensor_type x(b.shape());
    m_plan.run(b.data(), x.data());
    return x;
  }

  // Raw form for application buffers: device pointers to C-order arrays of shape().
  void run(const T* b, T* x) { m_plan.run(b, x); }

  const plan_description& plan() const noexcept { return m_plan.description(); }
  const shape_t& shape() const noexcept { return m_plan.shape(); }
  detail::device::context& context() noexcept { return m_plan.context(); }

  friend std::ostream& operator<<(std::ostream& os, const device_operator& o) { return os << o.plan(); }

private:
  void check(const std::array<std::size_t, D>& s, const char* what) const {
    detail::check_shape(shape_t(s.begin(), s.end()), m_plan.shape(), what, detail::shape_source::compiled);
  }

  detail::device_plan<T> m_plan;
};

namespace detail {
template <class T, std::size_t D>
struct device_backend_traits {
  static constexpr bool is_backend = true;

  template <class Op>
  using value_type = std::conditional_t<std::is_void_v<typename Op::value_type>, T, typename Op::value_type>;
  template <class U, std::size_t Rank>
  using result_type = device_tensor<U, Rank>;
  template <class U, std::size_t Rank>
  using compiled_type = device_operator<U, Rank>;

  template <class U, std::size_t Rank>
  static device_operator<U, Rank> compile(const operator_desc<U>& d, device_view<const T, D> like) {
    static_assert(Rank == D, "kronex::compile: the tensor's rank must equal the number of factors");
    return device_operator<U, Rank>(d, shape_t(like.shape().begin(), like.shape().end()));
  }

  template <class U, std::size_t Rank>
  static device_tensor<U, Rank> evaluate(const operator_desc<U>& d, device_view<const T, D> b) {
    static_assert(std::is_same_v<U, T>, "kronex: the operand's value type must match the factors' value type");
    static_assert(Rank == D, "kronex: the operand's rank must equal the number of factors");
    device_operator<U, Rank> op(d, shape_t(b.shape().begin(), b.shape().end()));
    return op(b);
  }
};
} // namespace detail

template <class T, std::size_t D>
struct backend_traits<device_tensor<T, D>> : detail::device_backend_traits<T, D> {};
template <class T, std::size_t D>
struct backend_traits<device_view<T, D>> : detail::device_backend_traits<std::remove_const_t<T>, D> {};

} // namespace kronex
