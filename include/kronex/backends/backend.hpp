#pragma once
// What every backend provides, written once.
//
// A backend is chosen by the operand's type: backend_traits<Tensor> (expr/lazy_result.hpp) is
// specialised for the tensor types it accepts, by deriving from backend_traits_base<Policy>,
// where Policy gives
//   operand_value_type                     the value type of the operand tensor
//   rank                                   its rank, or 0 when only known at run time
//   result_type<T, D>, compiled_type<T, D> what a lazy result evaluates to, what compile returns
//   shape(like)                            the operand's shape (global, for distributed tensors)
//   compile<T, D>(desc, like)              check, plan and instantiate: a compiled operator
//   explain<T, D>(desc, like)              check and plan only: a plan_description
// and backend_traits_base adds is_backend, value_type<Op>, evaluate<T, D> and the rank and value
// type checks with readable messages. check_backend<B>() states the contract as static_asserts.
//
// Every compiled operator derives from compiled_operator<Plan>, which holds the plan (built in
// the four phases check, plan, instantiate, run) and gives plan(), shape(), run(b, x) on raw
// buffers and printing; the backend adds the tensor-typed calls.
#include <cstddef>
#include <ostream>
#include <type_traits>
#include <utility>

#include "../expr/lazy_result.hpp"
#include "../plan/operator_desc.hpp"
#include "../plan/operator_tree.hpp"
#include "../plan/plan.hpp"

namespace kronex {

namespace detail {

template <class Plan>
class compiled_operator {
public:
  // Builds the plan in place from the plan's constructor arguments (the tag keeps this template
  // from competing with the copy and move constructors).
  template <class... Args>
  explicit compiled_operator(std::in_place_t, Args&&... args) : m_plan(std::forward<Args>(args)...) {}

  const plan_description& plan() const noexcept { return m_plan.description(); }
  const shape_t& shape() const noexcept { return m_plan.shape(); }

  // Raw form for application buffers: C-order arrays of shape() (this rank's blocks for a
  // distributed operator), in the backend's memory; x may equal b. No shape check.
  void run(const typename Plan::value_type* b, typename Plan::value_type* x) { m_plan.run(b, x); }

  friend std::ostream& operator<<(std::ostream& os, const compiled_operator& o) { return os << o.plan(); }

protected:
  // A tensor's shape must equal the compiled one; the message names both.
  void check(const shape_t& s, const char* what) const { check_shape(s, shape(), what, shape_source::compiled); }

  Plan m_plan;
};

template <class Policy>
struct backend_traits_base : Policy {
  static constexpr bool is_backend = true;

  // The factors' value type, or the operand's when every factor is an identity.
  template <class Op>
  using value_type = std::conditional_t<std::is_void_v<typename Op::value_type>, typename Policy::operand_value_type,
                                        typename Op::value_type>;

  template <class T, std::size_t D>
  static constexpr void check_operand() {
    static_assert(Policy::rank == 0 || Policy::rank == D, "kronex: the operand's rank must equal the number of factors");
    static_assert(std::is_same_v<typename Policy::operand_value_type, T>,
                  "kronex: the operand's value type must match the factors' value type");
  }

  // Evaluation of a lazy result: compile for this operand, run once.
  template <class T, std::size_t D, class Like>
  static typename Policy::template result_type<T, D> evaluate(const operator_desc<T>& d, const Like& b) {
    check_operand<T, D>();
    auto op = Policy::template compile<T, D>(d, b);
    return op(b);
  }

  // The same for an operator built with the algebra (sums, compositions, their inverses). A
  // plain Kronecker product runs the backend's own plan, as kron() alone would.
  template <class T, std::size_t D, class Like>
  static typename Policy::template result_type<T, D> evaluate(const operator_tree<T>& t, const Like& b) {
    check_operand<T, D>();
    if (t.is_plain_kron()) {
      operator_desc<T> d = t.leaf;
      d.options = t.options;
      return evaluate<T, D>(d, b);
    }
    static_assert(has_tree_compile<T, D, Like>(),
                  "kronex: operator sums, scalar multiples and compositions run on host, device and distributed host "
                  "operands so far; this operand's backend compiles single Kronecker products");
    if constexpr (has_tree_compile<T, D, Like>()) {
      auto op = Policy::template compile<T, D>(t, b);
      return op(b);
    } else {
      return {};
    }
  }

  // Whether the backend compiles operator trees (composite plans).
  template <class T, std::size_t D, class Like, class = void>
  struct tree_compile : std::false_type {};
  template <class T, std::size_t D, class Like>
  struct tree_compile<T, D, Like, std::void_t<decltype(Policy::template compile<T, D>(
                                      std::declval<const operator_tree<T>&>(), std::declval<const Like&>()))>>
      : std::true_type {};
  template <class T, std::size_t D, class Like>
  static constexpr bool has_tree_compile() { return tree_compile<T, D, Like>::value; }
};

template <class L, class = void>
struct has_backend : std::false_type {};
template <class L>
struct has_backend<L, std::void_t<decltype(backend_traits<L>::is_backend)>> : std::true_type {};

// The backend contract, checked where a backend is used, with one message per missing member.
template <class Like, class T, std::size_t D>
constexpr bool check_backend() {
  using B = backend_traits<Like>;
  static_assert(has_backend<Like>::value,
                "kronex: no backend accepts this operand type: specialise kronex::backend_traits for it "
                "(see kronex/backends/backend.hpp)");
  if constexpr (has_backend<Like>::value) {
    static_assert(std::is_same_v<decltype(B::shape(std::declval<const Like&>())), shape_t>,
                  "kronex: a backend must provide shape(like) returning kronex::shape_t");
    static_assert(std::is_same_v<decltype(B::template explain<T, D>(std::declval<const operator_desc<T>&>(),
                                                                     std::declval<const Like&>())),
                                 plan_description>,
                  "kronex: a backend must provide explain<T, D>(desc, like) returning a plan_description");
    static_assert(std::is_same_v<decltype(B::template compile<T, D>(std::declval<const operator_desc<T>&>(),
                                                                     std::declval<const Like&>())),
                                 typename B::template compiled_type<T, D>>,
                  "kronex: a backend must provide compile<T, D>(desc, like) returning compiled_type<T, D>");
    static_assert(std::is_same_v<decltype(B::template evaluate<T, D>(std::declval<const operator_desc<T>&>(),
                                                                      std::declval<const Like&>())),
                                 typename B::template result_type<T, D>>,
                  "kronex: a backend must provide evaluate<T, D>(desc, operand) returning result_type<T, D>");
  }
  return true;
}

} // namespace detail

} // namespace kronex
