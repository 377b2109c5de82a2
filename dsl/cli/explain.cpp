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
  std::size_t threads = 0;
  std::string solves = "automatic";
};

void explain(const explain_options& o) {
  const loaded_source src = load_source(o.source);
  const dsl::parameters params = parse_assignments(o.source.assignments);
  auto program = evaluate(src, params);
  program.options.threads = o.threads;
  program.options.solves = solve_method_named(o.solves);
  check_parameters_used(program, params);
  // Plans only: nothing is allocated for the tensor, so any size can be explained.
  const auto exe = pointing_into(src, [&] { return dsl::prepare(program, parse_backend(o.backend), false); });
  const auto& plans = exe->plans();
  if (program.krylov && !o.json) {
    print_krylov_plans(std::cout, program, exe->backend_name(), plans);
    return;
  }
  if (o.json) {
    nlohmann::json stages = nlohmann::json::array();
    if (program.krylov) {
      // A Krylov program: the plans of its operator and preconditioner (where they are DSL
      // operators), and the solve itself.
      const auto& k = *program.krylov;
      const auto roles = krylov_plan_roles(k);
      for (std::size_t s = 0; s < plans.size(); ++s) {
        stages.push_back({{"text", roles[s] == "operator" ? k.A.text : k.P.text}, {"kind", roles[s]},
                          {"plan", dsl::to_json(plans[s])}});
      }
      nlohmann::json krylov = {{"method", to_string(k.method)}, {"operator", k.A.text},
                               {"preconditioner", k.P ? nlohmann::json(k.P.text) : nlohmann::json(nullptr)},
                               {"rtol", k.options.rtol}, {"atol", k.options.atol},
                               {"check_every", k.options.check_every}};
      krylov["maxiter"] = k.options.max_iterations ? nlohmann::json(*k.options.max_iterations) : nlohmann::json(nullptr);
      if (k.method == krylov_method::gmres) krylov["restart"] = k.options.restart;
      const nlohmann::json j = {{"source", src.name}, {"program", src.text}, {"result", program.text},
                                {"backend", exe->backend_name()}, {"value_type", dsl::to_string(program.type)},
                                {"shape", program.shape}, {"krylov", krylov}, {"stages", stages}};
      std::cout << j.dump(2) << '\n';
      return;
    }
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
  add_threads_option(*cmd, o->threads);
  add_solves_option(*cmd, o->solves);
  cmd->add_flag("--json", o->json, "Print the plans as JSON (one entry per solve/apply stage)");
  cmd->footer(R"(Examples:
  kronex explain 'kron(mass(64, 3), mass(48, 3, periodic)).solve(ones())'
  kronex explain 'K = kron(laplacian(32), identity(16)); K.transpose().apply(random(7))' --json
  kronex explain -f problem.kx --backend device --set n=128)");
  cmd->callback([o] { explain(*o); });
}

} // namespace kronex::cli
