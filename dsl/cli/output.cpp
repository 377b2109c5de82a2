#include "cli/output.hpp"

#include <cstdio>
#include <sstream>

namespace kronex::cli {

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

} // namespace kronex::cli
