// The Matrix Market reader of the DSL (dsl/io/matrix_market): every fixture against the dense
// matrix numpy saved from the same array (tests/dsl/data/make_fixtures.py), the whole header and
// body syntax, every error with its exact line, and the storage to_factor picks (diagonal,
// clamped band, periodic band, dense) with its values for all four value types.
#define BOOST_TEST_MODULE matrix_market
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/mpl/list.hpp>
#include <xtensor/xtensor.hpp>

#include "io/matrix_market.hpp"
#include "io/npy.hpp"
#include "core/diagnostics.hpp"

#include "kronex_test_support.hpp"

namespace {

using kronex::dsl::file_error;
using namespace kronex::dsl::io;
using cd = std::complex<double>;
using value_types = boost::mpl::list<float, double, std::complex<float>, std::complex<double>>;

std::string data(const std::string& file) {
  const char* dir = std::getenv("KRONEX_DSL_TEST_DATA");
  BOOST_REQUIRE_MESSAGE(dir, "KRONEX_DSL_TEST_DATA is not set (ctest sets it to tests/dsl/data)");
  return std::string(dir) + "/" + file;
}

matrix_market parse(const std::string& text) {
  std::istringstream in(text);
  return parse_matrix_market(in, "A.mtx");
}

// The exact message, which holds the line: "A.mtx", line N: reason.
void expect_parse_error(const std::string& text, std::size_t line, const std::string& reason) {
  try {
    parse(text);
  } catch (const file_error& e) {
    BOOST_TEST(e.line() == line);
    BOOST_TEST(e.path() == "A.mtx");
    BOOST_TEST(std::string(e.what()) == "\"A.mtx\", line " + std::to_string(line) + ": " + reason);
    return;
  } catch (const std::exception& e) {
    BOOST_ERROR("wrong exception type " << typeid(e).name() << ": " << e.what());
    return;
  }
  BOOST_ERROR("no error for:\n" << text);
}

xt::xtensor<cd, 2> dense_of(const matrix_market& m) {
  xt::xtensor<cd, 2> a = xt::zeros<cd>({m.rows, m.cols});
  for (const auto& e : m.entries) a(e.row, e.col) += e.value;
  return a;
}

xt::xtensor<cd, 2> truth(const std::string& name) {
  return convert<cd>(read_npy(data(name + "_dense.npy")), name + "_dense.npy");
}

template <class T>
T as(cd v) {
  if constexpr (kronex::value_traits<T>::is_complex) return T(kronex::real_t<T>(v.real()), kronex::real_t<T>(v.imag()));
  else return T(v.real());
}

// Any factor to_factor makes (diagonal, banded, dense) as a dense matrix.
template <class T>
xt::xtensor<T, 2> dense_of(const kronex::any_factor<T>& f) {
  const std::size_t n = f.size();
  xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
  std::visit([&](const auto& g) {
    using G = std::decay_t<decltype(g)>;
    if constexpr (std::is_same_v<G, kronex::diagonal_factor<T>>) {
      for (std::size_t i = 0; i < n; ++i) a(i, i) = g.values()[i];
    } else if constexpr (std::is_same_v<G, kronex::banded<T>>) {
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) a(i, j) = g(i, j);
    } else if constexpr (std::is_same_v<G, xt::xtensor<T, 2>>) {
      a = g;
    } else {
      BOOST_ERROR("to_factor made an identity or function factor");
    }
  }, f.get());
  return a;
}

enum class kind { diagonal, banded, dense };

template <class T>
kind kind_of(const kronex::any_factor<T>& f) {
  if (std::holds_alternative<kronex::diagonal_factor<T>>(f.get())) return kind::diagonal;
  if (std::holds_alternative<kronex::banded<T>>(f.get())) return kind::banded;
  BOOST_REQUIRE((std::holds_alternative<xt::xtensor<T, 2>>(f.get())));
  return kind::dense;
}

struct fixture_case {
  const char* name;
  const char* format;
  const char* field;
  const char* symmetry;
};

