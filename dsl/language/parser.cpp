#include "language/parser.hpp"

#include <algorithm>
#include <utility>

#include "language/lexer.hpp"

namespace kronex::dsl {

namespace {

class parser {
public:
  parser(const std::string& source, std::vector<token> tokens) : m_src(source), m_t(std::move(tokens)) {}

  program run() {
    program p;
    skip_separators();
    while (peek().kind != token_kind::end) {
      p.statements.push_back(parse_statement());
      if (peek().kind != token_kind::separator && peek().kind != token_kind::end) {
        const token& t = peek();
        throw dsl_error(t.where, "expected ';' or a new line after the statement, got " + spell(t));
      }
      skip_separators();
    }
    return p;
  }

private:
  const token& peek(std::size_t ahead = 0) const {
    const std::size_t i = m_i + ahead;
    return i < m_t.size() ? m_t[i] : m_t.back();
  }
  const token& take() { const token& t = peek(); if (m_i < m_t.size() - 1) ++m_i; return t; }
  void skip_separators() { while (peek().kind == token_kind::separator) take(); }

  static std::string spell(const token& t) {
    switch (t.kind) {
      case token_kind::name: return "'" + t.text + "'";
      case token_kind::integer:
      case token_kind::number: return t.text;
      case token_kind::string: return "a string";
      case token_kind::parameter: return "'$" + t.text + "'";
      default: return describe(t.kind);
    }
  }

  const token& expect(token_kind k, const char* context) {
    const token& t = peek();
    if (t.kind != k) throw dsl_error(t.where, std::string("expected ") + describe(k) + " " + context + ", got " + spell(t));
    return take();
  }

  statement parse_statement() {
    statement s;
    if (peek().kind == token_kind::name && peek(1).kind == token_kind::equals) {
      const token& name = take();
      s.assigned = name.text;
      s.assigned_where = name.where;
      take();  // '='
      if (peek().kind == token_kind::separator || peek().kind == token_kind::end) {
        throw dsl_error(peek().where, "expected an expression after '" + name.text + " ='");
      }
    }
    s.value = parse_expr(0);
    if (peek().kind == token_kind::equals) {
      throw dsl_error(peek().where, "unexpected '=': only a plain name can be assigned (NAME = expression)");
    }
    return s;
  }

  // The node's range runs from `start` to the end of the last token taken (on start's line).
  void close(node& n, const source_range& start) {
    const token& last = m_t[m_i > 0 ? m_i - 1 : 0];
    n.where = start;
    n.where.length = last.where.line == start.line && last.where.column + last.where.length > start.column
                         ? last.where.column + last.where.length - start.column
                         : std::string::npos;  // to the end of the first line
    n.end_offset = last.where.offset + m_source_bytes(last);
  }

  static bool is_sum_op(token_kind k) { return k == token_kind::plus || k == token_kind::minus; }
  static bool is_term_op(token_kind k) { return k == token_kind::star; }

  // expr and term: operands of one precedence level joined left to right, in one flat node.
  node_ptr parse_expr(std::size_t depth) { return parse_level(depth, is_sum_op, &parser::parse_term); }
  node_ptr parse_term(std::size_t depth) { return parse_level(depth, is_term_op, &parser::parse_unary); }

  node_ptr parse_level(std::size_t depth, bool (*joins)(token_kind), node_ptr (parser::*operand)(std::size_t)) {
    if (depth > max_nesting) throw dsl_error(peek().where, "expression nested too deeply (more than 200 levels)");
    const source_range start = peek().where;
    node_ptr first = (this->*operand)(depth);
    if (!joins(peek().kind)) return first;
    auto n = std::make_unique<node>();
    n->what = node::kind::arithmetic;
    n->args.push_back(std::move(first));
    while (joins(peek().kind)) {
      const token& op = take();
      n->ops += op.text;
      n->op_where.push_back(op.where);
      n->args.push_back((this->*operand)(depth));
    }
    close(*n, start);
    return n;
  }

  node_ptr parse_unary(std::size_t depth) {
    if (peek().kind != token_kind::minus) return parse_postfix(depth);
    if (++depth > max_nesting) throw dsl_error(peek().where, "expression nested too deeply (more than 200 levels)");
    const source_range start = peek().where;
    auto n = std::make_unique<node>();
    n->what = node::kind::negate;
    n->name_where = take().where;
    n->args.push_back(parse_unary(depth));
    close(*n, start);
    return n;
  }

