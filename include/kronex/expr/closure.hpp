#pragma once
// Closure rules, in one place (the rule xtensor arrived at after its dangling-reference bugs):
// an expression holds an lvalue operand by const reference and takes an rvalue operand by value
// (moved in). So `kron(A, B)` with named A, B copies nothing and must not outlive A and B, while
// `kron(gallery::bspline_mass<double>(64, 3), ...)` owns its temporary factor and is safe to
// return from a function. docs/architecture.md ("Lifetimes") spells out the consequences.
#include <type_traits>

namespace kronex::detail {

template <class A>
using closure_t = std::conditional_t<std::is_lvalue_reference_v<A>, const std::decay_t<A>&, std::decay_t<A>>;

} // namespace kronex::detail
