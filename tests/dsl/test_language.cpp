// The DSL's error reporting: every class of error with its message and the exact position of its
// caret (line, column, underlined length), and the rendered form the command prints. Also the
// lexical rules (comments, separators, continuation lines) and what programs evaluate to.
#define BOOST_TEST_MODULE dsl_language
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "eval/evaluator.hpp"
#include "language/lexer.hpp"
#include "language/parser.hpp"

namespace {

using kronex::dsl::dsl_error;
using kronex::dsl::evaluate;

struct caught {
  std::size_t line = 0, column = 0, length = 0;
  std::string message;
};

// Evaluates `source`, which must fail with a dsl_error; returns where and what.
caught error_of(const std::string& source, const kronex::dsl::parameters& params = {}) {
  try {
    evaluate(source, params);
  } catch (const dsl_error& e) {
    return {e.where().line, e.where().column, e.where().length, e.message()};
  }
  BOOST_FAIL("no dsl_error for: " + source);
  return {};
}

void check_error(const std::string& source, std::size_t line, std::size_t column, std::size_t length,
                 const std::string& fragment) {
  const caught c = error_of(source);
  BOOST_TEST_INFO("source: " << source << "\nmessage: " << c.message);
  BOOST_TEST(c.line == line);
  BOOST_TEST(c.column == column);
  BOOST_TEST(c.length == length);
  BOOST_TEST(c.message.find(fragment) != std::string::npos);
}

const std::string ok_tail = "kron(mass(8, 3)).solve(ones())";

} // namespace

BOOST_AUTO_TEST_CASE(lexical_errors) {
  check_error("kron(mass(8, 3)) @ 2", 1, 18, 1, "unexpected character '@'");
  check_error("x = \"abc\nkron(mass(8,3)).solve(ones())", 1, 5, 4, "unterminated string");
  check_error("mtx(\"a\\qb\")", 1, 7, 2, "unknown escape '\\q'");
  // Numbers are coefficients: where an integer is needed, a decimal number is the wrong kind.
  check_error("mass(1.5, 3)", 1, 6, 3, "argument 1 of mass must be an integer (n), got a number");
  check_error("mass(1e5, 3)", 1, 6, 3, "argument 1 of mass must be an integer (n), got a number");
  check_error("1.5.3", 1, 1, 4, "malformed number '1.5.'");
  check_error("x = 1e\n" + ok_tail, 1, 5, 2, "malformed number '1e': the exponent needs digits");
  check_error("x = 2.5E+\n" + ok_tail, 1, 5, 5, "malformed number '2.5E+': the exponent needs digits");
  check_error("x = 12ab", 1, 5, 3, "malformed number '12a'");
  check_error("x = 3.", 1, 5, 2, "malformed number '3.'");
  check_error("x = 1e400", 1, 5, 5, "number 1e400 is out of range");
  check_error("mass(99999999999999999999999, 3)", 1, 6, 23, "too large");
  check_error("mass($, 3)", 1, 6, 0, "parameter name after '$'");
  check_error("mass(8, 3) é", 1, 12, 1, "unexpected byte 0xc3");
}

BOOST_AUTO_TEST_CASE(syntax_errors) {
  check_error("kron(mass(8, 3)", 1, 16, 1, "expected ',' or ')' in the argument list, got the end of the input");
  check_error("kron(mass(8, 3),)", 1, 17, 1, "expected an argument after ','");
  check_error("kron(mass(8 3))", 1, 13, 1, "expected ',' or ')' in the argument list, got 3");
  check_error("K = ", 1, 5, 1, "expected an expression after 'K ='");
  check_error("kron(mass(8, 3)).solve", 1, 23, 1, "expected '(' after the method name 'solve'");
  check_error("kron(mass(8, 3)).(ones())", 1, 18, 1, "expected a method name after '.'");
  check_error("A = mass(8, 3) B = mass(8, 3)", 1, 16, 1, "expected ';' or a new line after the statement, got 'B'");
  check_error("mass(8, 3) = A", 1, 12, 1, "only a plain name can be assigned");
  check_error(")", 1, 1, 1, "expected an expression");
  std::string deep(300, '(');
  check_error(deep + "1" + std::string(300, ')'), 1, 202, 1, "nested too deeply");
  std::string chain = "kron(mass(8, 3))";
  for (int i = 0; i < 300; ++i) chain += ".transpose()";
  check_error(chain, 1, 17 + 200 * 12, 1, "nested too deeply");
  // Unary minus signs in a row nest too.
  check_error("x = " + std::string(300, '-') + "1", 1, 4 + 201, 1, "nested too deeply");
}

