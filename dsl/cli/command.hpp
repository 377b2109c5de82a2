#pragma once
// What the three commands share: where the program text comes from, parameters, the backend
// option, and loading + evaluating with errors that point into the text.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "eval/evaluator.hpp"
#include "exec/executable.hpp"

namespace kronex::cli {

// A usage problem found after parsing the options (exit code 2, like CLI11's own).
class usage_error : public kronex::error {
public:
  using kronex::error::error;
};

struct source_options {
  std::string expression;               // the positional EXPR
  std::string file;                     // -f FILE ("-" for standard input)
  std::vector<std::string> assignments; // --set NAME=VALUE
  const CLI::Option* file_option = nullptr;  // to tell `-f ''` from no -f
};

// The longest program kronex reads (EXPR, -f FILE or standard input), in bytes: far above any
// real program, it bounds what a runaway input (a generated file, /dev/zero on stdin) costs.
inline constexpr std::size_t max_program_bytes = std::size_t(8) << 20;

struct loaded_source {
  std::string text;
  std::string name;  // "<expression>", the file name, or "<stdin>"
};

// Adds EXPR, -f/--file and --set to a subcommand.
void add_source_options(CLI::App& cmd, source_options& o);
// Adds --backend (host, device, and `all` when allowed), default host.
void add_backend_option(CLI::App& cmd, std::string& backend, bool allow_all);
// Adds --min-rcond (compile_options::min_rcond: the singularity threshold; negative, the
// default, is n eps of the value type).
void add_min_rcond_option(CLI::App& cmd, double& min_rcond);
// Adds --threads (compile_options::threads: host plans' threads; 0, the default, follows OpenMP).
void add_threads_option(CLI::App& cmd, std::size_t& threads);
// Adds --solves (compile_options::solves: automatic, the default, substitution or dense_inverse);
// solve_method_named gives the option's value as the enum.
void add_solves_option(CLI::App& cmd, std::string& solves);
kronex::solve_method solve_method_named(const std::string& name);
loaded_source load_source(const source_options& o);
dsl::parameters parse_assignments(const std::vector<std::string>& assignments);

// A tool kronex runs failed (the plotting script): exit code 1, but not an internal error.
class external_failure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// A Krylov solve that did not converge (its status is not `converged`): exit code 3, after the
// result has been printed (and written with --out, its history with --history).
class not_converged : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Every --set (or --sweep) parameter must be one the program reads: a typo would otherwise be
// silently ignored (and a sweep would time the same problem again and again).
void check_parameters_used(const dsl::evaluated_program& p, const dsl::parameters& given);

// An error in the program, already rendered as "name:line:col: error: ..." with the line and a
// caret (what the command prints).
class rendered_error : public kronex::error {
public:
  using kronex::error::error;
};

// Runs f(), rendering any dsl_error (from evaluation, or a singular factor found when
// compiling) against the program text.
template <class F>
decltype(auto) pointing_into(const loaded_source& s, F&& f) {
  try {
    return f();
  } catch (const dsl::dsl_error& e) {
    throw rendered_error(e.render(s.text, s.name));
  }
}

inline dsl::evaluated_program evaluate(const loaded_source& s, const dsl::parameters& params) {
  return pointing_into(s, [&] { return dsl::evaluate(s.text, params); });
}

// Checks before any work that `path` can be created (its directory exists), so a long run does
// not end in a write error. Does nothing when the option was not given; `--out ''` is an error.
void check_output_path(const std::string& path, const CLI::Option& option);

dsl::backend_kind parse_backend(const std::string& name);

void register_explain(CLI::App& app);
void register_run(CLI::App& app);
void register_bench(CLI::App& app);

} // namespace kronex::cli
