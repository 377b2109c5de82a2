#include "language/lexer.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

namespace kronex::dsl {

const char* describe(token_kind k) {
  switch (k) {
    case token_kind::name: return "a name";
    case token_kind::integer: return "an integer";
    case token_kind::number: return "a number";
    case token_kind::string: return "a string";
    case token_kind::parameter: return "a parameter";
    case token_kind::lparen: return "'('";
    case token_kind::rparen: return "')'";
    case token_kind::comma: return "','";
    case token_kind::dot: return "'.'";
    case token_kind::equals: return "'='";
    case token_kind::plus: return "'+'";
    case token_kind::minus: return "'-'";
    case token_kind::star: return "'*'";
    case token_kind::separator: return "the end of the statement";
    case token_kind::end: return "the end of the input";
  }
  return "?";
}

namespace {

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class lexer {
public:
  explicit lexer(const std::string& s) : m_s(s) {}

  std::vector<token> run() {
    std::vector<token> out;
    // A newline outside parentheses ends the statement unless the next line with content starts
    // with '.': the separator waits for the next token to decide, so each character is looked at
    // once (a look-ahead at every newline would rescan runs of blank and comment lines).
    bool pending = false;
    source_range pending_at;
    while (true) {
      skip_blanks_and_comments();
      if (m_i >= m_s.size()) break;
      const char c = m_s[m_i];
      if (c == '\n') {
        if (m_depth == 0 && !pending && !continued(out)) { pending = true; pending_at = here(1); }
        advance();
        continue;
      }
      if (pending) {
        if (c != '.') push_separator(out, pending_at);
        pending = false;
      }
      if (c == ';') { push_separator(out, here(1)); advance(); continue; }
      if (c == '(') { ++m_depth; out.push_back(simple(token_kind::lparen)); continue; }
      if (c == ')') { if (m_depth > 0) --m_depth; out.push_back(simple(token_kind::rparen)); continue; }
      if (c == ',') { out.push_back(simple(token_kind::comma)); continue; }
      if (c == '.') { out.push_back(simple(token_kind::dot)); continue; }
      if (c == '=') { out.push_back(simple(token_kind::equals)); continue; }
      if (c == '+') { out.push_back(simple(token_kind::plus)); continue; }
      if (c == '-') { out.push_back(simple(token_kind::minus)); continue; }
      if (c == '*') { out.push_back(simple(token_kind::star)); continue; }
      if (c == '"') { out.push_back(string_token()); continue; }
      if (c == '$') { out.push_back(parameter_token()); continue; }
      if (std::isdigit(static_cast<unsigned char>(c))) { out.push_back(number_token()); continue; }
      if (name_start(c)) { out.push_back(name_token()); continue; }
      throw dsl_error(here(1), unexpected_character(c));
    }
    if (pending) push_separator(out, pending_at);
    token e;
    e.kind = token_kind::end;
    e.where = here(1);
    out.push_back(e);
    return out;
  }

private:
  source_range here(std::size_t length) const { return {m_line, m_col, length, m_i}; }

  void advance() {
    if (m_s[m_i] == '\n') { ++m_line; m_col = 1; }
    else if ((static_cast<unsigned char>(m_s[m_i]) & 0xC0) != 0x80) ++m_col;  // UTF-8: count characters
    ++m_i;
  }

  void skip_blanks_and_comments() {
    while (m_i < m_s.size()) {
      const char c = m_s[m_i];
      if (c == ' ' || c == '\t' || c == '\r') advance();
      else if (c == '#') { while (m_i < m_s.size() && m_s[m_i] != '\n') advance(); }
      else break;
    }
  }

  // A line that ends with a binary operator goes on on the next line.
  static bool continued(const std::vector<token>& out) {
    if (out.empty()) return false;
    const token_kind k = out.back().kind;
    return k == token_kind::plus || k == token_kind::minus || k == token_kind::star;
  }

  static void push_separator(std::vector<token>& out, source_range at) {
    if (!out.empty() && out.back().kind == token_kind::separator) return;  // blank lines, ';;'
    token t;
    t.kind = token_kind::separator;
    t.where = at;
    out.push_back(t);
  }

  token simple(token_kind k) {
    token t;
    t.kind = k;
    t.text = std::string(1, m_s[m_i]);
    t.where = here(1);
    advance();
    return t;
  }

  token name_token() {
    token t;
    t.kind = token_kind::name;
    t.where = here(0);
    while (m_i < m_s.size() && name_char(m_s[m_i])) { t.text += m_s[m_i]; advance(); }
    t.where.length = t.text.size();
    return t;
  }

  token parameter_token() {
    token t;
    t.kind = token_kind::parameter;
    t.where = here(0);
    advance();  // '$'
    if (m_i >= m_s.size() || !name_start(m_s[m_i])) {
      throw dsl_error(t.where, "expected a parameter name after '$' (such as $n)");
    }
    while (m_i < m_s.size() && name_char(m_s[m_i])) { t.text += m_s[m_i]; advance(); }
    t.where.length = t.text.size() + 1;
    return t;
  }

  bool digit_at(std::size_t i) const { return i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[i])); }
  void take_digits(token& t) {
    while (digit_at(m_i)) { t.text += m_s[m_i]; advance(); }
  }