BOOST_AUTO_TEST_CASE(name_errors) {
  check_error("Mass = mass(8, 3)\nkron(Mas).solve(ones())", 2, 6, 3, "unknown name 'Mas' (did you mean 'Mass'?)");
  check_error("kron(mass(8, 3)).solve(onez())", 1, 24, 4, "unknown function 'onez' (did you mean 'ones'?)");
  check_error("kron = mass(8, 3)\n" + ok_tail, 1, 1, 4, "cannot assign to 'kron': it is a built-in function");
  check_error("periodic = mass(8, 3)\n" + ok_tail, 1, 1, 8, "cannot assign to 'periodic': it is a keyword");
  check_error("kron(mass).solve(ones())", 1, 6, 4, "'mass' is a function: call it");
  check_error("M = mass(8, 3); M(1)", 1, 17, 1, "'M' is a factor, not a function");
  check_error("kron(mass(8, 3)).slove(ones())", 1, 18, 5, "unknown method '.slove' (did you mean '.solve'?)");
  check_error("kron(mass(8, $m)).solve(ones())", 1, 14, 2, "parameter $m is not set");
}

BOOST_AUTO_TEST_CASE(argument_errors) {
  check_error("kron(mass(8)).solve(ones())", 1, 6, 7, "mass takes 2 to 4 arguments, got 1: mass(n, degree");
  check_error("kron(mass(8, 3, periodic, float32, 1)).solve(ones())", 1, 36, 1, "mass takes 2 to 4 arguments, got 5");
  check_error("kron(mass(\"8\", 3)).solve(ones())", 1, 11, 3, "argument 1 of mass must be an integer (n), got a string");
  check_error("kron(mass(8, 3, float32, periodic)).solve(ones())", 1, 26, 8, "the value type must be the last argument");
  check_error("kron(identity(8, periodic)).solve(ones())", 1, 18, 8,
              "argument 2 of identity must be a value type (float32, float64, complex64 or complex128), got a boundary keyword 'periodic'");
  check_error("kron(mass(0, 3)).solve(ones())", 1, 11, 1, "n must be between 1 and 1048576, got 0");
  check_error("kron(mass(8, 40)).solve(ones())", 1, 14, 2, "the degree must be between 0 and 31, got 40");
  check_error("kron(mass(4, 3, periodic)).solve(ones())", 1, 6, 20, "mass(4, 3, periodic): kronex::gallery::bspline_mass");
  check_error("kron().solve(ones())", 1, 1, 6, "kron takes 1 to 6 factors, got 0");
  check_error("I = identity(2); kron(I, I, I, I, I, I, I).solve(ones())", 1, 41, 1, "kron takes 1 to 6 factors, got 7");
  check_error("K = kron(mass(8, 3)); kron(K).solve(ones())", 1, 28, 1, "argument 1 of kron is an operator");
  check_error("kron(3).solve(ones())", 1, 6, 1, "argument 1 of kron must be a factor");
  check_error("kron(mass(8, 3)).solve(mass(8, 3))", 1, 24, 10, "must be a tensor (npy(...), random(seed), ones() or a result), got a factor (a 1D matrix, not a tensor)");
  check_error("kron(mass(8, 3)).transpose(1)", 1, 28, 1, "transpose takes 0 arguments, got 1");
  check_error("kron(mass(8, 3)).solve()", 1, 1, 24, ".solve takes 1 argument, got 0");
  check_error("ones().solve(ones())", 1, 1, 6, "'.solve' needs an operator (kron(...)), but ones() is a tensor");
  check_error("random(-1)", 1, 8, 2, "argument 1 of random must be an integer (the seed), got a number");
}

BOOST_AUTO_TEST_CASE(type_and_shape_errors) {
  check_error("kron(mass(8, 3), mass(6, 2, complex128)).solve(ones())", 1, 18, 22,
              "factor 1 (mass(8, 3)) is float64, factor 2 (mass(6, 2, complex128)) is complex128");
  // Shapes: both, in full; the caret under the operand.
  check_error("K = kron(mass(8, 3), mass(6, 2)); L = kron(mass(8, 3), mass(5, 2)); K.solve(L.apply(ones()))", 1, 77, 15,
              "shape mismatch: kron(mass(8, 3), mass(6, 2)) has sizes (8, 6) but L.apply(ones()) has shape (8, 5)");
  check_error("K = kron(mass(8, 3), mass(6, 2)); K.solve(kron(mass(8, 3)).apply(ones()))", 1, 43, 30,
              "has sizes (8, 6) but kron(mass(8, 3)).apply(ones()) has shape (8,)");
  check_error("K = kron(mass(8, 3, float32)); K.solve(kron(mass(8, 3)).apply(ones()))", 1, 40, 30,
              "value type mismatch: kron(mass(8, 3, float32)) is float32 but kron(mass(8, 3)).apply(ones()) is float64");
}

