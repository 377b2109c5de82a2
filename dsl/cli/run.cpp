// kronex run: evaluates a program once; --out writes the result as .npy (atomically), --check
// prints the relative residual computed with the opposite operation.
#include <cmath>
#include <complex>
#include <iostream>
#include <memory>

#include "cli/command.hpp"
#include "cli/output.hpp"

namespace kronex::cli {

namespace {

struct run_options {
  source_options source;
  std::string backend = "host";
  std::string out;
  const CLI::Option* out_option = nullptr;
  bool check = false;
  double min_rcond = -1;
};

void run(const run_options& o) {
  check_output_path(o.out, *o.out_option);
  const loaded_source src = load_source(o.source);
  const dsl::parameters params = parse_assignments(o.source.assignments);
  auto program = evaluate(src, params);
  program.options.min_rcond = o.min_rcond;
  check_parameters_used(program, params);
  if (!program.runnable()) {
    throw rendered_error(dsl::dsl_error(program.where, "the program ends with an operator, which can be explained "
                                                       "but not run: end it with K.solve(b) or K.apply(x)")
                             .render(src.text, src.name));
  }
  const auto exe = pointing_into(src, [&] { return dsl::prepare(program, parse_backend(o.backend)); });
  exe->run();
  const dsl::io::npy_array x = exe->result();
  double norm2 = 0;
  std::visit([&](const auto& a) { for (const auto& v : a) norm2 += double(std::norm(v)); }, x.data);
  std::cout << "result  " << program.text << "\n  shape " << format_shape(x.shape) << "  " << dsl::to_string(x.type)
            << "  backend " << exe->backend_name() << "  norm " << scientific(std::sqrt(norm2), 6) << '\n';
  // The result is written before the check: it is valid whatever the check finds.
  if (!o.out.empty()) {
    std::visit([&](const auto& a) { dsl::io::write_npy_atomic(o.out, a); }, x.data);
    std::cout << "wrote   " << o.out << '\n';
  }
  if (o.check) {
    const double r = pointing_into(src, [&] { return dsl::relative_residual(program, x); });
    const bool solve = program.stages.back().what == dsl::result_value::kind::solve;
    std::cout << (solve ? "check   ||K x - b|| / ||b|| = " : "check   ||K^-1 y - x|| / ||x|| = ") << scientific(r)
              << "  (the last stage, undone on the host with " << (solve ? "apply" : "solve") << ")\n";
  }
}

} // namespace

void register_run(CLI::App& app) {
  auto o = std::make_shared<run_options>();
  auto* cmd = app.add_subcommand("run", "Evaluate a program; optionally write the result and check it");
  add_source_options(*cmd, o->source);
  add_backend_option(*cmd, o->backend, false);
  o->out_option = cmd->add_option("--out", o->out, "Write the result to this .npy file (via a temporary file and a rename: "
                                   "never a partial file)");
  cmd->add_flag("--check", o->check, "Print the relative residual ||K x - b|| / ||b||, computed with apply");
  add_min_rcond_option(*cmd, o->min_rcond);
  cmd->footer(R"(Examples:
  kronex run 'kron(mass(64, 3), mass(64, 3, periodic)).solve(npy("b.npy"))' --out x.npy --check
  kronex run -f problem.kx --backend device --set n=96)");
  cmd->callback([o] { run(*o); });
}

} // namespace kronex::cli
