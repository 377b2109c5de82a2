#include "core/diagnostics.hpp"

#include <algorithm>
#include <sstream>

namespace kronex::dsl {

namespace {
std::string line_of(const std::string& source, std::size_t line) {
  std::size_t start = 0;
  for (std::size_t l = 1; l < line; ++l) {
    const std::size_t nl = source.find('\n', start);
    if (nl == std::string::npos) return {};
    start = nl + 1;
  }
  std::size_t end = source.find('\n', start);
  if (end == std::string::npos) end = source.size();
  std::string text = source.substr(start, end - start);
  if (!text.empty() && text.back() == '\r') text.pop_back();
  // Tabs would misplace the caret: show them as one space each (columns count characters).
  for (char& c : text) if (c == '\t') c = ' ';
  return text;
}
} // namespace

std::string dsl_error::render(const std::string& source, const std::string& source_name) const {
  std::ostringstream os;
  if (!source_name.empty()) os << source_name << ':';
  os << m_where.line << ':' << m_where.column << ": error: " << m_message << '\n';
  const std::string text = line_of(source, m_where.line);
  const std::string number = std::to_string(m_where.line);
  os << ' ' << number << " | " << text << '\n';
  // Underline within the line (a span that runs on to later lines is cut at the end of this one).
  const std::size_t col0 = m_where.column - 1;
  const std::size_t available = text.size() > col0 ? text.size() - col0 : 1;
  const std::size_t length = std::min(std::max<std::size_t>(m_where.length, 1), available);
  os << ' ' << std::string(number.size(), ' ') << " | " << std::string(col0, ' ') << '^'
     << std::string(length - 1, '~') << '\n';
  return os.str();
}

} // namespace kronex::dsl