BOOST_AUTO_TEST_CASE(statement_errors) {
  check_error("", 1, 1, 1, "the program is empty");
  check_error("# only a comment\n", 1, 1, 1, "the program is empty");
  check_error("mass(8, 3)\n" + ok_tail, 1, 1, 10, "this expression's value is not used");
  check_error("M = mass(8, 3)\nM", 2, 1, 1, "the last statement must be a solve or an apply");
}

BOOST_AUTO_TEST_CASE(file_errors) {
  check_error("kron(mtx(\"/nonexistent/A.mtx\")).solve(ones())", 1, 6, 25, "cannot use \"/nonexistent/A.mtx\"");
  check_error("kron(mass(4, 1)).solve(npy(\"/nonexistent/b.npy\"))", 1, 24, 25, "cannot use \"/nonexistent/b.npy\"");
  // A malformed Matrix Market file: the message has the line in that file.
  const std::string path = "test_language_bad.mtx";
  {
    std::ofstream f(path);
    f << "%%MatrixMarket matrix coordinate real general\n% a comment\n3 3 2\n1 1 2.0\n2 2\n";
  }
  const caught c = error_of("A = mtx(\"" + path + "\")\nkron(A).solve(ones())");
  std::remove(path.c_str());
  BOOST_TEST(c.line == 1u);
  BOOST_TEST(c.column == 5u);
  BOOST_TEST(c.message.find("\"" + path + "\", line 5") != std::string::npos, c.message);
}

BOOST_AUTO_TEST_CASE(rendered_message_with_caret) {
  const std::string source = "M = mass(64, 3)\nK = kron(M, mass(48, 3))\nK.solve(kron(M, mass(40, 3)).apply(ones()))\n";
  try {
    evaluate(source);
    BOOST_FAIL("no error");
  } catch (const dsl_error& e) {
    const std::string expected =
        "prog.kx:3:9: error: shape mismatch: kron(M, mass(48, 3)) has sizes (64, 48) but kron(M, mass(40, 3)).apply(ones()) "
        "has shape (64, 40)\n"
        " 3 | K.solve(kron(M, mass(40, 3)).apply(ones()))\n"
        "   |         ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n";
    BOOST_TEST(e.render(source, "prog.kx") == expected);
  }
  // Tabs count as one column and are shown as one space, so the caret stays under the problem.
  try {
    evaluate("\tkron(zzz).solve(ones())");
    BOOST_FAIL("no error");
  } catch (const dsl_error& e) {
    BOOST_TEST(e.render("\tkron(zzz).solve(ones())") ==
               "1:7: error: unknown name 'zzz'\n 1 |  kron(zzz).solve(ones())\n   |       ^~~\n");
  }
}

BOOST_AUTO_TEST_CASE(lexical_rules) {
  // Comments, ';' and new lines, blank lines, a call split over lines, a '.' continuation line.
  const auto p = evaluate("# header\nM = mass(8, 3)  # trailing comment\n\n;;K = kron(M,\n  mass(6, 2,\n periodic))\n"
                          "K\n  .transpose()   # continues\n  .solve(ones())\n");
  BOOST_TEST(p.stages.size() == 1u);
  BOOST_TEST(p.text == "K.transpose().solve(ones())");
  BOOST_TEST((p.shape == kronex::shape_t{8, 6}));
  // Strings: escapes are unescaped.
  const auto toks = kronex::dsl::tokenize("\"a\\\"b\\\\c\"");
  BOOST_TEST(toks.at(0).text == "a\"b\\c");
}

BOOST_AUTO_TEST_CASE(what_programs_evaluate_to) {
  using kronex::dsl::dtype;
  using kind = kronex::dsl::result_value::kind;
  // Nesting flattens to stages, innermost first; the value type comes from the typed factors.
  auto p = evaluate("K = kron(mass(8, 3, complex64), identity(5)); K.adjoint().solve(K.apply(random(4)))");
  BOOST_TEST(p.stages.size() == 2u);
  BOOST_TEST((p.stages[0].what == kind::apply));
  BOOST_TEST((p.stages[1].what == kind::solve));
  BOOST_TEST((p.type == dtype::complex64));
  BOOST_TEST(p.runnable());
  // Only identities: float64 unless the operand says otherwise.
  BOOST_TEST((evaluate("kron(identity(3), identity(4)).solve(ones())").type == dtype::float64));
  // A bare operator: explained as compile(K, sizes), not runnable.
  auto op = evaluate("kron(laplacian(7), mass(9, 2)).inverse()");
  BOOST_TEST(!op.runnable());
  BOOST_TEST(op.stages.size() == 1u);
  BOOST_TEST((op.shape == kronex::shape_t{7, 9}));
  // Parameters.
  auto q = evaluate("kron(mass($n, 3), mass($n, 2)).solve(ones())", {{"n", 12}});
  BOOST_TEST((q.shape == kronex::shape_t{12, 12}));
}

