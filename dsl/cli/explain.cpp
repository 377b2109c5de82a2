// kronex explain: the compiled plans of a program, as text or JSON, without running them.
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "exec/plan_json.hpp"

namespace kronex::cli {

namespace {

struct explain_options {
  source_options source;
  std::string backend = "host";
  bool json = false;
};

void explain(const explain_options& o) {
  const loaded_source src = load_source(o.source);
  const dsl::parameters params = parse_assignments(o.source.assignments);
  const auto program = evaluate(src, params);
  check_parameters_used(program, params);
  // Plans only: nothing is allocated for the tensor, so any size can be explained.
  const auto exe = pointing_into(src, [&] { return dsl::prepare(program, parse_backend(o.backend), false); });
  const auto& plans = exe->plans();
  if (o.json) {
    nlohmann::json stages = nlohmann::json::array();
    for (std::size_t s = 0; s < plans.size(); ++s) {
      const auto& st = program.stages[s];
      stages.push_back({{"text", st.text},
                        {"kind", program.bare_operator ? "operator" : st.what == dsl::result_value::kind::solve ? "solve" : "apply"},
                        {"plan", dsl::to_json(plans[s])}});
    }
    const nlohmann::json j = {{"source", src.name}, {"program", src.text}, {"result", program.text},
                              {"backend", exe->backend_name()},
                              {"value_type", dsl::to_string(program.type)}, {"shape", program.shape},
                              {"stages", stages}};
    std::cout << j.dump(2) << '\n';
    return;
  }
  print_plans(std::cout, program, plans);
}

} // namespace

void register_explain(CLI::App& app) {
  auto o = std::make_shared<explain_options>();
  auto* cmd = app.add_subcommand("explain", "Print the compiled plan of a program, without running it");
  add_source_options(*cmd, o->source);
  add_backend_option(*cmd, o->backend, false);
  cmd->add_flag("--json", o->json, "Print the plans as JSON (one entry per solve/apply stage)");
  cmd->footer(R"(Examples:
  kronex explain 'kron(mass(64, 3), mass(48, 3, periodic)).solve(ones())'
  kronex explain 'K = kron(laplacian(32), identity(16)); K.transpose().apply(random(7))' --json
  kronex explain -f problem.kx --backend device --set n=128)");
  cmd->callback([o] { explain(*o); });
}

} // namespace kronex::cli
