#include "cli/command.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "io/regular_file.hpp"

namespace kronex::cli {

void add_source_options(CLI::App& cmd, source_options& o) {
  cmd.add_option("EXPR", o.expression, "The program text (statements separated by ';' or new lines)");
  o.file_option = cmd.add_option("-f,--file", o.file, "Read the program from FILE ('-' for standard input) instead of EXPR");
  cmd.add_option("--set", o.assignments, "Give a parameter a value: --set n=128 sets $n (repeatable)")
      ->type_name("NAME=VALUE");
}

void add_min_rcond_option(CLI::App& cmd, double& min_rcond) {
  cmd.add_option("--min-rcond", min_rcond,
                 "Refuse a solved factor whose reciprocal condition estimate is below this (default: n eps of the "
                 "value type; 0 accepts any nonzero pivot)")
      ->check(CLI::Range(0.0, 1.0));
}

void add_threads_option(CLI::App& cmd, std::size_t& threads) {
  cmd.add_option("--threads", threads,
                 "Threads for host plans (default 0: OMP_NUM_THREADS, or all cores, for large tensors; one for "
                 "small ones); the result does not depend on it")
      ->check(CLI::Range(std::size_t(0), std::size_t(1024)));
}

namespace {
const std::map<std::string, kronex::solve_method>& solve_method_names() {
  static const std::map<std::string, kronex::solve_method> names{
      {"automatic", kronex::solve_method::automatic},
      {"substitution", kronex::solve_method::substitution},
      {"dense_inverse", kronex::solve_method::dense_inverse}};
  return names;
}
} // namespace

void add_solves_option(CLI::App& cmd, std::string& solves) {
  std::vector<std::string> names;
  for (const auto& entry : solve_method_names()) names.push_back(entry.first);
  cmd.add_option("--solves", solves,
                 "Host solves of banded and dense factors: automatic (the cost model picks per mode), "
                 "substitution, or dense_inverse (GEMMs with the factor's inverse)")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
}

kronex::solve_method solve_method_named(const std::string& name) { return solve_method_names().at(name); }

void add_backend_option(CLI::App& cmd, std::string& backend, bool allow_all) {
  std::vector<std::string> names{"host", "device"};
  if (allow_all) names.push_back("all");
  cmd.add_option("--backend", backend, allow_all ? "host, device, or all (one row per backend)" : "Where to run: host or device")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
}

namespace {

// Reads at most max_program_bytes (one more to tell that there is more).
std::string read_program(std::istream& in, const std::string& name) {
  std::string text(max_program_bytes + 1, '\0');
  in.read(text.data(), std::streamsize(text.size()));
  if (in.bad()) throw usage_error("cannot read the program from " + name);
  text.resize(std::size_t(in.gcount()));
  if (text.size() > max_program_bytes) {
    throw usage_error("the program in " + name + " is longer than the limit of " + std::to_string(max_program_bytes) +
                      " bytes");
  }
  return text;
}

} // namespace

loaded_source load_source(const source_options& o) {
  const bool has_file = o.file_option && o.file_option->count() > 0;
  const bool has_expr = !o.expression.empty();
  if (has_file && o.file.empty()) throw usage_error("-f: empty file name");
  if (has_expr == has_file) {
    throw usage_error(has_expr ? "give the program either as EXPR or with -f FILE, not both"
                               : "no program: give it as EXPR (e.g. 'kron(mass(64, 3), mass(64, 3)).solve(ones())') "
                                 "or with -f FILE");
  }
  if (has_expr) {
    if (o.expression.size() > max_program_bytes) {
      throw usage_error("the program is longer than the limit of " + std::to_string(max_program_bytes) + " bytes");
    }
    return {o.expression, "<expression>"};
  }
  if (o.file == "-") return {read_program(std::cin, "<stdin>"), "<stdin>"};
  try {
    dsl::io::check_regular_file(o.file, "a program file");
  } catch (const dsl::file_error& e) {
    throw usage_error(std::string("cannot read the program file ") + e.what());
  }
  std::ifstream in(o.file, std::ios::binary);
  if (!in) throw usage_error("cannot open the program file \"" + o.file + "\"");
  return {read_program(in, "\"" + o.file + "\""), o.file};
}

dsl::parameters parse_assignments(const std::vector<std::string>& assignments) {
  dsl::parameters p;
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq), value = eq == std::string::npos ? "" : a.substr(eq + 1);
    const bool name_ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_') &&
                         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
                             std::string::npos;
    if (eq == std::string::npos || !name_ok || value.empty() ||
        value.find_first_not_of("0123456789") != std::string::npos || value.size() > 18) {
      throw usage_error("--set " + a + ": expected NAME=VALUE with a non-negative integer VALUE, e.g. --set n=128");
    }
    if (p.count(name)) throw usage_error("--set " + name + " is given twice: give each parameter once");
    p[name] = std::stoull(value);
  }
  return p;
}

void check_output_path(const std::string& path, const CLI::Option& given) {
  if (given.count() == 0) return;
  const std::string option = given.get_name();
  if (path.empty()) throw usage_error(option + ": empty file name");
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw usage_error(option + " " + path + ": the directory " + dir.string() + " does not exist");
  }
  if (std::filesystem::is_directory(p, ec)) throw usage_error(option + " " + path + ": is a directory");
}

void check_parameters_used(const dsl::evaluated_program& p, const dsl::parameters& given) {
  for (const auto& [name, value] : given) {
    if (!p.used_parameters.count(name)) {
      throw usage_error("parameter " + name + " is given but the program has no $" + name);
    }
  }
}

dsl::backend_kind parse_backend(const std::string& name) {
  if (name == "host") return dsl::backend_kind::host;
  if (name == "device") return dsl::backend_kind::device;
  throw usage_error("unknown backend '" + name + "' (host or device)");
}

} // namespace kronex::cli