// Rebinding a name builds as deeply as nesting does, without deep text: the limits count what is
// built (stages in a result chain, methods on an operator), and each is an error at the call
// that would pass it, naming the limit.
BOOST_AUTO_TEST_CASE(limits_count_what_is_built) {
  using kronex::dsl::max_operator_methods;
  using kronex::dsl::max_stages;
  std::string chain = "K = kron(mass(8, 1))\ny = ones()\n";
  for (std::size_t k = 0; k < max_stages; ++k) chain += "y = K.apply(y)\n";
  const auto p = evaluate(chain + "y");
  BOOST_TEST(p.stages.size() == max_stages);
  check_error(chain + "y = K.solve(y)\ny", max_stages + 3, 5, 10,
              "too many stages: y is already a chain of 4096 solves and applies, the limit is 4096");

  std::string methods = "K = kron(mass(8, 1))\n";
  for (std::size_t k = 0; k < max_operator_methods; ++k) methods += "K = K.transpose()\n";
  const auto q = evaluate(methods + "K.solve(ones())");
  BOOST_TEST(q.stages.at(0).op->methods.size() == max_operator_methods);
  check_error(methods + "K = K.adjoint()\nK.solve(ones())", max_operator_methods + 2, 7, 7,
              "too many methods on one operator: K.transpose() already has 256 (.transpose(), .adjoint(), .inverse()), "
              "the limit is 256");
}

// Releasing a long chain of results must not recurse once per link (a million links would
// overflow the stack): built here directly, past what the evaluator allows.
BOOST_AUTO_TEST_CASE(a_long_result_chain_is_released_without_recursion) {
  using kronex::dsl::result_value;
  auto op = std::make_shared<const kronex::dsl::operator_value>();
  std::shared_ptr<const result_value> chain;
  for (std::size_t k = 0; k < 1000000; ++k) {
    auto r = std::make_shared<result_value>();
    r->op = op;
    if (chain) r->operand = chain;
    else r->operand = std::make_shared<const kronex::dsl::generated_tensor>();
    chain = std::move(r);
  }
  std::weak_ptr<const result_value> last = chain;
  chain.reset();
  BOOST_TEST(last.expired());
  // A link still used elsewhere is kept, with what it holds.
  auto shared_inner = std::make_shared<result_value>();
  shared_inner->op = op;
  shared_inner->operand = std::make_shared<const kronex::dsl::generated_tensor>();
  {
    auto outer = std::make_shared<result_value>();
    outer->op = op;
    outer->operand = std::shared_ptr<const result_value>(shared_inner);
  }
  BOOST_TEST(shared_inner.use_count() == 1);
  BOOST_TEST(std::holds_alternative<std::shared_ptr<const kronex::dsl::generated_tensor>>(shared_inner->operand));
}

// "Did you mean" is skipped for names longer than any sensible one: the edit distance costs the
// product of the lengths (two 100000-character names took seconds).
BOOST_AUTO_TEST_CASE(no_suggestion_for_very_long_names) {
  const std::string defined(kronex::dsl::max_suggested_name + 1, 'a');
  const std::string typo = defined.substr(1) + "b";
  const caught c = error_of(defined + " = mass(8, 3)\nkron(" + typo + ").solve(ones())");
  BOOST_TEST(c.message == "unknown name '" + typo + "'");
  // Up to the limit, suggestions still come.
  const std::string shorter(kronex::dsl::max_suggested_name, 'a');
  const caught d = error_of(shorter + " = mass(8, 3)\nkron(" + shorter.substr(1) + "b).solve(ones())");
  BOOST_TEST(d.message.find("did you mean '" + shorter + "'") != std::string::npos, d.message);
}

// Blank and comment lines between a statement and a '.' continuation are skipped, however many.
BOOST_AUTO_TEST_CASE(continuation_after_many_blank_lines) {
  std::string lines;
  for (int k = 0; k < 1000; ++k) lines += k % 2 ? "# comment\n" : "\n";
  const auto p = evaluate("K = kron(mass(8, 3))\nK" + lines + "  .solve(ones())" + lines);
  BOOST_TEST(p.text == "K.solve(ones())");
  check_error("K = kron(mass(8, 3))\nK" + lines + "K.solve(ones())", 2, 1, 1, "this expression's value is not used");
}