const fixture_case fixtures[] = {
    {"real_general", "coordinate", "real", "general"},
    {"real_symmetric", "coordinate", "real", "symmetric"},
    {"complex_general", "coordinate", "complex", "general"},
    {"complex_hermitian", "coordinate", "complex", "hermitian"},
    {"skew_symmetric", "coordinate", "real", "skew-symmetric"},
    {"integer", "coordinate", "integer", "general"},
    {"pattern", "coordinate", "pattern", "general"},
    {"array_general", "array", "real", "general"},
    {"array_symmetric", "array", "real", "symmetric"},
    {"array_skew", "array", "real", "skew-symmetric"},
    {"periodic_tridiagonal", "coordinate", "real", "general"},
    {"periodic_pentadiagonal", "coordinate", "real", "general"},
    {"periodic_complex", "coordinate", "complex", "general"},
    {"clamped_band", "coordinate", "real", "general"},
    {"wide_band", "coordinate", "real", "general"},
    {"diagonal", "coordinate", "real", "general"},
    {"dense", "coordinate", "real", "general"},
};

const char* const real_general = "%%MatrixMarket matrix coordinate real general\n";

} // namespace

// ---------------------------------------------------------------------------------------------
// Fixtures written by scipy.io.mmwrite: the entries equal numpy's dense matrix exactly.

BOOST_AUTO_TEST_CASE(fixtures_equal_the_dense_truth) {
  for (const auto& f : fixtures) {
    BOOST_TEST_CONTEXT(f.name) {
      const matrix_market m = read_matrix_market(data(std::string(f.name) + ".mtx"));
      BOOST_TEST(m.format == f.format);
      BOOST_TEST(m.field == f.field);
      BOOST_TEST(m.symmetry == f.symmetry);
      BOOST_TEST(m.is_complex == (m.field == "complex"));
      const auto expected = truth(f.name);
      BOOST_REQUIRE(m.rows == expected.shape()[0]);
      BOOST_REQUIRE(m.cols == expected.shape()[1]);
      BOOST_TEST((dense_of(m) == expected));
      // Each position once, sorted by (row, col), no zeros.
      for (std::size_t k = 0; k < m.entries.size(); ++k) {
        BOOST_TEST(m.entries[k].value != cd(0));
        if (k) {
          const auto& a = m.entries[k - 1];
          const auto& b = m.entries[k];
          BOOST_TEST((a.row < b.row || (a.row == b.row && a.col < b.col)));
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Syntax.

BOOST_AUTO_TEST_CASE(header_words_are_case_insensitive_and_stored_lower_case) {
  const auto m = parse("%%matrixmarket MATRIX Coordinate REAL Symmetric\n2 2 1\n2 1 3\n");
  BOOST_TEST(m.format == "coordinate");
  BOOST_TEST(m.field == "real");
  BOOST_TEST(m.symmetry == "symmetric");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{0, 3}, {3, 0}}));
}

BOOST_AUTO_TEST_CASE(comments_blank_lines_tabs_crlf_and_signs) {
  const auto m = parse(
      "%%MatrixMarket matrix coordinate real general\r\n"
      "% a comment\r\n"
      "\r\n"
      "   \t\r\n"
      "%another\r\n"
      "  2\t3   3  \r\n"
      "1 1 +1.5\r\n"
      "% a comment between entries\r\n"
      "\r\n"
      "2\t3\t-2.5e-1\r\n"
      "1 3 .5");  // no newline at the end
  BOOST_TEST(m.rows == 2);
  BOOST_TEST(m.cols == 3);
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{1.5, 0, 0.5}, {0, 0, -0.25}}));
}

BOOST_AUTO_TEST_CASE(values_parse_to_the_nearest_double) {
  // 0.1 and 1/3 to 17 digits read back as the nearest doubles (std::from_chars, no locale).
  const auto m = parse(std::string(real_general) + "1 2 2\n1 1 0.1\n1 2 3.3333333333333331e-01\n");
  BOOST_TEST(m.entries[0].value.real() == 0.1);
  BOOST_TEST(m.entries[1].value.real() == 1.0 / 3.0);
}

