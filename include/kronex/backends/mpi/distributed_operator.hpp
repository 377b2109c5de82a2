#pragma once
// The distributed backend's user-facing pieces: distributed_operator<Tensor> (what compile()
// returns for a distributed tensor) and the backend_traits that route distributed tensors to it.
// Tensor is distributed_tensor<T, D> (host ranks) or distributed_device_tensor<T, D> (device
// ranks); Tensor::ranks_type says how a rank works.
#include <cstddef>
#include <ostream>
#include <type_traits>
#include <vector>

#include "../../expr/lazy_result.hpp"
#include "../backend.hpp"
#include "distributed_composite.hpp"
#include "distributed_plan.hpp"
#include "distributed_tensor.hpp"

namespace kronex {

// Plan: distributed_plan for a Kronecker product, distributed_composite_plan for operator sums,
// compositions and inverses of sums.
template <class Tensor, class Plan = detail::distributed_plan<typename Tensor::value_type, typename Tensor::ranks_type>>
class distributed_operator : public detail::compiled_operator<Plan> {
  using plan_type = Plan;
  using base = detail::compiled_operator<plan_type>;

public:
  using tensor_type = Tensor;
  using value_type = typename Tensor::value_type;
  static constexpr std::size_t rank = Tensor::rank;

  // Check, plan and instantiate; collective over the tensor's communicator.
  template <class U = value_type>
  distributed_operator(const operator_desc<U>& d, const Tensor& like)
      : base(std::in_place, d, like.cart(), shape_t(like.global_shape().begin(), like.global_shape().end()), like.ranks()),
        m_grid(like.grid()) {}

  // An operator sum, composition or inverse of a sum (collective).
  template <class U = value_type>
  distributed_operator(const operator_tree<U>& t, const Tensor& like) : base(std::in_place, t, ops(like)), m_grid(like.grid()) {}

  // Check and plan only (collective): what explain() prints.
  static plan_description explain(const operator_desc<value_type>& d, const Tensor& like) {
    return plan_type::explain(d, like.cart(), shape_t(like.global_shape().begin(), like.global_shape().end()),
                              like.ranks());
  }
  static plan_description explain(const operator_tree<value_type>& t, const Tensor& like) {
    return plan_type::explain(t, ops(like));
  }

  // x = K(b) (or K^{-1} b); x may be b. Collective: every rank of the grid calls it.
  void operator()(const Tensor& b, Tensor& x) {
    check(b, "input");
    check(x, "output");
    this->m_plan.run(b.local().data(), x.local().data());
  }
  Tensor operator()(const Tensor& b) {
    check(b, "input");
    Tensor x = Tensor::like(b);
    this->m_plan.run(b.local().data(), x.local().data());
    return x;
  }

  // The global shape (shape() is the same).
  const shape_t& global_shape() const noexcept { return this->m_plan.global_shape(); }
  // Exchanges (all-to-alls) one run makes.
  std::size_t exchanges() const noexcept { return this->m_plan.exchanges(); }

  // Runs x = K(b) (or K^{-1} b) once, timing each exchange and each phase's local work on this
  // rank: the pieces in order, each with the printed steps it covers (plan().steps[first,
  // first + count)) and its seconds. For finding where a distributed solve's time goes (device
  // work is synchronized after each piece). Kronecker products only; collective.
  std::vector<timed_steps> time_steps(const Tensor& b, Tensor& x) {
    check(b, "input");
    check(x, "output");
    return this->m_plan.time_steps(b.local().data(), x.local().data());
  }

private:
  // The composite plan's hooks for this tensor's grid and this rank's block.
  using composite_ops = detail::distributed_composite_ops<value_type, typename Tensor::ranks_type>;
  static composite_ops ops(const Tensor& like) {
    detail::box block;
    block.offset.assign(like.local_offset().begin(), like.local_offset().end());
    block.extent.assign(like.local_shape().begin(), like.local_shape().end());
    return composite_ops(like.cart(), shape_t(like.global_shape().begin(), like.global_shape().end()), block, like.ranks());
  }

  // The same global shape and grid on every rank, so a mismatch throws on every rank.
  void check(const Tensor& t, const char* what) const {
    base::check(shape_t(t.global_shape().begin(), t.global_shape().end()), what);
    if (t.grid() != m_grid) {
      throw dimension_mismatch(detail::message("kronex: the ", what, "'s process grid differs from the compiled one"));
    }
  }

  typename Tensor::grid_type m_grid;
};

namespace detail {
template <class Tensor>
struct distributed_policy {
  using operand_value_type = typename Tensor::value_type;
  static constexpr std::size_t rank = Tensor::rank;
  template <class U, std::size_t Rank>
  using result_type = Tensor;
  template <class U, std::size_t Rank>
  using compiled_type = distributed_operator<Tensor>;

  static shape_t shape(const Tensor& t) { return shape_t(t.global_shape().begin(), t.global_shape().end()); }

  template <class U, std::size_t Rank>
  static distributed_operator<Tensor> compile(const operator_desc<U>& d, const Tensor& like) {
    static_assert(Rank == rank, "kronex::compile: the tensor's rank must equal the number of factors");
    static_assert(std::is_same_v<U, operand_value_type>,
                  "kronex: the operand's value type must match the factors' value type");
    return distributed_operator<Tensor>(d, like);
  }

  template <class U, std::size_t Rank>
  static plan_description explain(const operator_desc<U>& d, const Tensor& like) {
    static_assert(Rank == rank, "kronex::explain: the tensor's rank must equal the number of factors");
    static_assert(std::is_same_v<U, operand_value_type>,
                  "kronex: the operand's value type must match the factors' value type");
    return distributed_operator<Tensor>::explain(d, like);
  }

  // Operator sums, compositions and inverses of sums.
  using composite_type =
      distributed_operator<Tensor, distributed_composite_plan<typename Tensor::value_type, typename Tensor::ranks_type>>;
  template <class U, std::size_t Rank>
  static composite_type compile(const operator_tree<U>& t, const Tensor& like) {
    static_assert(Rank == rank, "kronex::compile: the tensor's rank must equal the number of factors");
    return composite_type(t, like);
  }
  template <class U, std::size_t Rank>
  static plan_description explain(const operator_tree<U>& t, const Tensor& like) {
    static_assert(Rank == rank, "kronex::explain: the tensor's rank must equal the number of factors");
    return composite_type::explain(t, like);
  }
};

template <class Tensor>
struct distributed_backend_traits : backend_traits_base<distributed_policy<Tensor>> {};
} // namespace detail

template <class T, std::size_t D>
struct backend_traits<distributed_tensor<T, D>> : detail::distributed_backend_traits<distributed_tensor<T, D>> {};

} // namespace kronex