// Numbers: integers stay integers (sizes, seeds); a decimal point or an exponent makes a number.
BOOST_AUTO_TEST_CASE(number_literals) {
  using kronex::dsl::token_kind;
  const auto t = kronex::dsl::tokenize("128 0.5 1e-3 2.5E+4 7e2 0.0");
  BOOST_TEST((t.at(0).kind == token_kind::integer));
  BOOST_TEST(t.at(0).value == 128u);
  const double expected[] = {0.5, 1e-3, 2.5e4, 700.0, 0.0};
  for (std::size_t k = 0; k < 5; ++k) {
    BOOST_TEST((t.at(k + 1).kind == token_kind::number), t.at(k + 1).text);
    BOOST_TEST(t.at(k + 1).number == expected[k], t.at(k + 1).text);
  }
  BOOST_TEST(t.at(3).text == "2.5E+4");
  BOOST_TEST(t.at(3).where.length == 6u);
  const auto ops = kronex::dsl::tokenize("a+b-c*d");
  BOOST_TEST((ops.at(1).kind == token_kind::plus));
  BOOST_TEST((ops.at(3).kind == token_kind::minus));
  BOOST_TEST((ops.at(5).kind == token_kind::star));
}

namespace {

using kronex::dsl::operator_form;
using kronex::dsl::operator_value;

// The operator a program ending with a bare operator builds.
const operator_value& built(const std::string& program) {
  static kronex::dsl::evaluated_program keep;
  keep = evaluate("A = kron(laplacian(4)); B = kron(mass(4, 1)); C = kron(mass(4, 2))\n" + program);
  BOOST_REQUIRE(keep.bare_operator);
  return *keep.bare_operator;
}

bool is_kron(const operator_value& v, const char* text) { return !v.combined() && v.text == text; }

} // namespace

// Unary minus binds tighter than '*', '*' tighter than '+' and '-', all left associative; method
// calls bind tighter than everything.
BOOST_AUTO_TEST_CASE(operator_precedence) {
  {
    const auto& v = built("A + B * C");
    BOOST_TEST((v.form == operator_form::sum));
    BOOST_TEST(is_kron(*v.operands[0], "kron(laplacian(4))"));
    BOOST_TEST((v.operands[1]->form == operator_form::product));
    BOOST_TEST(is_kron(*v.operands[1]->operands[0], "kron(mass(4, 1))"));
    BOOST_TEST(is_kron(*v.operands[1]->operands[1], "kron(mass(4, 2))"));
  }
  {
    const auto& v = built("A * B - C");
    BOOST_TEST((v.form == operator_form::sum));
    BOOST_TEST(v.coefs[1] == -1.0);
    BOOST_TEST((v.operands[0]->form == operator_form::product));
  }
  {
    // Left associative: (A - B) - C, not A - (B - C).
    const auto& v = built("A - B - C");
    BOOST_TEST(v.coefs[1] == -1.0);
    BOOST_TEST(is_kron(*v.operands[1], "kron(mass(4, 2))"));
    BOOST_TEST((v.operands[0]->form == operator_form::sum));
    BOOST_TEST(v.operands[0]->coefs[1] == -1.0);
    BOOST_TEST(v.text == "A - B - C");
    BOOST_TEST(v.operands[0]->text == "A - B");
  }
  {
    // (-A) * B: the minus on A alone.
    const auto& v = built("-A * B");
    BOOST_TEST((v.form == operator_form::product));
    BOOST_TEST((v.operands[0]->form == operator_form::scaled));
    BOOST_TEST(v.operands[0]->coefs[0] == -1.0);
  }
  {
    // -(A.transpose()): the method first.
    const auto& v = built("-A.transpose()");
    BOOST_TEST((v.form == operator_form::scaled));
    BOOST_TEST(v.operands[0]->methods.size() == 1u);
  }
  {
    // Scalars on either side, decimal or integer, and parentheses.
    const auto& v = built("2 * (A + B) * 0.5");
    BOOST_TEST((v.form == operator_form::scaled));
    BOOST_TEST(v.coefs[0] == 0.5);
    BOOST_TEST(v.operands[0]->coefs[0] == 2.0);
    BOOST_TEST((v.operands[0]->operands[0]->form == operator_form::sum));
  }
  {
    // A negative coefficient, and a method on a combination.
    const auto& v = built("-1e-2 * (A + C).transpose()");
    BOOST_TEST(v.coefs[0] == -1e-2);
    BOOST_TEST((v.operands[0]->transform == kronex::op::transpose));
    BOOST_TEST((v.sizes() == kronex::shape_t{4}));
  }
  // A line that ends with an operator goes on.
  const auto p = evaluate("A = kron(laplacian(4))\nL = A +\n  2 *\n  A\nL.solve(ones())");
  BOOST_TEST(p.stages.at(0).op->text == "A + 2 * A");
}

