// kronex run: evaluates a program once; --out writes the result as .npy (atomically), --check
// prints the relative residual computed with the opposite operation.
#include <cmath>
#include <complex>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "io/atomic_file.hpp"

namespace kronex::cli {

namespace {

struct run_options {
  source_options source;
  std::string backend = "host";
  std::string out;
  const CLI::Option* out_option = nullptr;
  std::string history;
  const CLI::Option* history_option = nullptr;
  bool check = false;
  double min_rcond = -1;
  std::size_t threads = 0;
  std::string solves = "automatic";
};

// A Krylov solve's history and outcome, as JSON (--history FILE).
nlohmann::json history_json(const loaded_source& src, const dsl::evaluated_program& program, const krylov_result& r) {
  const dsl::krylov_value& k = *program.krylov;
  nlohmann::json j = {{"source", src.name}, {"program", src.text}, {"result", program.text},
                      {"method", to_string(k.method)}, {"converged", r.converged}, {"status", to_string(r.status)},
                      {"iterations", r.iterations}, {"relative_residual", r.relative_residual},
                      {"rtol", k.options.rtol}, {"atol", k.options.atol}, {"check_every", k.options.check_every},
                      {"message", r.message}, {"history", r.history}};
  return j;
}

void run(const run_options& o) {
  check_output_path(o.out, *o.out_option);
  check_output_path(o.history, *o.history_option);
  const loaded_source src = load_source(o.source);
  const dsl::parameters params = parse_assignments(o.source.assignments);
  auto program = evaluate(src, params);
  program.options.min_rcond = o.min_rcond;
  program.options.threads = o.threads;
  program.options.solves = solve_method_named(o.solves);
  check_parameters_used(program, params);
  if (o.history_option->count() && !program.krylov) {
    throw usage_error("--history " + o.history + ": the program does not end with a Krylov solve (cg, bicgstab, "
                      "gmres, minres), so it has no residual history");
  }
  program.krylov_history = o.history_option->count() > 0;
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
  if (const krylov_result* k = exe->krylov()) {
    // The solve's outcome; the residual is the true ||b - A x|| / ||b||, recomputed at exit.
    std::cout << "krylov  " << to_string(program.krylov->method) << "  iterations " << k->iterations << "  "
              << (k->converged ? "converged" : std::string("not converged (") + to_string(k->status) + ")")
              << "  relative residual ||b - A x|| / ||b|| = " << scientific(k->relative_residual) << '\n';
    if (!o.history.empty()) {
      const nlohmann::json j = history_json(src, program, *k);
      dsl::io::write_file_atomic(o.history, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
      std::cout << "wrote   " << o.history << '\n';
    }
    if (o.check) {
      std::cout << "check   ||A x - b|| / ||b|| = " << scientific(k->relative_residual)
                << "  (the true residual, recomputed by the solver at exit)\n";
    }
    if (!k->converged) throw not_converged(to_string(program.krylov->method) + std::string(" did not converge: ") + k->message);
    return;
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
  o->history_option = cmd->add_option("--history", o->history, "Krylov solves: write the residual history and the "
                                       "outcome to this JSON file (atomically)");
  add_min_rcond_option(*cmd, o->min_rcond);
  add_threads_option(*cmd, o->threads);
  add_solves_option(*cmd, o->solves);
  cmd->footer(R"(Examples:
  kronex run 'A = mtx_operator("A.mtx", 8, 8, 8); cg(A, ones(), jacobi(A), rtol=1e-10)' --history h.json
  kronex run 'kron(mass(64, 3), mass(64, 3, periodic)).solve(npy("b.npy"))' --out x.npy --check
  kronex run -f problem.kx --backend device --set n=96)");
  cmd->callback([o] { run(*o); });
}

} // namespace kronex::cli
