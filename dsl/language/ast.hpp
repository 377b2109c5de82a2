#pragma once
// The DSL's syntax tree: what the parser produces and the evaluator walks. Every node keeps the
// source range of its text so that errors found later (a wrong argument type, a shape mismatch, a
// missing file) still point at the right place.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/diagnostics.hpp"

namespace kronex::dsl {

struct node;
using node_ptr = std::unique_ptr<node>;

struct node {
  enum class kind {
    name,       // M, periodic, float32
    integer,    // 128
    number,     // 0.5, 1e-3
    string,     // "A.mtx"
    parameter,  // $n
    call,       // mass(128, 3): text is the function's name
    method,     // K.solve(b): text is the method's name, target is K
    negate,     // -A: args[0] is A, name_where the '-'
    arithmetic, // a left-associative run of one precedence level, a + b - c or a * b * c: args
                // are the operands (two or more), ops the signs between them ('+', '-', '*'),
                // op_where their places; flat, so a long sum nests no deeper than a short one
    named,      // an argument NAME = value (rtol=1e-8 in cg(...)): text is the name, name_where
                // its place, args[0] the value
  };
  kind what = kind::name;
  std::string text;
  std::uint64_t value = 0;      // integer
  double number = 0;            // number
  node_ptr target;              // method
  std::vector<node_ptr> args;   // call, method
  source_range where;           // the whole node (underlined on its first line)
  std::size_t end_offset = 0;   // byte offset just past the node's last character
  source_range name_where;      // call and method: the function's or method's name
  std::string ops;                       // arithmetic
  std::vector<source_range> op_where;    // arithmetic
};

struct statement {
  std::optional<std::string> assigned;  // NAME = ...
  source_range assigned_where;
  node_ptr value;
};

struct program {
  std::vector<statement> statements;
};

// The source text a node came from (for plan labels and messages), e.g. "kron(M, P)".
std::string source_text(const std::string& source, const node& n);
// The same for the bytes [begin, end) of the source.
std::string source_text(const std::string& source, std::size_t begin, std::size_t end);

} // namespace kronex::dsl
