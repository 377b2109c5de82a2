#pragma once
// The DSL's tokens. Positions are 1-based line and column (in characters of the line) so that
// errors can point at them.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/diagnostics.hpp"

namespace kronex::dsl {

enum class token_kind {
  name,        // mass, kron, M, periodic, float32 ...
  integer,     // 128
  number,      // 0.5, 1e-3, 2.5E+4 (a decimal point or an exponent: a coefficient, never a size)
  string,      // "factors/A1.mtx" (text holds the unescaped value)
  parameter,   // $n (text holds "n")
  lparen, rparen, comma, dot, equals,
  plus, minus, star,  // operator arithmetic: A + B, A - B, -A, c * A, A * B
  separator,   // ';' or a newline that ends a statement
  end,
};

const char* describe(token_kind k);

struct token {
  token_kind kind = token_kind::end;
  std::string text;
  std::uint64_t value = 0;  // integer tokens
  double number = 0;        // number tokens
  source_range where;       // length: the token's length in characters
};

} // namespace kronex::dsl
