// kronex: explain, run and benchmark Kronecker-product solver expressions written in the kronex
// DSL (docs/dsl.md). Exit codes: 0 success, 2 usage or input errors (options, the program, its
// files, a singular factor, a missing backend), 1 internal errors, 3 a Krylov solve that did not
// converge (its result is printed and written all the same).
#include <iostream>
#include <new>

#include "cli/command.hpp"

namespace {

const char* examples = R"(Examples:
  kronex explain 'kron(mass(64, 3), mass(64, 3, periodic)).solve(ones())'
  kronex run -f problem.kx --out x.npy --check
  kronex bench 'kron(mass($n, 3), mass($n, 3), mass($n, 3)).solve(random(1))' --sweep n=32:128:x2 --backend all

Programs: docs/dsl.md. 'kronex COMMAND --help' for each command's options.)";

int fail(int code, const std::string& message) {
  std::cerr << message;
  if (message.empty() || message.back() != '\n') std::cerr << '\n';
  return code;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"kronex: explain, run and benchmark Kronecker-product solver expressions", "kronex"};
  app.footer(examples);
  app.require_subcommand(1, 1);
  app.set_version_flag("--version", std::string("kronex ") + KRONEX_VERSION);
  kronex::cli::register_explain(app);
  kronex::cli::register_run(app);
  kronex::cli::register_bench(app);
  try {
    app.parse(argc, argv);
    return 0;
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    return fail(2, std::string("kronex: error: ") + e.what() + "\nRun 'kronex --help' (or 'kronex COMMAND --help') for usage.");
  } catch (const kronex::cli::usage_error& e) {
    return fail(2, std::string("kronex: error: ") + e.what() + "\nRun 'kronex COMMAND --help' for usage.");
  } catch (const kronex::cli::rendered_error& e) {
    return fail(2, e.what());
  } catch (const kronex::cli::not_converged& e) {
    return fail(3, std::string("kronex: error: ") + e.what());
  } catch (const kronex::cli::external_failure& e) {
    return fail(1, std::string("kronex: error: ") + e.what());
  } catch (const kronex::lapack_error& e) {
    return fail(1, std::string("kronex: internal error: ") + e.what());
  } catch (const kronex::device_error& e) {
    return fail(1, std::string("kronex: device error: ") + e.what());
  } catch (const kronex::transfer_error& e) {
    return fail(1, std::string("kronex: internal error: ") + e.what());
  } catch (const kronex::error& e) {
    return fail(2, std::string("kronex: error: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail(1, "kronex: error: out of memory");
  } catch (const std::exception& e) {
    return fail(1, std::string("kronex: internal error: ") + e.what());
  }
}
