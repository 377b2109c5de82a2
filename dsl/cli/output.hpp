#pragma once
// Small formatting helpers shared by the commands.
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include <kronex/plan/plan.hpp>

#include "core/format.hpp"
#include "eval/evaluator.hpp"

namespace kronex::cli {

using dsl::format_shape;

// The plans of a program's stages: one stage prints exactly as kronex::explain does in C++; several
// are each headed "stage k of K: TEXT".
void print_plans(std::ostream& out, const dsl::evaluated_program& program, const std::vector<plan_description>& plans);

// A Krylov program's header (the method, the options, what A and P are) and the plans of A and P
// where they are DSL operators, each headed "operator: TEXT" or "preconditioner: TEXT"; backend:
// the executable's backend_name().
void print_krylov_plans(std::ostream& out, const dsl::evaluated_program& program, const std::string& backend,
                        const std::vector<plan_description>& plans);

// "rtol=1e-10 atol=0 maxiter=500 check_every=1" (and restart for gmres); maxiter "default (10 N)"
// when unset.
std::string krylov_options_text(const dsl::krylov_value& k);

// The roles of the plans of a Krylov program, in order ("operator", "preconditioner").
std::vector<std::string> krylov_plan_roles(const dsl::krylov_value& k);

// "1.23e-15": for residuals and other small numbers.
std::string scientific(double v, int digits = 2);

} // namespace kronex::cli
