#pragma once
// Shapes as the DSL and the command print them: (64, 48), and (64,) for one axis, like NumPy.
#include <cstddef>
#include <sstream>
#include <string>

namespace kronex::dsl {

template <class Shape>
std::string format_shape(const Shape& s) {
  std::ostringstream os;
  os << '(';
  std::size_t i = 0;
  for (const auto extent : s) os << (i++ ? ", " : "") << extent;
  if (i == 1) os << ',';
  os << ')';
  return os.str();
}

} // namespace kronex::dsl
