#pragma once
// The evaluator: walks a parsed program, binds names, checks every argument, and reduces the
// last statement to an evaluated_program (a chain of solve/apply stages over one operand, or a
// bare operator). Every problem is a dsl_error at the node that caused it; problems with files
// are reported at the mtx(...) or npy(...) call, with the file's own message.
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <kronex/core/options.hpp>

#include "eval/values.hpp"
#include "language/ast.hpp"

namespace kronex::dsl {

// Limits on what a program builds, counted on the values (not on the text: rebinding a name,
// as in `y = K.apply(y)` or `K = K.transpose()` on many lines, builds as deeply as nesting does).
// Each is a dsl_error naming the limit at the call that would pass it.
inline constexpr std::size_t max_stages = 4096;          // solves and applies in one result chain
inline constexpr std::size_t max_operator_methods = 256;  // .transpose(), .adjoint(), .inverse() on one operator
// Kronecker products and combinations (+, -, *, scalar multiples, pseudo-inverses) in one
// operator, each use of a name counted (L = L + L doubles it): bounds the work and memory of
// the operator_tree built from it.
inline constexpr std::size_t max_operator_terms = 4096;
// Depth of an operator's normalised tree: sums directly in sums and compositions directly in
// compositions are flattened, so only alternations (a sum inside a composition inside a sum ...)
// nest; kronex's plans recurse that deep.
inline constexpr std::size_t max_operator_nesting = 64;
// Names longer than this get no "did you mean" (no built-in or sensible name is that long, and
// the edit distance costs the product of the lengths).
inline constexpr std::size_t max_suggested_name = 64;

// Values of $name parameters (set with --set name=value, or by --sweep).
using parameters = std::map<std::string, std::uint64_t>;

// One solve or apply, in evaluation order (innermost first).
struct stage {
  result_value::kind what = result_value::kind::solve;
  std::shared_ptr<const operator_value> op;
  std::string text;  // e.g. kron(M, P).solve(b)
  source_range where;
};

// The last statement's value, ready for a backend.
struct evaluated_program {
  dtype type = dtype::float64;  // the value type every stage runs in
  shape_t shape;                // the operand's (and every stage's) shape
  // The operand of the innermost stage: an array, a generated tensor, or none when the program
  // ends with a bare operator (which can be explained, compiled for its own sizes, not run).
  std::variant<std::monostate, std::shared_ptr<const array_value>, std::shared_ptr<const generated_tensor>> operand;
  std::vector<stage> stages;
  std::shared_ptr<const operator_value> bare_operator;  // set when the program ends with an operator
  compile_options options;  // how the stages are compiled (the command's --min-rcond)
  source_range where;                                   // the last statement's value
  std::string text;
  std::set<std::string> used_parameters;                // the $names the program read
  // Set when the program ends with a Krylov solve (cg(...), ...): then `stages` is empty and
  // `operand` is its right-hand side. `krylov_history` (run --history) keeps the residual history.
  std::shared_ptr<const krylov_value> krylov;
  bool krylov_history = false;

  bool runnable() const { return !bare_operator; }
};

evaluated_program evaluate(const program& p, const std::string& source, const parameters& params = {});

// Parse and evaluate in one call.
evaluated_program evaluate(const std::string& source, const parameters& params = {});

// The built-in functions and the keywords, for help texts and "did you mean".
const std::vector<std::string>& builtin_names();

} // namespace kronex::dsl
