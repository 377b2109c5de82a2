#pragma once
// What sparse_operator<T> and matrix_free<T> share: an operator on tensors of one shape known
// only by its action y = A x on C-order buffers (Derived::run(const T* x, T* y) const), with no
// Kronecker structure to compile a plan from. So:
//   apply(x)   runs at once and returns an xt::xtensor (there is no plan to make lazy);
//   solve(b)   and inverse() do not compile: such an operator is solved with a Krylov method
//              (kronex::cg, bicgstab, gmres, minres; docs/krylov.md);
//   in expressions (A + kron(...), 0.5 * A, A * kron(...).inverse(), ...) it is a leaf that is
//              applied: the expression's apply() works on host tensors, its solve() says to use a
//              Krylov solver. Derived::action() gives what the leaf runs.
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>

#include <xtensor/xtensor.hpp>

#include "../backends/host/host_operator.hpp"
#include "../core/error.hpp"
#include "../core/shape.hpp"
#include "../core/value_traits.hpp"
#include "../expr/lazy_result.hpp"
#include "../plan/operator_desc.hpp"
#include "../plan/operator_tree.hpp"

namespace kronex::detail {

template <class Derived, class T>
class flat_operator {
  static_assert(is_value_type_v<T>, "kronex: an operator's value type must be float, double, std::complex<float> or "
                                    "std::complex<double>");

public:
  using value_type = T;
  using flat_operator_tag = void;
  // Any tensor rank: the shape is checked at run time (in expressions, against the Kronecker
  // factors' sizes).
  static constexpr std::size_t rank = 0;

  // The tensor shape the operator acts on; it is an N x N matrix with N the product of the
  // extents, the tensor flattened in C order.
  const shape_t& shape() const noexcept { return m_shape; }
  std::size_t size() const noexcept { return m_size; }
  shape_t sizes() const { return m_shape; }

  // y = A x, computed now. x: any xtensor expression of this shape (a view or another layout is
  // first copied into C order).
  template <class E>
  xt::xtensor<T, static_rank<E>::value> apply(const xt::xexpression<E>& x) const {
    constexpr std::size_t D = static_rank<E>::value;
    static_assert(std::is_same_v<typename E::value_type, T>, "kronex: the operand's value type must match the operator's");
    static_assert(D > 0, "kronex: apply takes a tensor of fixed rank (an xt::xtensor<T, D> or a view of one)");
    const E& e = x.derived_cast();
    check_shape(to_shape(e.shape()), m_shape, "operand", shape_source::factors);
    xt::xtensor<T, D> y = xt::xtensor<T, D>::from_shape(e.shape());
    if constexpr (std::is_same_v<E, xt::xtensor<T, D>>) {
      derived().run(e.data(), y.data());
    } else {
      const xt::xtensor<T, D> c = e;
      derived().run(c.data(), y.data());
    }
    return y;
  }

  template <class B>
  void solve(B&&) const {
    static_assert(always_false<B>, "kronex: this operator (a sparse_operator or matrix_free) has no direct solve: use a "
                                   "Krylov solver (kronex::cg, kronex::bicgstab, kronex::gmres, kronex::minres)");
  }
  template <class U = void>
  void inverse() const {
    static_assert(always_false<U>, "kronex: this operator (a sparse_operator or matrix_free) has no direct solve: use a "
                                   "Krylov solver (kronex::cg, kronex::bicgstab, kronex::gmres, kronex::minres)");
  }

protected:
  flat_operator(shape_t shape, const char* who) : m_shape(std::move(shape)), m_size(product(m_shape)) {
    if (m_shape.empty()) throw invalid_operator(message("kronex::", who, ": the shape is empty (rank 0)"));
    for (std::size_t k = 0; k < m_shape.size(); ++k)
      if (m_shape[k] == 0)
        throw invalid_operator(message("kronex::", who, ": the shape ", format_shape(m_shape), " has a zero extent at mode ", k));
  }

private:
  const Derived& derived() const noexcept { return static_cast<const Derived&>(*this); }

  shape_t m_shape;
  std::size_t m_size;
};

} // namespace kronex::detail
