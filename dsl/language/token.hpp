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
  string,      // "factors/A1.mtx" (text holds the unescaped value)
  parameter,   // $n (text holds "n")
  lparen, rparen, comma, dot, equals,
  separator,   // ';' or a newline that ends a statement
  end,
};

const char* describe(token_kind k);

struct token {
  token_kind kind = token_kind::end;
  std::string text;
  std::uint64_t value = 0;  // integer tokens
  source_range where;       // length: the token's length in characters
};

} // namespace kronex::dsl
