#pragma once
// The distributed backend's user-facing pieces: distributed_operator<T, D> (what compile()
// returns for a distributed_tensor) and the backend_traits that route distributed tensors to it.
#include <cstddef>
#include <ostream>
#include <type_traits>

#include "../../expr/lazy_result.hpp"
#include "distributed_plan.hpp"
#include "distributed_tensor.hpp"

namespace kronex {

template <class T, std::size_t D>
class distributed_operator {
public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = distributed_tensor<T, D>;

  // Collective over the tensor's communicator.
  distributed_operator(const operator_desc<T>& d, const distributed_tensor<T, D>& like)
      : m_grid(like.grid()), m_plan(d, like.cart(), shape_t(like.global_shape().begin(), like.global_shape().end())) {}

  // x = K(b) (or K^{-1} b); x may be b. Collective: every rank of the grid calls it.
  void operator()(const tensor_type& b, tensor_type& x) {
    check(b, "input");
    check(x, "output");
    m_plan.run(b.local().data(), x.local().data());
  }
  tensor_type operator()(const tensor_type& b) {
    check(b, "input");
    tensor_type x = tensor_type::like(b);
    m_plan.run(b.local().data(), x.local().data());
    return x;
  }

  const plan_description& plan() const noexcept { return m_plan.description(); }
  // Exchanges (all-to-alls) one run makes.
  std::size_t exchanges() const noexcept { return m_plan.exchanges(); }

  friend std::ostream& operator<<(std::ostream& os, const distributed_operator& o) { return os << o.plan(); }

private:
  // The same global shape and grid on every rank, so a mismatch throws on every rank.
  void check(const tensor_type& t, const char* what) const {
    detail::check_shape(shape_t(t.global_shape().begin(), t.global_shape().end()), m_plan.global_shape(), what,
                        detail::shape_source::compiled);
    if (t.grid() != m_grid) {
      throw dimension_mismatch(detail::message("kronex: the ", what, "'s process grid differs from the compiled one"));
    }
  }

  std::array<int, D> m_grid;
  detail::distributed_plan<T> m_plan;
};

template <class T, std::size_t D>
struct backend_traits<distributed_tensor<T, D>> {
  static constexpr bool is_backend = true;

  template <class Op>
  using value_type = std::conditional_t<std::is_void_v<typename Op::value_type>, T, typename Op::value_type>;
  template <class U, std::size_t Rank>
  using result_type = distributed_tensor<U, Rank>;

  template <class U, std::size_t Rank>
  static distributed_operator<U, Rank> compile(const operator_desc<U>& d, const distributed_tensor<T, D>& like) {
    static_assert(Rank == D, "kronex::compile: the tensor's rank must equal the number of factors");
    return distributed_operator<U, Rank>(d, like);
  }

  template <class U, std::size_t Rank>
  static distributed_tensor<U, Rank> evaluate(const operator_desc<U>& d, const distributed_tensor<T, D>& b) {
    static_assert(std::is_same_v<U, T>, "kronex: the operand's value type must match the factors' value type");
    static_assert(Rank == D, "kronex: the operand's rank must equal the number of factors");
    distributed_operator<U, Rank> op(d, b);
    return op(b);
  }
};

} // namespace kronex
