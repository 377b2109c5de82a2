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

// "1.23e-15": for residuals and other small numbers.
std::string scientific(double v, int digits = 2);

} // namespace kronex::cli