  // An integer (digits only), or a number: digits, an optional fraction ('.' and digits) and an
  // optional exponent ('e' or 'E', an optional sign, digits).
  token number_token() {
    token t;
    t.kind = token_kind::integer;
    t.where = here(0);
    take_digits(t);
    const auto malformed = [&](const std::string& why) {
      source_range at = t.where;
      at.length = t.text.size() + 1;
      return dsl_error(at, "malformed number '" + t.text + (m_i < m_s.size() ? std::string(1, m_s[m_i]) : "") + "': " + why);
    };
    if (m_i < m_s.size() && m_s[m_i] == '.' && digit_at(m_i + 1)) {
      t.kind = token_kind::number;
      t.text += '.';
      advance();
      take_digits(t);
    }
    if (m_i < m_s.size() && (m_s[m_i] == 'e' || m_s[m_i] == 'E')) {
      const std::size_t sign = m_i + 1 < m_s.size() && (m_s[m_i + 1] == '+' || m_s[m_i + 1] == '-') ? 1 : 0;
      if (!digit_at(m_i + 1 + sign)) {
        if (sign) { t.text += m_s[m_i]; advance(); }
        throw malformed("the exponent needs digits, as in 1e-3");
      }
      t.kind = token_kind::number;
      t.text += m_s[m_i];
      advance();
      if (sign) { t.text += m_s[m_i]; advance(); }
      take_digits(t);
    }
    t.where.length = t.text.size();
    if (m_i < m_s.size() && (name_char(m_s[m_i]) || m_s[m_i] == '.')) {
      // 12ab, 1.5.3, 2.x, 3.: a number is digits [. digits] [e [+-] digits], nothing glued on.
      throw malformed("a number is written as 12, 0.5, 1e-3 or 2.5E+4");
    }
    if (t.kind == token_kind::number) {
      const auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), t.number);
      if (ec != std::errc() || p != t.text.data() + t.text.size() || !std::isfinite(t.number)) {
        throw dsl_error(t.where, "number " + t.text + " is out of range (the DSL's numbers are double precision)");
      }
      return t;
    }
    for (const char c : t.text) {
      const std::uint64_t d = std::uint64_t(c - '0');
      if (t.value > (std::numeric_limits<std::uint64_t>::max() - d) / 10) throw dsl_error(t.where, "integer " + t.text + " is too large");
      t.value = t.value * 10 + d;
    }
    return t;
  }

  token string_token() {
    token t;
    t.kind = token_kind::string;
    t.where = here(0);
    const std::size_t start = m_i;
    advance();  // opening quote
    while (true) {
      if (m_i >= m_s.size() || m_s[m_i] == '\n') {
        t.where.length = m_i - start;
        throw dsl_error(t.where, "unterminated string: a string ends with '\"' on the same line");
      }
      const char c = m_s[m_i];
      if (c == '"') { advance(); break; }
      if (c == '\\') {
        const source_range at = here(2);
        advance();
        if (m_i >= m_s.size() || m_s[m_i] == '\n') throw dsl_error(at, "unterminated string: '\\' at the end of the line");
        const char e = m_s[m_i];
        if (e == '"' || e == '\\') t.text += e;
        else if (e == 'n') t.text += '\n';
        else if (e == 't') t.text += '\t';
        else throw dsl_error(at, std::string("unknown escape '\\") + e + "' in a string (use \\\" \\\\ \\n or \\t)");
        advance();
        continue;
      }
      t.text += c;
      advance();
    }
    t.where.length = m_col > t.where.column ? m_col - t.where.column : 1;
    return t;
  }

  static std::string unexpected_character(char c) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string("unexpected character '") + c + "'";
    static const char* hex = "0123456789abcdef";
    return std::string("unexpected byte 0x") + hex[u >> 4] + hex[u & 15] + " (names, numbers and punctuation are ASCII)";
  }

  const std::string& m_s;
  std::size_t m_i = 0, m_line = 1, m_col = 1, m_depth = 0;
};

} // namespace

std::vector<token> tokenize(const std::string& source) { return lexer(source).run(); }

} // namespace kronex::dsl