BOOST_AUTO_TEST_CASE(operator_arithmetic_errors) {
  const std::string defs = "A = kron(laplacian(4)); B = kron(mass(6, 1))\n";
  check_error("kron(mass(8, 3)) + 2", 1, 18, 1, "cannot add an integer to an operator: '+' and '-' combine operators");
  check_error("x = 2 + 3", 1, 7, 1, "cannot add an integer to an integer");
  check_error("b = ones(); c = b - b", 1, 19, 1, "cannot subtract a tensor from a tensor");
  check_error("x = 2 * 1.5", 1, 7, 1, "cannot multiply an integer by a number");
  check_error(defs + "x = A * ones()", 2, 7, 1, "cannot multiply an operator by a tensor");
  check_error("x = -ones()", 1, 5, 1, "cannot negate a tensor (ones())");
  check_error("kron(mass(8, 3)) + ", 1, 20, 1, "expected an expression");
  check_error("kron(mass(8, 3)) * * 2", 1, 20, 1, "expected an expression");
  // Sizes and value types: the caret at the operator sign, both operands named.
  check_error(defs + "L = A + 2 * B", 2, 7, 1,
              "the sum of operators with different sizes: kron(laplacian(4)) has sizes (4,), 2 * B has sizes (6,)");
  check_error(defs + "L = A * kron(laplacian(4), mass(4, 1))", 2, 7, 1, "the composition of operators with different sizes");
  check_error(defs + "L = A - kron(laplacian(4, float32))", 2, 7, 1,
              "the difference of operators with different value types: kron(laplacian(4)) is float64, kron(laplacian(4, float32)) is float32");
  // Pseudo-inverses: rtol a number >= 0, of sums and Kronecker products only, not inverted.
  check_error(defs + "A.pseudo_inverse(-1e-3)", 2, 18, 5, "rtol must be >= 0, got -1e-3");
  check_error(defs + "A.pseudo_inverse(ones())", 2, 18, 6, "argument 1 of .pseudo_inverse must be a number (rtol), got a tensor");
  check_error(defs + "(A * A).pseudo_inverse(0)", 2, 9, 14, "pseudo_inverse is defined for sums of Kronecker products");
  check_error(defs + "A.inverse().pseudo_inverse(0)", 2, 13, 14, "A.inverse() is an inverse");
  check_error(defs + "(A + A).pseudo_inverse(0.1).inverse()", 2, 29, 7, "the inverse of a pseudo-inverse is not defined");
  check_error(defs + "(A + A).pseudo_inverse(0.1).solve(ones())", 2, 29, 5, "cannot solve with (A + A).pseudo_inverse(0.1)");
}

