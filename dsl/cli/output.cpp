#include "cli/output.hpp"

#include <cstdio>
#include <sstream>

namespace kronex::cli {

void print_plans(std::ostream& out, const dsl::evaluated_program& program, const std::vector<plan_description>& plans) {
  for (std::size_t s = 0; s < plans.size(); ++s) {
    if (plans.size() > 1) out << "stage " << s + 1 << " of " << plans.size() << ": " << program.stages[s].text << '\n';
    out << plans[s];
  }
}

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

} // namespace kronex::cli
