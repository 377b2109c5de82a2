#pragma once
// Errors the DSL and the kronex command report to the user. Every one derives from kronex::error,
// so the command maps all input problems to exit code 2 in one place.
//   dsl_error:  a problem in the expression text, at line:column (1-based), with the span to
//               underline; render() prints "line:col: error: message", the line and a caret.
//   file_error: a file named by the expression that cannot be used: missing, unreadable or
//               malformed, with the line in that file when the format has lines (0 otherwise);
//               kronex::file_error, the library's, brought into this namespace.
#include <cstddef>
#include <string>

#include <kronex/core/error.hpp>

namespace kronex::dsl {

struct source_range {
  std::size_t line = 1, column = 1;  // where the problem starts, 1-based
  std::size_t length = 1;            // characters to underline on that line (at least 1)
  std::size_t offset = 0;            // byte offset of the start in the source
};

class dsl_error : public kronex::error {
public:
  dsl_error(source_range where, const std::string& message)
      : kronex::error(message), m_where(where), m_message(message) {}
  const source_range& where() const noexcept { return m_where; }
  const std::string& message() const noexcept { return m_message; }

  // "3:14: error: <message>\n    3 | <the source line>\n      |              ^~~~\n"
  std::string render(const std::string& source, const std::string& source_name = "") const;

private:
  source_range m_where;
  std::string m_message;
};

// The library's file error (kronex/core/error.hpp): the Matrix Market reader lives in the
// library, and the DSL's other readers throw the same type.
using kronex::file_error;

} // namespace kronex::dsl