// An assembled operator (mtx_operator, jacobi) in operator arithmetic: a leaf of the combination,
// which is applied only; sizes and value types checked at the operator sign as for Kronecker
// operands; .solve, .inverse and .pseudo_inverse refused at the call; the limits count it.
BOOST_AUTO_TEST_CASE(assembled_operators_in_operator_arithmetic) {
  const std::string path = "test_language_assembled.mtx";
  {
    std::ofstream f(path);
    f << "%%MatrixMarket matrix coordinate real general\n4 4 6\n1 1 2.0\n2 2 3.0\n3 3 4.0\n4 4 5.0\n1 2 -1.0\n3 4 0.5\n";
  }
  const std::string defs = "A = mtx_operator(\"" + path + "\", 4); K = kron(laplacian(4))\n";
  {
    const auto p = evaluate(defs + "(A + 0.5 * K).apply(ones())");
    const operator_value& v = *p.stages.at(0).op;
    BOOST_TEST((v.form == operator_form::sum));
    BOOST_TEST(v.has_assembled);
    BOOST_TEST((v.operands.at(0)->form == operator_form::assembled));
    BOOST_TEST(v.operands.at(0)->assembled.get() != nullptr);
    BOOST_TEST(!v.operands.at(1)->has_assembled);
    BOOST_TEST((v.sizes() == kronex::shape_t{4}));
    BOOST_TEST((v.type == kronex::dsl::dtype::float64));
    BOOST_TEST(v.built == 4u);  // the sum, A, the multiple, K
  }
  {
    // A bare apply: the one-leaf combination; a transpose of it is the leaf with its op.
    const auto p = evaluate(defs + "A.transpose().apply(A.apply(ones()))");
    BOOST_TEST((p.stages.at(0).op->form == operator_form::assembled));
    BOOST_TEST((p.stages.at(1).op->form == operator_form::assembled));
    BOOST_TEST((p.stages.at(1).op->transform == kronex::op::transpose));
    const auto q = evaluate(defs + "(K * jacobi(A) - -A).adjoint()");
    BOOST_TEST(q.bare_operator->has_assembled);
    BOOST_TEST((q.bare_operator->transform == kronex::op::adjoint));
  }
  check_error(defs + "L = A + kron(mass(6, 1))", 2, 7, 1,
              "the sum of operators with different sizes: mtx_operator(\"" + path + "\", 4) has sizes (4,), "
              "kron(mass(6, 1)) has sizes (6,)");
  check_error(defs + "L = kron(mass(6, 1)) * A", 2, 22, 1, "the composition of operators with different sizes");
  check_error(defs + "L = A - kron(laplacian(4, float32))", 2, 7, 1,
              "the difference of operators with different value types: mtx_operator(\"" + path + "\", 4) is float64, "
              "kron(laplacian(4, float32)) is float32");
  check_error(defs + "(A + K).solve(ones())", 2, 9, 5, "cannot solve with A + K: it has an assembled operator");
  check_error(defs + "(2 * A).solve(ones())", 2, 9, 5, "use a Krylov solver: cg(A, b [, P])");
  check_error(defs + "A.solve(ones())", 2, 3, 5, "cannot solve with mtx_operator(");
  check_error(defs + "(K * A).inverse()", 2, 9, 7, "cannot invert K * A: it has an assembled operator");
  check_error(defs + "A.inverse()", 2, 3, 7, "cannot invert mtx_operator(");
  check_error(defs + "(A + K).pseudo_inverse(0)", 2, 9, 14, "cannot pseudo-invert A + K");
  check_error(defs + "A + ones()", 2, 3, 1, "cannot add a tensor to an operator");
  // A Kronecker product inverted inside a combination with A is fine (it is solved, A applied).
  BOOST_TEST(evaluate(defs + "(K.inverse() * A).apply(ones())").stages.at(0).op->has_assembled);
  // The limits count an assembled leaf as one term.
  std::string doubled = defs + "L = A\n";
  for (std::size_t k = 0; k < 64; ++k) doubled += "L = L + L\n";
  check_error(doubled + "L", 2 + 12, 7, 1, "too many terms: this operator would hold 8191");
  std::remove(path.c_str());
}

// Operator arithmetic counts what it builds: L = L + K many times stops at the limit, with an
// error at the statement that would pass it, and no recursion anywhere grows with the program
// (100000 rebindings, parsed and evaluated up to the error).
BOOST_AUTO_TEST_CASE(operator_limits_count_what_is_built) {
  using kronex::dsl::max_operator_terms;
  std::string sum = "K = kron(mass(8, 1))\nL = K\n";
  for (std::size_t k = 0; k < 100000; ++k) sum += "L = L + K\n";
  // K: 1; each L = L + K adds the sum and K: 1 + 2m > 4096 at m = 2048.
  check_error(sum + "L.solve(ones())", 2 + 2048, 7, 1,
              "too many terms: this operator would hold 4097 Kronecker products and combinations");
  // Scalar multiples count too; L = L + L doubles.
  std::string scaled = "K = kron(mass(8, 1))\nL = K\n";
  for (std::size_t k = 0; k < max_operator_terms + 100; ++k) scaled += "L = -L\n";
  check_error(scaled + "L", 2 + max_operator_terms, 5, 1, "too many terms");
  std::string doubled = "L = kron(mass(8, 1))\n";
  for (std::size_t k = 0; k < 64; ++k) doubled += "L = L + L\n";
  check_error(doubled + "L", 1 + 12, 7, 1, "too many terms: this operator would hold 8191");
  // Sums inside compositions inside sums nest the normalised tree: bounded too.
  std::string alternating = "K = kron(mass(8, 1))\nL = K\n";
  for (std::size_t k = 0; k < 1000; ++k) alternating += "L = L * K + K\n";
  check_error(alternating + "L", 2 + 32, 11, 1, "operator nested too deeply");
  // Up to the limit, a long sum evaluates (and its rebinding is linear: one node per line).
  std::string ok = "K = kron(mass(8, 1))\nL = K\n";
  for (std::size_t k = 0; k < 2047; ++k) ok += "L = L + K\n";
  const auto p = evaluate(ok + "L.apply(ones())");
  BOOST_TEST(p.stages.at(0).op->built == 4095u);
  // Labels of the partial sums in a long run are elided to their last operand (their full text
  // would cost the square of the run's length).
  std::string long_sum = "A = kron(laplacian(4)); B = kron(mass(6, 1))\nL = A";
  for (std::size_t k = 0; k < 300; ++k) long_sum += " + A";
  check_error(long_sum + " + B", 2, 1207, 1,
              "the sum of operators with different sizes: ... + A has sizes (4,), kron(mass(6, 1)) has sizes (6,)");
  // One flat expression with many terms nests no deeper than a short one.
  std::string flat = "K = kron(mass(8, 1))\nL = K";
  for (std::size_t k = 0; k < 1000; ++k) flat += " + K";
  BOOST_TEST(evaluate(flat + "\nL.apply(ones())").stages.at(0).op->built == 2001u);
}

