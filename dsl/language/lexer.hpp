#pragma once
// The lexer: source text to tokens, or a dsl_error at the offending character.
//   - '#' starts a comment to the end of the line;
//   - a newline ends a statement, except inside parentheses, after '+', '-' or '*', and before a
//     line that starts with '.', so long expressions can be split as  kron(A,\n B),  A +\n B  or
//     K\n  .solve(b);
//   - numbers: integers (128) and, with a decimal point or an exponent, decimal numbers (0.5,
//     1e-3, 2.5E+4);
//   - strings are in double quotes, with the escapes \" \\ \n \t, on one line.
#include <string>
#include <vector>

#include "language/token.hpp"

namespace kronex::dsl {

std::vector<token> tokenize(const std::string& source);

} // namespace kronex::dsl