BOOST_AUTO_TEST_CASE(integer_pattern_and_complex_fields) {
  auto m = parse("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -7\n2 2 +9\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{-7, 0}, {0, 9}}));
  BOOST_TEST(!m.is_complex);
  m = parse("%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 1\n3 2\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{1, 0, 0}, {0, 0, 1}, {0, 1, 0}}));
  BOOST_TEST(!m.is_complex);
  m = parse("%%MatrixMarket matrix coordinate complex general\n1 2 2\n1 1 1 -2\n1 2 0 0.5\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{cd(1, -2), cd(0, 0.5)}}));
  BOOST_TEST(m.is_complex);
}

BOOST_AUTO_TEST_CASE(symmetric_skew_and_hermitian_are_expanded) {
  auto m = parse("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 1 -1\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{0, -4, 1}, {4, 0, 0}, {-1, 0, 0}}));
  m = parse("%%MatrixMarket matrix coordinate complex hermitian\n2 2 3\n1 1 2 0\n2 1 1 3\n2 2 -1 0\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{cd(2), cd(1, -3)}, {cd(1, 3), cd(-1)}}));
  // A real hermitian matrix is symmetric.
  m = parse("%%MatrixMarket matrix coordinate real hermitian\n2 2 1\n2 1 3\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{0, 3}, {3, 0}}));
}

BOOST_AUTO_TEST_CASE(array_format_is_column_major_and_stores_one_triangle) {
  auto m = parse("%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n4\n5\n6\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{1, 3, 5}, {2, 4, 6}}));
  BOOST_TEST(m.format == "array");
  // Lower triangle by columns: (1,1) (2,1) (3,1) (2,2) (3,2) (3,3).
  m = parse("%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{1, 2, 3}, {2, 4, 5}, {3, 5, 6}}));
  // Strictly lower: (2,1) (3,1) (3,2).
  m = parse("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{0, -1, -2}, {1, 0, -3}, {2, 3, 0}}));
  m = parse("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 5\n3 0\n");
  BOOST_TEST((dense_of(m) == xt::xtensor<cd, 2>{{cd(1), cd(2, -5)}, {cd(2, 5), cd(3)}}));
  // Zeros of an array are not entries.
  m = parse("%%MatrixMarket matrix array integer general\n2 2\n0\n0\n7\n0\n");
  BOOST_TEST(m.entries.size() == 1);
  // Sizes 0 and a 1 x 1 skew-symmetric array (no values) are valid files.
  BOOST_TEST(parse("%%MatrixMarket matrix array real general\n0 0\n").entries.empty());
  BOOST_TEST(parse("%%MatrixMarket matrix array real skew-symmetric\n1 1\n").entries.empty());
}

BOOST_AUTO_TEST_CASE(duplicates_are_summed_and_zeros_dropped) {
  const auto m = parse(std::string(real_general) +
                       "2 2 6\n1 1 1\n1 1 2\n2 2 0\n1 2 5\n1 2 -5\n2 1 0.5\n");
  BOOST_REQUIRE(m.entries.size() == 2);
  BOOST_TEST(m.entries[0].row == 0);
  BOOST_TEST(m.entries[0].col == 0);
  BOOST_TEST(m.entries[0].value == cd(3));
  BOOST_TEST(m.entries[1].row == 1);
  BOOST_TEST(m.entries[1].col == 0);
  BOOST_TEST(m.entries[1].value == cd(0.5));
}

// ---------------------------------------------------------------------------------------------
// Errors, each with the line where it is (the size line for missing entries).

BOOST_AUTO_TEST_CASE(banner_errors) {
  const std::string not_mm = "not a Matrix Market file (the first line must start with %%MatrixMarket)";
  expect_parse_error("", 1, "not a Matrix Market file (the file is empty)");
  expect_parse_error("hello\n", 1, not_mm);
  expect_parse_error("\n%%MatrixMarket matrix coordinate real general\n", 1, not_mm);
  expect_parse_error("%MatrixMarket matrix coordinate real general\n", 1, not_mm);
  expect_parse_error("%%MatrixMarket matrix coordinate real\n2 2 0\n", 1,
                     "the header line must be '%%MatrixMarket matrix <format> <field> <symmetry>', got 3 words after "
                     "%%MatrixMarket");
  expect_parse_error("%%MatrixMarket matrix coordinate real general extra\n", 1,
                     "the header line must be '%%MatrixMarket matrix <format> <field> <symmetry>', got 5 words after "
                     "%%MatrixMarket");
  expect_parse_error("%%MatrixMarket vector coordinate real general\n", 1,
                     "unsupported object 'vector' (only 'matrix' is supported)");
  expect_parse_error("%%MatrixMarket matrix Coo real general\n", 1, "unknown format 'Coo' (expected coordinate or array)");
  expect_parse_error("%%MatrixMarket matrix coordinate double general\n", 1,
                     "unknown field 'double' (expected real, complex, integer or pattern)");
  expect_parse_error("%%MatrixMarket matrix coordinate real upper\n", 1,
                     "unknown symmetry 'upper' (expected general, symmetric, skew-symmetric or hermitian)");
  expect_parse_error("%%MatrixMarket matrix array pattern general\n", 1,
                     "the field 'pattern' cannot be used with the 'array' format (an array lists every value)");
  expect_parse_error("%%MatrixMarket matrix coordinate pattern skew-symmetric\n", 1,
                     "a pattern matrix can only be general or symmetric, not skew-symmetric");
}

BOOST_AUTO_TEST_CASE(size_line_errors) {
  const std::string h = real_general;
  expect_parse_error(h + "% only a comment\n\n", 4, "the file ends before the size line (rows columns entries)");
  expect_parse_error("%%MatrixMarket matrix array real general\n", 2, "the file ends before the size line (rows columns)");
  expect_parse_error(h + "%\n3 3\n", 3, "expected 3 values on the size line (rows, columns, entries), got 2");
  expect_parse_error("%%MatrixMarket matrix array real general\n3 3 9\n", 2,
                     "expected 2 values on the size line (rows, columns), got 3");
  expect_parse_error(h + "3.5 3 1\n", 2, "the number of rows '3.5' is not a non-negative integer");
  expect_parse_error(h + "3 x 1\n", 2, "the number of columns 'x' is not a non-negative integer");
  expect_parse_error(h + "3 3 -1\n", 2, "the number of entries '-1' is negative");
  expect_parse_error(h + "99999999999999999999999 3 1\n", 2, "the number of rows '99999999999999999999999' is too large");
  expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n3 4 0\n", 2,
                     "a symmetric matrix must be square, the size line says 3 x 4");
  expect_parse_error("%%MatrixMarket matrix array complex hermitian\n2 1\n", 2,
                     "a hermitian matrix must be square, the size line says 2 x 1");
  // 2^14 x 2^14 + 1 values: refused before reading any (and nothing is allocated from it).
  expect_parse_error("%%MatrixMarket matrix array real general\n16384 16385\n", 2,
                     "an array of 16384 x 16385 values is too large (more than 268435456 values)");
  expect_parse_error("%%MatrixMarket matrix array real general\n18446744073709551615 18446744073709551615\n", 2,
                     "an array of 18446744073709551615 x 18446744073709551615 values is too large (more than "
                     "268435456 values)");
}

BOOST_AUTO_TEST_CASE(entry_errors) {
  const std::string h = std::string(real_general) + "% comment\n5 4 3\n";  // entries from line 4
  expect_parse_error(h + "1 1 1\n\n% c\n2 2\n", 7, "expected 3 values (row, column, value), got 2");
  expect_parse_error(h + "1 1 1 1\n", 4, "expected 3 values (row, column, value), got 4");
  expect_parse_error(h + "0 1 1\n", 4, "row index 0 is out of range: indices are 1-based and the matrix has 5 rows");
  expect_parse_error(h + "6 1 1\n", 4, "row index 6 is out of range: indices are 1-based and the matrix has 5 rows");
  expect_parse_error(h + "1 5 1\n", 4, "column index 5 is out of range: indices are 1-based and the matrix has 4 columns");
  expect_parse_error(h + "1 99999999999999999999999 1\n", 4,
                     "column index 99999999999999999999999 is out of range: indices are 1-based and the matrix has 4 "
                     "columns");
  expect_parse_error(h + "-1 1 1\n", 4, "row index '-1' is not a positive integer");
  expect_parse_error(h + "1.0 1 1\n", 4, "row index '1.0' is not a positive integer");
  expect_parse_error(h + "1 1 1.0x\n", 4, "value '1.0x' is not a number");
  expect_parse_error(h + "1 1 abc\n", 4, "value 'abc' is not a number");
  expect_parse_error(h + "1 1 1,5\n", 4, "value '1,5' is not a number");
  expect_parse_error(h + "1 1 ++1\n", 4, "value '++1' is not a number");
  expect_parse_error(h + "1 1 nan\n", 4, "value 'nan' is not a finite number");
  expect_parse_error(h + "1 1 -inf\n", 4, "value '-inf' is not a finite number");
  expect_parse_error(h + "1 1 1e999\n", 4, "value '1e999' is out of range for a double");
  expect_parse_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 1.5\n", 3,
                     "value '1.5' is not an integer (the field is 'integer')");
  expect_parse_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 1 99999999999999999999\n", 3,
                     "value '99999999999999999999' is out of range for a 64-bit integer");
  expect_parse_error("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1\n", 3,
                     "expected 4 values (row, column, real part, imaginary part), got 3");
  expect_parse_error("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 i\n", 3,
                     "imaginary part 'i' is not a number");
  expect_parse_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 1 1\n", 3,
                     "expected 2 values (row, column), got 3");
  expect_parse_error("%%MatrixMarket matrix array real general\n1 2\n1 2\n", 3, "expected 1 value, got 2");
  expect_parse_error("%%MatrixMarket matrix array complex general\n1 2\n1\n", 3,
                     "expected 2 values (real part, imaginary part), got 1");
}

BOOST_AUTO_TEST_CASE(entry_count_errors) {
  const std::string h = std::string(real_general) + "%\n3 3 2\n";
  expect_parse_error(h + "1 1 1\n", 3, "the size line announces 2 entries, but the file has only 1");
  expect_parse_error(std::string(real_general) + "3 3 1000000000000000000\n1 1 1\n", 2,
                     "the size line announces 1000000000000000000 entries, but the file has only 1");
  expect_parse_error(h + "1 1 1\n2 2 2\n%\n3 3 3\n", 7, "more entries than the 2 entries announced on line 3");
  expect_parse_error(std::string(real_general) + "3 3 1\n1 1 1\n2 2 2\n", 4, "more entries than the 1 entry announced on line 2");
  expect_parse_error(std::string(real_general) + "3 3 0\n1 1 1\n", 3, "more entries than the 0 entries announced on line 2");
  expect_parse_error("%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 2,
                     "a 2 x 2 array holds 4 values, but the file has only 3");
  expect_parse_error("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n4\n", 6,
                     "more values than announced: a symmetric 2 x 2 array stores 3 values (the lower triangle) "
                     "(size on line 2)");
  expect_parse_error("%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n", 2,
                     "a skew-symmetric 3 x 3 array stores 3 values (the strictly lower triangle), but the file has "
                     "only 1");
}

BOOST_AUTO_TEST_CASE(triangle_errors) {
  expect_parse_error("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 3 2\n", 4,
                     "entry (1, 3) is above the diagonal; a symmetric file stores only the lower triangle");
  expect_parse_error("%%MatrixMarket matrix coordinate complex hermitian\n3 3 1\n2 3 1 1\n", 3,
                     "entry (2, 3) is above the diagonal; a hermitian file stores only the lower triangle");
  expect_parse_error("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n3 3 0\n", 4,
                     "entry (3, 3) is on the diagonal; a skew-symmetric file stores only the strictly lower "
                     "triangle (its diagonal is zero)");
  expect_parse_error("%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 1\n1 2 1\n", 3,
                     "entry (1, 2) is above the diagonal; a skew-symmetric file stores only the strictly lower "
                     "triangle");
  expect_parse_error("%%MatrixMarket matrix coordinate complex hermitian\n2 2 1\n2 2 1 0.5\n", 3,
                     "diagonal entry (2, 2) = (1, 0.5) is not real; a hermitian matrix has a real diagonal");
  expect_parse_error("%%MatrixMarket matrix array complex hermitian\n2 2\n1 0\n2 5\n3 -1\n", 5,
                     "diagonal entry (2, 2) = (3, -1) is not real; a hermitian matrix has a real diagonal");
}

BOOST_AUTO_TEST_CASE(file_errors) {
  kronex_test::expect_error<file_error>([] { read_matrix_market(data("no_such_file.mtx")); },
                                        {"no_such_file.mtx\": no such file"});
  kronex_test::expect_error<file_error>([] { read_matrix_market(data("")); }, {"is a directory, not a Matrix Market file"});
  // A file that is not a Matrix Market file: the path and line 1.
  kronex_test::expect_error<file_error>([] { read_matrix_market(data("f64_2d.npy")); },
                                        {"f64_2d.npy\", line 1: not a Matrix Market file"});
}

// ---------------------------------------------------------------------------------------------
// Storage: diagonal, clamped band, periodic band, dense.

BOOST_AUTO_TEST_CASE(narrowest_band_in_memory) {
  const auto band = [](const std::string& body) { return narrowest_band(parse(std::string(real_general) + body)); };
  // A plain tridiagonal: the periodic band is not narrower, so clamped.
  auto b = band("4 4 4\n1 1 1\n1 2 1\n2 1 1\n4 4 1\n");
  BOOST_TEST((b.kl == 1 && b.ku == 1 && b.bc == kronex::boundary::clamped));
  // A cyclic shift: clamped kl=3, ku=1; periodic kl=0, ku=1.
  b = band("4 4 4\n1 2 1\n2 3 1\n3 4 1\n4 1 1\n");
  BOOST_TEST((b.kl == 0 && b.ku == 1 && b.bc == kronex::boundary::periodic));
  // A lower bidiagonal with the corner (1, 8): clamped kl=1, ku=7; the corner's offset +7 is
  // -1 modulo 8, so the periodic band is kl=1, ku=0.
  b = band("8 8 3\n1 8 1\n2 1 1\n8 7 1\n");
  BOOST_TEST((b.kl == 1 && b.ku == 0 && b.bc == kronex::boundary::periodic));
  // Full 3 x 3: clamped kl=ku=2; the periodic band (1, 1) wraps around and holds it all.
  b = band("3 3 3\n1 3 1\n3 1 1\n2 2 1\n");
  BOOST_TEST((b.kl == 1 && b.ku == 1 && b.bc == kronex::boundary::periodic));
  // Full 2 x 2: a periodic lower bidiagonal (kl=1, ku=0) is narrower than clamped (1, 1).
  b = band("2 2 2\n1 2 1\n2 1 1\n");
  BOOST_TEST((b.kl == 1 && b.ku == 0 && b.bc == kronex::boundary::periodic));
  // No entries, and a 1 x 1.
  b = band("3 3 0\n");
  BOOST_TEST((b.kl == 0 && b.ku == 0 && b.bc == kronex::boundary::clamped));
  b = band("1 1 1\n1 1 5\n");
  BOOST_TEST((b.kl == 0 && b.ku == 0));
  BOOST_CHECK_THROW(narrowest_band(parse(std::string(real_general) + "2 3 0\n")), kronex::invalid_factor);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(storage_of_the_fixtures, T, value_types) {
  struct expected_storage {
    const char* name;
    kind k;
    std::size_t kl, ku;
    kronex::boundary bc;
  };
  using kronex::boundary;
  const expected_storage cases[] = {
      {"diagonal", kind::diagonal, 0, 0, boundary::clamped},
      {"clamped_band", kind::banded, 2, 1, boundary::clamped},            // width 4 <= 9/2
      {"periodic_tridiagonal", kind::banded, 1, 1, boundary::periodic},   // width 3 <= 8/2
      {"periodic_pentadiagonal", kind::banded, 2, 2, boundary::periodic}, // width 5 <= 10/2
      {"periodic_complex", kind::banded, 1, 2, boundary::periodic},       // width 4 <= 9/2
      {"wide_band", kind::dense, 1, 2, boundary::clamped},                // width 4 > 7/2
      // Offsets j-i mod 6 take every residue 1..5: clamped (5, 5), periodic kl=6-3, ku=2 (ties: smaller max).
      {"dense", kind::dense, 3, 2, boundary::periodic},
  };
  for (const auto& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const matrix_market m = read_matrix_market(data(std::string(c.name) + ".mtx"));
      const band_shape b = narrowest_band(m);
      BOOST_TEST(b.kl == c.kl);
      BOOST_TEST(b.ku == c.ku);
      BOOST_TEST((b.bc == c.bc));
      if (m.is_complex && !kronex::value_traits<T>::is_complex) continue;  // see to_factor_errors
      const kronex::any_factor<T> f = to_factor<T>(m, c.name);
      BOOST_TEST((kind_of(f) == c.k));
      if (c.k == kind::banded) {
        const auto& g = std::get<kronex::banded<T>>(f.get());
        BOOST_TEST(g.lower() == c.kl);
        BOOST_TEST(g.upper() == c.ku);
        BOOST_TEST((g.boundary_condition() == c.bc));
      }
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(to_factor_values_equal_the_dense_truth, T, value_types) {
  for (const auto& c : fixtures) {
    const matrix_market m = read_matrix_market(data(std::string(c.name) + ".mtx"));
    if (m.rows != m.cols || (m.is_complex && !kronex::value_traits<T>::is_complex)) continue;
    BOOST_TEST_CONTEXT(c.name) {
      const auto expected = truth(c.name);
      xt::xtensor<T, 2> want = xt::xtensor<T, 2>::from_shape(expected.shape());
      std::transform(expected.begin(), expected.end(), want.begin(), as<T>);
      BOOST_TEST((dense_of(to_factor<T>(m, c.name)) == want));
    }
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(storage_thresholds_in_memory, T, value_types) {
  const auto factor = [](const std::string& body) { return to_factor<T>(parse(std::string(real_general) + body), "A.mtx"); };
  // Tridiagonal: width 3 > 5/2 -> dense; 3 <= 6/2 -> banded.
  BOOST_TEST((kind_of(factor("5 5 2\n1 2 1\n2 1 1\n")) == kind::dense));
  BOOST_TEST((kind_of(factor("6 6 2\n1 2 1\n2 1 1\n")) == kind::banded));
  // A zero matrix is diagonal (of zeros); 1 x 1 is diagonal.
  BOOST_TEST((kind_of(factor("3 3 0\n")) == kind::diagonal));
  const auto one = factor("1 1 1\n1 1 2.5\n");
  BOOST_TEST((kind_of(one) == kind::diagonal));
  BOOST_TEST((dense_of(one)(0, 0) == T(2.5)));
  // A cyclic shift of 4: periodic kl=0, ku=1, width 2 <= 2.
  const auto shift = factor("4 4 4\n1 2 1\n2 3 2\n3 4 3\n4 1 4\n");
  BOOST_REQUIRE((kind_of(shift) == kind::banded));
  BOOST_TEST(std::get<kronex::banded<T>>(shift.get()).periodic());
  BOOST_TEST((dense_of(shift) == xt::xtensor<T, 2>{{0, 1, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 3}, {4, 0, 0, 0}}));
}

BOOST_AUTO_TEST_CASE_TEMPLATE(to_factor_errors, T, value_types) {
  const auto expect = [](const matrix_market& m, const std::string& message) {
    kronex_test::expect_error<file_error>([&] { to_factor<T>(m, "A.mtx"); }, {"\"A.mtx\": " + message});
  };
  expect(parse(std::string(real_general) + "2 3 0\n"), "a factor must be a square matrix, this one is 2 x 3");
  expect(parse(std::string(real_general) + "0 0 0\n"), "the matrix is empty (0 x 0)");
  // 2^29 x 2^29 with one diagonal entry: refused before allocating 2^29 values.
  expect(parse(std::string(real_general) + "536870912 536870912 1\n1 1 1\n"),
         "a 536870912 x 536870912 factor stored as a diagonal needs 536870912 values, more than the limit of 268435456");
  // Offsets +19999 and -19999: the narrowest band (periodic, kl=20001) is too wide, so dense.
  expect(parse(std::string(real_general) + "40000 40000 2\n1 20000 1\n20000 1 1\n"),
         "a 40000 x 40000 factor stored dense needs 1600000000 values, more than the limit of 268435456");
  const auto c = parse("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1 0\n");
  if constexpr (kronex::value_traits<T>::is_complex) {
    BOOST_TEST((dense_of(to_factor<T>(c, "A.mtx")) == xt::xtensor<T, 2>{{1, 0}, {0, 0}}));
  } else {
    expect(c, "has complex entries; ask for complex64 or complex128");
  }
  if constexpr (std::is_same_v<kronex::real_t<T>, float>) {
    expect(parse(std::string(real_general) + "2 2 1\n2 2 1e300\n"),
           std::string("entry (2, 2) = 1.0000000000000001e+300 does not fit in ") + kronex::value_traits<T>::name);
  }
}
