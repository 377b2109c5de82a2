#pragma once
// The parser (recursive descent over the lexer's tokens). Grammar (docs/dsl.md):
//   program   = { separator } [ statement { separator { separator } statement } ] { separator } end
//   statement = [ name "=" ] expr
//   expr      = term { ( "+" | "-" ) term }
//   term      = unary { "*" unary }
//   unary     = "-" unary | postfix
//   postfix   = primary { "." name "(" [ args ] ")" }
//   primary   = name [ "(" [ args ] ")" ] | integer | number | string | parameter | "(" expr ")"
//   args      = expr { "," expr }
#include <string>

#include "language/ast.hpp"

namespace kronex::dsl {

// Deeper nesting than this (parentheses, arguments, unary minus signs and method calls in a row,
// together) is refused: an error, not a stack overflow when the tree is evaluated or destroyed.
inline constexpr std::size_t max_nesting = 200;

program parse(const std::string& source);

} // namespace kronex::dsl
