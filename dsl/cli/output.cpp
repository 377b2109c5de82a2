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

std::string krylov_options_text(const dsl::krylov_value& k) {
  std::ostringstream os;
  os << "rtol=" << k.options.rtol << " atol=" << k.options.atol << " maxiter=";
  if (k.options.max_iterations) os << *k.options.max_iterations;
  else os << "default (" << (k.method == krylov_method::minres ? 5 : 10) << " N)";
  os << " check_every=" << k.options.check_every;
  if (k.method == krylov_method::gmres) os << " restart=" << k.options.restart;
  return os.str();
}

std::vector<std::string> krylov_plan_roles(const dsl::krylov_value& k) {
  std::vector<std::string> roles;
  if (k.A.op) roles.push_back("operator");
  if (k.P && k.P.op) roles.push_back("preconditioner");
  return roles;
}

void print_krylov_plans(std::ostream& out, const dsl::evaluated_program& program, const std::string& backend,
                        const std::vector<plan_description>& plans) {
  const dsl::krylov_value& k = *program.krylov;
  out << "krylov " << k.method << " on " << format_shape(program.shape) << " [" << backend << ", " << dsl::to_string(program.type)
      << "]  " << krylov_options_text(k) << '\n';
  const auto describe = [&](const char* role, const dsl::krylov_operand& o) {
    out << "  " << role << "  " << o.text << ": ";
    if (!o) out << "none\n";
    else if (o.assembled) {
      std::size_t rows = 1;
      for (std::size_t e : o.assembled->shape) rows *= e;
      out << (o.assembled->jacobi ? "Jacobi, diagonal " : "assembled ") << rows << " x " << rows << ", "
          << o.assembled->nnz << " entries (CSR products)\n";
    } else out << "compiled, plan below\n";
  };
  describe("operator      ", k.A);
  if (k.P) describe("preconditioner", k.P);
  else out << "  preconditioner  none\n";
  const auto roles = krylov_plan_roles(k);
  for (std::size_t s = 0; s < plans.size(); ++s) {
    out << roles.at(s) << ": " << (roles[s] == "operator" ? k.A.text : k.P.text) << '\n' << plans[s];
  }
}

std::string scientific(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

} // namespace kronex::cli
