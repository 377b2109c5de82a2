#pragma once
// Operator arithmetic in the DSL: the values that A + B, A - B, -A, c * A, A * c, A * B and the
// methods on them evaluate to. Each records what kronex::composite_expr records for the same C++
// expression (operands, coefficients, transposes, inversion), and nothing is computed: exec/
// turns it into the operator_tree the C++ expression describes. Every problem is a dsl_error at
// `at` (the operator sign or the method's name); limits (evaluator.hpp) are checked as the
// operator is built.
#include <memory>
#include <string>

#include "eval/values.hpp"

namespace kronex::dsl {

using operator_ptr = std::shared_ptr<const operator_value>;

// Where and as what the new operator appears: `text` its source text, `where` its range.
struct operator_site {
  source_range at;
  std::string text;
  source_range where;
};

// An assembled operator (mtx_operator(...), jacobi(...)) as an operator: a leaf of the
// combinations below, as a kronex::sparse_operator<T> is a leaf of the C++ expressions.
operator_ptr assembled_leaf(const std::shared_ptr<const assembled_value>& a);
// a + b (sign 1) or a - b (sign -1): same sizes, one value type.
operator_ptr add(const operator_ptr& a, const operator_ptr& b, double sign, const operator_site& s);
// c * a (and a * c, -a).
operator_ptr scale(const operator_ptr& a, double c, const operator_site& s);
// a * b: apply b, then a.
operator_ptr compose(const operator_ptr& a, const operator_ptr& b, const operator_site& s);
// .transpose(), .adjoint(), .inverse() on a combination or an assembled leaf (a Kronecker product
// replays its methods). .inverse() of an operator with an assembled leaf is refused.
operator_ptr with_method(const operator_ptr& a, op_method m, const operator_site& s);
// .pseudo_inverse(rtol), on any operator without an assembled leaf.
operator_ptr pseudo_inverse(const operator_ptr& a, double rtol, const operator_site& s);
// Whether .solve(...) of this operator is defined (false for the pseudo-inverse of a combination:
// its inverse is not).
bool solvable(const operator_value& a);
// The dsl_error for .solve(b), .inverse() or .pseudo_inverse(rtol) (`what`: "solve with",
// "invert", "pseudo-invert") of an operator with an assembled leaf, at `at`: use a Krylov solver.
[[noreturn]] void refuse_direct_solve(const operator_value& a, const char* what, const source_range& at);

} // namespace kronex::dsl
