#include "cli/command.hpp"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace kronex::cli {

void add_source_options(CLI::App& cmd, source_options& o) {
  cmd.add_option("EXPR", o.expression, "The program text (statements separated by ';' or new lines)");
  cmd.add_option("-f,--file", o.file, "Read the program from FILE ('-' for standard input) instead of EXPR");
  cmd.add_option("--set", o.assignments, "Give a parameter a value: --set n=128 sets $n (repeatable)")
      ->type_name("NAME=VALUE");
}

void add_backend_option(CLI::App& cmd, std::string& backend, bool allow_all) {
  std::vector<std::string> names{"host", "device"};
  if (allow_all) names.push_back("all");
  cmd.add_option("--backend", backend, allow_all ? "host, device, or all (one row per backend)" : "Where to run: host or device")
      ->check(CLI::IsMember(names))
      ->capture_default_str();
}

loaded_source load_source(const source_options& o) {
  const bool has_expr = !o.expression.empty(), has_file = !o.file.empty();
  if (has_expr == has_file) {
    throw usage_error(has_expr ? "give the program either as EXPR or with -f FILE, not both"
                               : "no program: give it as EXPR (e.g. 'kron(mass(64, 3), mass(64, 3)).solve(ones())') "
                                 "or with -f FILE");
  }
  if (has_expr) return {o.expression, "<expression>"};
  std::ostringstream text;
  if (o.file == "-") {
    text << std::cin.rdbuf();
    return {text.str(), "<stdin>"};
  }
  std::ifstream in(o.file, std::ios::binary);
  if (!in) throw usage_error("cannot open the program file \"" + o.file + "\"");
  text << in.rdbuf();
  return {text.str(), o.file};
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
    p[name] = std::stoull(value);
  }
  return p;
}

void check_output_path(const std::string& path, const char* option) {
  if (path.empty()) throw usage_error(std::string(option) + ": empty file name");
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw usage_error(std::string(option) + " " + path + ": the directory " + dir.string() + " does not exist");
  }
  if (std::filesystem::is_directory(p, ec)) throw usage_error(std::string(option) + " " + path + ": is a directory");
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
