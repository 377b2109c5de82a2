#include "cli/output.hpp"

#include <cstdio>
#include <sstream>

namespace kronex::cli {

std::string format_shape(const std::vector<std::size_t>& shape) {
  std::ostringstream os;
  os << '(';
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ',';
  os << ')';
  return os.str();
}

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

} // namespace kronex::cli