// Releasing a deep combination must not recurse once per level: built here directly, past what
// the evaluator allows.
BOOST_AUTO_TEST_CASE(a_deep_combination_is_released_without_recursion) {
  auto leaf = std::make_shared<const operator_value>();
  std::shared_ptr<const operator_value> chain = leaf;
  for (std::size_t k = 0; k < 1000000; ++k) {
    auto v = std::make_shared<operator_value>();
    v->form = operator_form::sum;
    v->operands = {chain, leaf};
    chain = std::move(v);
  }
  std::weak_ptr<const operator_value> last = chain;
  chain.reset();
  BOOST_TEST(last.expired());
  BOOST_TEST(leaf.use_count() == 1);
}

BOOST_AUTO_TEST_CASE(named_arguments_and_krylov_calls) {
  // NAME = value inside a call's parentheses is a named argument node (newlines are blanks there).
  const auto p = kronex::dsl::parse("cg(A, b,\n  rtol = 1e-3)");
  const auto& call = *p.statements.at(0).value;
  BOOST_TEST(call.args.size() == 3u);
  BOOST_TEST((call.args[2]->what == kronex::dsl::node::kind::named));
  BOOST_TEST(call.args[2]->text == "rtol");
  BOOST_TEST((call.args[2]->args.at(0)->what == kronex::dsl::node::kind::number));
  BOOST_TEST(call.args[2]->name_where.line == 2u);
  BOOST_TEST(call.args[2]->name_where.column == 3u);
  // Only the Krylov solvers take them; elsewhere the error is at the name.
  check_error("mass(8, rtol=2)", 1, 9, 4, "named argument 'rtol=' is not taken here");
  check_error("kron(mass(8, 3), x=2)", 1, 18, 1, "named argument 'x=' is not taken here");
  check_error("kron(mass(8, 3)).solve(ones(), rtol=1)", 1, 32, 4, "named argument 'rtol=' is not taken here");
  check_error("cg(kron(mass(8, 3)), ones(), rtol=)", 1, 35, 1, "expected an expression");
  // The Krylov calls' own checks, on language operators (no file needed).
  const std::string K = "kron(mass(8, 3))";
  check_error("cg(" + K + ", ones(), maxiter=10, maxiter=5)", 1, 42, 7, "the option maxiter is given twice in cg");
  check_error("minres(" + K + ", ones(), restrt=5)", 1, 34, 6, "unknown option 'restrt' of minres");
  check_error("gmres(" + K + ", ones(), restrt=5)", 1, 33, 6, "(did you mean 'restart'?)");
  check_error("cg(" + K + ", ones(), atol=" + "\"x\"" + ")", 1, 35, 3, "atol must be a finite number >= 0, got a string");
  check_error("cg(" + K + ", ones(), " + K + ", " + K + ")", 1, 48, 16, "cg takes 2 or 3 arguments");
  check_error("cg(" + K + ", ones(), kron(mass(9, 3)))", 1, 30, 16, "shape mismatch: the preconditioner");
  check_error("cg(" + K + ", ones()).apply(ones())", 1, 1, 28, "'.apply' needs an operator");
  check_error("x = cg(" + K + ", ones())\n" + K + ".solve(x)", 2, 24, 1, "a Krylov solve must be the last statement");
  // A Krylov program: no stages, its operand, shape and type.
  const auto e = evaluate("cg(" + K + ", random(3), " + K + ".inverse(), rtol=1e-9, check_every=2)");
  BOOST_REQUIRE(e.krylov);
  BOOST_TEST(e.stages.empty());
  BOOST_TEST(e.runnable());
  BOOST_TEST(e.shape == (kronex::shape_t{8}));
  BOOST_TEST(e.krylov->options.rtol == 1e-9);
  BOOST_TEST(e.krylov->options.check_every == 2u);
  BOOST_TEST(!e.krylov->options.max_iterations);
  BOOST_TEST(e.krylov->P.text == K + ".inverse()");
}
