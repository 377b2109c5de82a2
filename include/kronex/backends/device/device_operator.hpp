#pragma once
// The device backend's user-facing pieces: device_operator<T, D> (what kronex::compile returns
// for device operands) and the backend_traits that route device_tensor and device_view operands
// to it. The same kron(...).solve(b) gives a host plan for an xtensor b and a device plan here.
#include <cstddef>
#include <ostream>
#include <type_traits>
#include <vector>

#include "../../expr/lazy_result.hpp"
#include "../backend.hpp"
#include "device_composite.hpp"
#include "device_plan.hpp"
#include "device_tensor.hpp"

namespace kronex {

// Plan: device_plan<T> for a Kronecker product, device_composite_plan<T> for operator sums,
// compositions and inverses of sums; the tensor-level calls are the same.
template <class T, std::size_t D, class Plan = detail::device_plan<T>>
class device_operator : public detail::compiled_operator<Plan> {
  using base = detail::compiled_operator<Plan>;

public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = device_tensor<T, D>;

  // Check, plan and instantiate for operands of this shape.
  // (d: an operator_desc<T>, or an operator_tree<T> for a composite plan.)
  template <class Desc>
  device_operator(const Desc& d, const shape_t& shape) : base(std::in_place, d, shape) {}

  // x = K(b) (or K^{-1} b) on the device; x may be b. No allocation, no factorization, no
  // host<->device transfer (unless the plan shows a stage_through_host step).
  void operator()(device_view<const T, D> b, device_view<T, D> x) {
    check(b.shape(), "input");
    check(x.shape(), "output");
    this->m_plan.run(b.data(), x.data());
  }

  // Allocates the result on the device.
  tensor_type operator()(device_view<const T, D> b) {
    check(b.shape(), "input");
    tensor_type x(b.shape());
    this->m_plan.run(b.data(), x.data());
    return x;
  }

  // Runs x = K(b) once with a device timer around each step: seconds per step, parallel to
  // plan().steps. For finding the slow step; the timers synchronize after every step.
  std::vector<double> time_steps(device_view<const T, D> b, device_view<T, D> x) {
    check(b.shape(), "input");
    check(x.shape(), "output");
    return this->m_plan.time_steps(b.data(), x.data());
  }

  detail::device::context& context() noexcept { return this->m_plan.context(); }

private:
  void check(const std::array<std::size_t, D>& s, const char* what) const {
    base::check(shape_t(s.begin(), s.end()), what);
  }
};

// A device operand's shape and value type, with no operand: compile or explain a device plan
// before (or without) allocating the tensor, e.g. kronex::explain(K.inverse(),
// kronex::device_shape<double, 3>{{2048, 2048, 2048}}).
template <class T, std::size_t D>
struct device_shape {
  std::array<std::size_t, D> shape{};
};

namespace detail {
template <class T, std::size_t D>
struct device_policy {
  using operand_value_type = T;
  static constexpr std::size_t rank = D;
  template <class U, std::size_t Rank>
  using result_type = device_tensor<U, Rank>;
  template <class U, std::size_t Rank>
  using compiled_type = device_operator<U, Rank>;

  static shape_t shape(device_view<const T, D> like) { return shape_t(like.shape().begin(), like.shape().end()); }
  static shape_t shape(const device_shape<T, D>& like) { return shape_t(like.shape.begin(), like.shape.end()); }

  template <class U, std::size_t Rank, class Like>
  static device_operator<U, Rank> compile(const operator_desc<U>& d, const Like& like) {
    static_assert(Rank == D, "kronex::compile: the tensor's rank must equal the number of factors");
    return device_operator<U, Rank>(d, shape(like));
  }

  template <class U, std::size_t Rank, class Like>
  static plan_description explain(const operator_desc<U>& d, const Like& like) {
    static_assert(Rank == D, "kronex::explain: the tensor's rank must equal the number of factors");
    return device_plan<U>::explain(d, shape(like));
  }

  // Operator sums, compositions and inverses of sums.
  template <class U, std::size_t Rank, class Like>
  static device_operator<U, Rank, device_composite_plan<U>> compile(const operator_tree<U>& t, const Like& like) {
    static_assert(Rank == D, "kronex::compile: the tensor's rank must equal the number of factors");
    return device_operator<U, Rank, device_composite_plan<U>>(t, shape(like));
  }
  template <class U, std::size_t Rank, class Like>
  static plan_description explain(const operator_tree<U>& t, const Like& like) {
    static_assert(Rank == D, "kronex::explain: the tensor's rank must equal the number of factors");
    return device_composite_plan<U>::explain(t, shape(like));
  }
};
} // namespace detail

template <class T, std::size_t D>
struct backend_traits<device_tensor<T, D>> : detail::backend_traits_base<detail::device_policy<T, D>> {};
template <class T, std::size_t D>
struct backend_traits<device_view<T, D>> : detail::backend_traits_base<detail::device_policy<std::remove_const_t<T>, D>> {};
template <class T, std::size_t D>
struct backend_traits<device_shape<T, D>> : detail::backend_traits_base<detail::device_policy<T, D>> {};

} // namespace kronex
