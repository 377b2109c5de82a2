#pragma once
// The distributed backend's user-facing pieces: distributed_operator<Tensor> (what compile()
// returns for a distributed tensor) and the backend_traits that route distributed tensors to it.
// Tensor is distributed_tensor<T, D> (host ranks) or distributed_device_tensor<T, D> (device
// ranks); Tensor::ranks_type says how a rank works.
#include <cstddef>
#include <ostream>
#include <type_traits>

#include "../../expr/lazy_result.hpp"
#include "distributed_plan.hpp"
#include "distributed_tensor.hpp"

namespace kronex {

template <class Tensor>
class distributed_operator {
public:
  using tensor_type = Tensor;
  using value_type = typename Tensor::value_type;
  static constexpr std::size_t rank = Tensor::rank;

  // Collective over the tensor's communicator.
  template <class U = value_type>
  distributed_operator(const operator_desc<U>& d, const Tensor& like)
      : m_grid(like.grid()),
        m_plan(d, like.cart(), shape_t(like.global_shape().begin(), like.global_shape().end()), like.ranks()) {}

  // x = K(b) (or K^{-1} b); x may be b. Collective: every rank of the grid calls it.
  void operator()(const Tensor& b, Tensor& x) {
    check(b, "input");
    check(x, "output");
    m_plan.run(b.local().data(), x.local().data());
  }
  Tensor operator()(const Tensor& b) {
    check(b, "input");
    Tensor x = Tensor::like(b);
    m_plan.run(b.local().data(), x.local().data());
    return x;
  }

  const plan_description& plan() const noexcept { return m_plan.description(); }
  // Exchanges (all-to-alls) one run makes.
  std::size_t exchanges() const noexcept { return m_plan.exchanges(); }

  friend std::ostream& operator<<(std::ostream& os, const distributed_operator& o) { return os << o.plan(); }

private:
  // The same global shape and grid on every rank, so a mismatch throws on every rank.
  void check(const Tensor& t, const char* what) const {
    detail::check_shape(shape_t(t.global_shape().begin(), t.global_shape().end()), m_plan.global_shape(), what,
                        detail::shape_source::compiled);
    if (t.grid() != m_grid) {
      throw dimension_mismatch(detail::message("kronex: the ", what, "'s process grid differs from the compiled one"));
    }
  }

  typename Tensor::grid_type m_grid;
  detail::distributed_plan<value_type, typename Tensor::ranks_type> m_plan;
};

namespace detail {
template <class Tensor>
struct distributed_backend_traits {
  static constexpr bool is_backend = true;
  using T = typename Tensor::value_type;
  static constexpr std::size_t D = Tensor::rank;

  template <class Op>
  using value_type = std::conditional_t<std::is_void_v<typename Op::value_type>, T, typename Op::value_type>;
  template <class U, std::size_t Rank>
  using result_type = Tensor;

  template <class U, std::size_t Rank>
  static distributed_operator<Tensor> compile(const operator_desc<U>& d, const Tensor& like) {
    static_assert(Rank == D, "kronex::compile: the tensor's rank must equal the number of factors");
    static_assert(std::is_same_v<U, T>, "kronex: the operand's value type must match the factors' value type");
    return distributed_operator<Tensor>(d, like);
  }

  template <class U, std::size_t Rank>
  static Tensor evaluate(const operator_desc<U>& d, const Tensor& b) {
    static_assert(std::is_same_v<U, T>, "kronex: the operand's value type must match the factors' value type");
    static_assert(Rank == D, "kronex: the operand's rank must equal the number of factors");
    distributed_operator<Tensor> op(d, b);
    return op(b);
  }
};
} // namespace detail

template <class T, std::size_t D>
struct backend_traits<distributed_tensor<T, D>> : detail::distributed_backend_traits<distributed_tensor<T, D>> {};

} // namespace kronex
