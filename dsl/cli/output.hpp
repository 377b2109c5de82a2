#pragma once
// Small formatting helpers shared by the commands.
#include <cstddef>
#include <string>
#include <vector>

#include "core/format.hpp"

namespace kronex::cli {

using dsl::format_shape;
// "1.23e-15": for residuals and other small numbers.
std::string scientific(double v, int digits = 2);

} // namespace kronex::cli
