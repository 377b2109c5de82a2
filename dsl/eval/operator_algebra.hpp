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

// a + b (sign 1) or a - b (sign -1): same sizes, one value type.
operator_ptr add(const operator_ptr& a, const operator_ptr& b, double sign, const operator_site& s);
// c * a (and a * c, -a).
operator_ptr scale(const operator_ptr& a, double c, const operator_site& s);
// a * b: apply b, then a.
operator_ptr compose(const operator_ptr& a, const operator_ptr& b, const operator_site& s);
// .transpose(), .adjoint(), .inverse() on a combination (a Kronecker product replays its methods).
operator_ptr with_method(const operator_ptr& a, op_method m, const operator_site& s);
// .pseudo_inverse(rtol), on any operator.
operator_ptr pseudo_inverse(const operator_ptr& a, double rtol, const operator_site& s);
// Whether .solve(...) of this operator is defined (false for the pseudo-inverse of a combination:
// its inverse is not).
bool solvable(const operator_value& a);

} // namespace kronex::dsl