  node_ptr parse_postfix(std::size_t depth) {
    const source_range start = peek().where;
    node_ptr e = parse_primary(depth);
    while (peek().kind == token_kind::dot) {
      // Each method call nests the tree one level deeper (its target is a child), so calls in a
      // row count against the same limit as parentheses: evaluation recurses that deep.
      if (++depth > max_nesting) throw dsl_error(peek().where, "expression nested too deeply (more than 200 levels)");
      take();
      const token& name = peek();
      if (name.kind != token_kind::name) {
        throw dsl_error(name.where, "expected a method name after '.' (solve, apply, transpose, adjoint, inverse or pseudo_inverse), got " + spell(name));
      }
      take();
      auto m = std::make_unique<node>();
      m->what = node::kind::method;
      m->text = name.text;
      m->name_where = name.where;
      m->target = std::move(e);
      expect(token_kind::lparen, ("after the method name '" + name.text + "'").c_str());
      parse_args(*m, depth);
      close(*m, start);
      e = std::move(m);
    }
    return e;
  }

  void parse_args(node& call, std::size_t depth) {
    if (peek().kind == token_kind::rparen) { take(); return; }
    while (true) {
      if (call.args.size() >= 64) throw dsl_error(peek().where, "too many arguments (more than 64)");
      if (peek().kind == token_kind::name && peek(1).kind == token_kind::equals) {
        // A named argument, NAME = value (the Krylov solvers' options).
        const source_range start = peek().where;
        auto named = std::make_unique<node>();
        named->what = node::kind::named;
        named->text = peek().text;
        named->name_where = take().where;
        take();  // '='
        named->args.push_back(parse_expr(depth + 1));
        close(*named, start);
        call.args.push_back(std::move(named));
      } else {
        call.args.push_back(parse_expr(depth + 1));
      }
      const token& t = peek();
      if (t.kind == token_kind::comma) {
        take();
        if (peek().kind == token_kind::rparen) throw dsl_error(peek().where, "expected an argument after ','");
        continue;
      }
      if (t.kind == token_kind::rparen) { take(); return; }
      throw dsl_error(t.where, "expected ',' or ')' in the argument list, got " + spell(t));
    }
  }

  node_ptr parse_primary(std::size_t depth) {
    const token& t = peek();
    auto n = std::make_unique<node>();
    n->where = t.where;
    n->end_offset = t.where.offset + m_source_bytes(t);
    switch (t.kind) {
      case token_kind::integer:
        n->what = node::kind::integer;
        n->value = t.value;
        n->text = t.text;
        take();
        return n;
      case token_kind::number:
        n->what = node::kind::number;
        n->number = t.number;
        n->text = t.text;
        take();
        return n;
      case token_kind::string:
        n->what = node::kind::string;
        n->text = t.text;
        take();
        return n;
      case token_kind::parameter:
        n->what = node::kind::parameter;
        n->text = t.text;
        take();
        return n;
      case token_kind::lparen: {
        take();
        node_ptr inner = parse_expr(depth + 1);
        expect(token_kind::rparen, "to close '('");
        return inner;
      }
      case token_kind::name: {
        n->text = t.text;
        n->name_where = t.where;
        take();
        if (peek().kind == token_kind::lparen) {
          take();
          n->what = node::kind::call;
          parse_args(*n, depth);
          close(*n, n->name_where);
        } else {
          n->what = node::kind::name;
        }
        return n;
      }
      default:
        throw dsl_error(t.where, "expected an expression (a name, a number, a string or a call), got " + spell(t));
    }
  }

  // A token's length in bytes (its range counts characters; strings hold unescaped text).
  std::size_t m_source_bytes(const token& t) const {
    std::size_t end = t.where.offset, chars = 0;
    while (end < m_src.size() && chars < t.where.length) {
      ++end;
      while (end < m_src.size() && (static_cast<unsigned char>(m_src[end]) & 0xC0) == 0x80) ++end;
      ++chars;
    }
    return end - t.where.offset;
  }

  const std::string& m_src;
  std::vector<token> m_t;
  std::size_t m_i = 0;
};

} // namespace

program parse(const std::string& source) { return parser(source, tokenize(source)).run(); }

std::string source_text(const std::string& source, const node& n) { return source_text(source, n.where.offset, n.end_offset); }

std::string source_text(const std::string& source, std::size_t begin, std::size_t end_offset) {
  // The bytes, with each run of blanks, newlines and comments shown as one space.
  std::string out;
  const std::size_t end = std::min(end_offset, source.size());
  bool blank = false, quoted = false;
  for (std::size_t i = std::min(begin, end); i < end; ++i) {
    const char c = source[i];
    if (quoted) {
      out += c;
      if (c == '\\' && i + 1 < end) out += source[++i];
      else if (c == '"') quoted = false;
      continue;
    }
    if (c == '"') quoted = true;
    if (c == '#') { while (i < end && source[i] != '\n') ++i; blank = true; continue; }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') { blank = true; continue; }
    // No space where none is written in one-line code: after '(' and before '.', ')' and ','.
    if (blank && !out.empty() && out.back() != '(' && c != '.' && c != ')' && c != ',') out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

} // namespace kronex::dsl
