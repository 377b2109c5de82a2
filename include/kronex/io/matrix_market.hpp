#pragma once
// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html): a strict reader that
// reports every problem as a kronex::file_error with the line. kronex reads its matrices with it:
// kronex::sparse_operator<T>::read_matrix_market (operators/sparse_operator.hpp) and the kronex
// command's mtx("A.mtx") factors (dsl/io/matrix_market.hpp).
//
// The reader never allocates from a count announced in the file: entries are appended as they
// are read, so a file that claims 10^18 entries fails with "announces ..., has only ..." instead
// of exhausting memory.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <istream>
#include <limits>
#include <locale>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "../factors/finite.hpp"
#include "../factors/from_entries.hpp"
#include "regular_file.hpp"

namespace kronex::io {

// The most values one array-format file may hold (2^28, 2 GiB of doubles): a guard against sizes
// no one means to read, typed or fuzzed.
inline constexpr std::size_t max_stored_values = std::size_t(1) << 28;

// The longest line the reader takes (the format's lines are short; this bounds a file with no
// newline, such as one full of zeros).
inline constexpr std::size_t max_line_bytes = std::size_t(1) << 20;

struct matrix_market {
  std::size_t rows = 0, cols = 0;
  bool is_complex = false;              // field "complex"; real/integer/pattern are not complex
  std::string format, field, symmetry;  // header words, lower case: coordinate|array,
                                        // real|complex|integer|pattern,
                                        // general|symmetric|skew-symmetric|hermitian
  using entry = kronex::entry<std::complex<double>>;  // 0-based
  // kronex::canonical_entries: sorted by (row, col), each position once, duplicates summed (as
  // scipy does), zeros (explicit or summed) dropped; symmetric, skew-symmetric and hermitian files
  // are expanded to both triangles first.
  std::vector<entry> entries;
};

} // namespace kronex::io

namespace kronex::detail::mm {

using entry = kronex::entry<std::complex<double>>;

// ASCII only: the header words are ASCII, and std::tolower would depend on the global locale.
inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

inline void split(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const std::size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
}

inline std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

// Shortest text that reads back as the same double, in the C locale.
inline std::string number(double v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(17);
  os << v;
  return os.str();
}

inline std::string value_text(std::complex<double> v, bool complex_field) {
  return complex_field ? "(" + number(v.real()) + ", " + number(v.imag()) + ")" : number(v.real());
}

inline std::string plural(std::size_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

// a * b, saturating at SIZE_MAX (sizes come from the file and may be anything).
inline std::size_t mul_sat(std::size_t a, std::size_t b) {
  if (a != 0 && b > std::numeric_limits<std::size_t>::max() / a) return std::numeric_limits<std::size_t>::max();
  return a * b;
}

// from_chars does not take a leading '+'; Matrix Market writers (Fortran, C printf "%+g") do.
inline std::string_view drop_plus(std::string_view t) {
  return t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+' ? t.substr(1) : t;
}

// Reads lines, counts them (1-based) and throws file_error at the current line.
class line_reader {
public:
  line_reader(std::istream& in, const std::string& name) : m_in(in), m_name(name) {}

  // Like std::getline, but a line longer than io::max_line_bytes is an error at that line rather
  // than a string growing until memory runs out (a file of zeros has no newline).
  bool next() {
    m_line.clear();
    std::streambuf* in = m_in.rdbuf();
    bool any = false;
    for (int c; (c = in ? in->sbumpc() : EOF) != EOF;) {
      any = true;
      if (c == '\n') break;
      if (m_line.size() == io::max_line_bytes) {
        fail_at(m_number + 1, "the line is longer than the limit of " + std::to_string(io::max_line_bytes) + " bytes");
      }
      m_line.push_back(char(c));
    }
    if (!any) return false;
    ++m_number;
    return true;
  }
  // The next line that is neither blank nor a comment, split into words.
  bool next_data(std::vector<std::string_view>& words) {
    while (next()) {
      split(m_line, words);
      if (!words.empty() && words[0][0] != '%') return true;
    }
    return false;
  }
  const std::string& text() const noexcept { return m_line; }
  std::size_t number() const noexcept { return m_number; }
  [[noreturn]] void fail(const std::string& reason) const { fail_at(m_number, reason); }
  [[noreturn]] void fail_at(std::size_t line, const std::string& reason) const { throw file_error(m_name, line, reason); }

private:
  std::istream& m_in;
  const std::string& m_name;
  std::string m_line;
  std::size_t m_number = 0;
};

// A count on the size line: a non-negative integer.
inline std::size_t parse_count(const line_reader& r, std::string_view t, const char* what) {
  if (!t.empty() && t[0] == '-') r.fail(std::string(what) + " " + quoted(t) + " is negative");
  t = drop_plus(t);
  std::size_t v = 0;
  const auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range && p == t.data() + t.size())
    r.fail(std::string(what) + " " + quoted(t) + " is too large");
  if (ec != std::errc() || p != t.data() + t.size())
    r.fail(std::string(what) + " " + quoted(t) + " is not a non-negative integer");
  return v;
}

// A 1-based index in 1..limit, returned 0-based.
inline std::size_t parse_index(const line_reader& r, std::string_view t, const char* what, std::size_t limit, const char* unit) {
  const std::string_view s = drop_plus(t);
  std::size_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  const bool digits = ec != std::errc::invalid_argument && p == s.data() + s.size();
  if (!digits) r.fail(std::string(what) + " " + quoted(t) + " is not a positive integer");
  if (ec == std::errc::result_out_of_range || v == 0 || v > limit) {
    r.fail(std::string(what) + " " + std::string(t) + " is out of range: indices are 1-based and the matrix has " +
           plural(limit, unit));
  }
  return v - 1;
}

inline double parse_real(const line_reader& r, std::string_view t, const char* what) {
  const std::string_view s = drop_plus(t);
  double v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::invalid_argument || p != s.data() + s.size())
    r.fail(std::string(what) + " " + quoted(t) + " is not a number");
  if (ec == std::errc::result_out_of_range) r.fail(std::string(what) + " " + quoted(t) + " is out of range for a double");
  // A factor with inf or nan in it cannot be solved with; say so here, where the line is known.
  if (!std::isfinite(v)) r.fail(std::string(what) + " " + quoted(t) + " is not a finite number");
  return v;
}

inline double parse_integer(const line_reader& r, std::string_view t, const char* what) {
  const std::string_view s = drop_plus(t);
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::invalid_argument || p != s.data() + s.size())
    r.fail(std::string(what) + " " + quoted(t) + " is not an integer (the field is 'integer')");
  if (ec == std::errc::result_out_of_range) r.fail(std::string(what) + " " + quoted(t) + " is out of range for a 64-bit integer");
  return double(v);
}

struct header {
  bool coordinate = true;
  enum class field_kind { real, complex, integer, pattern } field = field_kind::real;
  enum class symmetry_kind { general, symmetric, skew, hermitian } symmetry = symmetry_kind::general;
};

// Line 1: "%%MatrixMarket matrix <format> <field> <symmetry>", words case-insensitive.
inline header read_banner(line_reader& r, std::vector<std::string_view>& w, io::matrix_market& m) {
  const char* const not_mm = "not a Matrix Market file (the first line must start with %%MatrixMarket)";
  if (!r.next()) r.fail_at(1, "not a Matrix Market file (the file is empty)");
  split(r.text(), w);
  if (w.empty() || lower(w[0]) != "%%matrixmarket") r.fail(not_mm);
  if (w.size() != 5) {
    r.fail("the header line must be '%%MatrixMarket matrix <format> <field> <symmetry>', got " +
           plural(w.size() - 1, "word") + " after %%MatrixMarket");
  }
  if (lower(w[1]) != "matrix") r.fail("unsupported object " + quoted(w[1]) + " (only 'matrix' is supported)");

  header h;
  m.format = lower(w[2]);
  m.field = lower(w[3]);
  m.symmetry = lower(w[4]);
  if (m.format == "coordinate") h.coordinate = true;
  else if (m.format == "array") h.coordinate = false;
  else r.fail("unknown format " + quoted(w[2]) + " (expected coordinate or array)");

  using F = header::field_kind;
  if (m.field == "real") h.field = F::real;
  else if (m.field == "complex") h.field = F::complex;
  else if (m.field == "integer") h.field = F::integer;
  else if (m.field == "pattern") h.field = F::pattern;
  else r.fail("unknown field " + quoted(w[3]) + " (expected real, complex, integer or pattern)");

  using S = header::symmetry_kind;
  if (m.symmetry == "general") h.symmetry = S::general;
  else if (m.symmetry == "symmetric") h.symmetry = S::symmetric;
  else if (m.symmetry == "skew-symmetric") h.symmetry = S::skew;
  else if (m.symmetry == "hermitian") h.symmetry = S::hermitian;
  else r.fail("unknown symmetry " + quoted(w[4]) + " (expected general, symmetric, skew-symmetric or hermitian)");

  if (h.field == F::pattern && !h.coordinate)
    r.fail("the field 'pattern' cannot be used with the 'array' format (an array lists every value)");
  // A pattern entry means "1": its mirror under skew symmetry (-1) or conjugation is not a pattern.
  if (h.field == F::pattern && (h.symmetry == S::skew || h.symmetry == S::hermitian))
    r.fail("a pattern matrix can only be general or symmetric, not " + m.symmetry);
  m.is_complex = h.field == F::complex;
  return h;
}

// How many numbers a line holds, and what they are, for the messages.
inline std::size_t values_per_line(const header& h, std::string& names) {
  using F = header::field_kind;
  if (h.coordinate) {
    switch (h.field) {
      case F::pattern: names = "(row, column)"; return 2;
      case F::complex: names = "(row, column, real part, imaginary part)"; return 4;
      case F::real:
      case F::integer: break;
    }
    names = "(row, column, value)";
    return 3;
  }
  if (h.field == F::complex) { names = "(real part, imaginary part)"; return 2; }
  names.clear();
  return 1;
}

inline std::complex<double> parse_value(const line_reader& r, const header& h, const std::vector<std::string_view>& w,
                                 std::size_t first) {
  using F = header::field_kind;
  switch (h.field) {
    case F::pattern: return 1.0;
    case F::integer: return parse_integer(r, w[first], "value");
    case F::complex: return {parse_real(r, w[first], "real part"), parse_real(r, w[first + 1], "imaginary part")};
    case F::real: break;
  }
  return parse_real(r, w[first], "value");
}

// Symmetric, skew-symmetric and hermitian files hold one triangle; the checks that it is the
// right one, with the entry 1-based as in the file.
inline void check_triangle(const line_reader& r, const header& h, const std::string& symmetry, std::size_t i, std::size_t j,
                    std::complex<double> v) {
  using S = header::symmetry_kind;
  if (h.symmetry == S::general) return;
  const std::string at = "(" + std::to_string(i + 1) + ", " + std::to_string(j + 1) + ")";
  if (h.symmetry == S::skew) {
    if (i == j)
      r.fail("entry " + at + " is on the diagonal; a skew-symmetric file stores only the strictly lower triangle "
             "(its diagonal is zero)");
    if (i < j) r.fail("entry " + at + " is above the diagonal; a skew-symmetric file stores only the strictly lower triangle");
    return;
  }
  if (i < j) r.fail("entry " + at + " is above the diagonal; a " + symmetry + " file stores only the lower triangle");
  if (h.symmetry == S::hermitian && i == j && v.imag() != 0)
    r.fail("diagonal entry " + at + " = " + value_text(v, true) + " is not real; a hermitian matrix has a real diagonal");
}

// Mirrors the stored triangle, then sums duplicates, drops zeros and sorts by (row, col).
inline void finish(std::vector<entry>& e, const header& h) {
  using S = header::symmetry_kind;
  if (h.symmetry != S::general) {
    const std::size_t stored = e.size();
    for (std::size_t k = 0; k < stored; ++k) {
      const entry x = e[k];
      if (x.row == x.col) continue;
      const std::complex<double> v = h.symmetry == S::skew ? -x.value
                                   : h.symmetry == S::hermitian ? std::conj(x.value) : x.value;
      e.push_back({x.col, x.row, v});
    }
  }
  e = kronex::canonical_entries(std::move(e));
}

} // namespace kronex::detail::mm

namespace kronex::io {

// Reads a Matrix Market file from `in`; `name` is the file name used in messages. Comment lines
// ('%') and blank lines may appear anywhere after line 1; a real or integer "hermitian" file is
// read as symmetric; symmetric files must hold only their lower triangle (an entry above it is an
// error rather than a silent doubling).
inline matrix_market parse_matrix_market(std::istream& in, const std::string& name) {
  using namespace detail::mm;
  using S = header::symmetry_kind;
  line_reader r(in, name);
  std::vector<std::string_view> w;  // views into the current line
  matrix_market m;
  const header h = read_banner(r, w, m);

  // The size line: "rows cols nnz" (coordinate) or "rows cols" (array).
  if (!r.next_data(w)) {
    r.fail_at(r.number() + 1, std::string("the file ends before the size line (") +
                                  (h.coordinate ? "rows columns entries" : "rows columns") + ")");
  }
  const std::size_t size_line = r.number();
  if (w.size() != (h.coordinate ? 3u : 2u)) {
    r.fail(std::string("expected ") + (h.coordinate ? "3 values on the size line (rows, columns, entries)"
                                                    : "2 values on the size line (rows, columns)") +
           ", got " + std::to_string(w.size()));
  }
  m.rows = parse_count(r, w[0], "the number of rows");
  m.cols = parse_count(r, w[1], "the number of columns");
  const std::string shape = std::to_string(m.rows) + " x " + std::to_string(m.cols);
  if (h.symmetry != S::general && m.rows != m.cols) r.fail("a " + m.symmetry + " matrix must be square, the size line says " + shape);

  // How many entries (coordinate) or values (array) follow, and the words to describe it.
  std::size_t expected = 0;
  std::string announced;
  if (h.coordinate) {
    expected = parse_count(r, w[2], "the number of entries");
    announced = expected == 1 ? "1 entry" : std::to_string(expected) + " entries";
  } else {
    const std::size_t total = mul_sat(m.rows, m.cols);
    if (total > max_stored_values) {
      r.fail("an array of " + shape + " values is too large (more than " + std::to_string(max_stored_values) +
             " values)");
    }
    const std::size_t n = m.rows;
    if (h.symmetry == S::general) {
      expected = total;
      announced = "a " + shape + " array holds " + plural(expected, "value");
    } else if (h.symmetry == S::skew) {
      expected = n == 0 ? 0 : n * (n - 1) / 2;
      announced = "a skew-symmetric " + shape + " array stores " + plural(expected, "value") + " (the strictly lower triangle)";
    } else {
      expected = n * (n + 1) / 2;
      announced = "a " + m.symmetry + " " + shape + " array stores " + plural(expected, "value") + " (the lower triangle)";
    }
  }

  std::string names;
  const std::size_t per_line = values_per_line(h, names);
  // Reserve only a little: `expected` comes from the file and may be a lie.
  m.entries.reserve(std::min<std::size_t>(expected, 4096));

  // Array position, column-major; symmetric arrays walk the lower triangle of each column.
  const std::size_t skip = h.symmetry == S::skew ? 1 : 0;
  const auto first_row = [&](std::size_t col) { return h.symmetry == S::general ? 0 : col + skip; };
  std::size_t ai = first_row(0), aj = 0;

  std::size_t count = 0;
  while (r.next_data(w)) {
    if (count == expected) {
      if (h.coordinate) r.fail("more entries than the " + announced + " announced on line " + std::to_string(size_line));
      r.fail("more values than announced: " + announced + " (size on line " + std::to_string(size_line) + ")");
    }
    if (w.size() != per_line) {
      r.fail("expected " + plural(per_line, "value") + (names.empty() ? "" : " " + names) + ", got " +
             std::to_string(w.size()));
    }
    std::size_t i = ai, j = aj;
    if (h.coordinate) {
      i = parse_index(r, w[0], "row index", m.rows, "row");
      j = parse_index(r, w[1], "column index", m.cols, "column");
    }
    const std::complex<double> v = parse_value(r, h, w, h.coordinate ? 2 : 0);
    check_triangle(r, h, m.symmetry, i, j, v);
    if (v != 0.0) m.entries.push_back({i, j, v});
    ++count;
    if (!h.coordinate && ++ai >= m.rows) ai = first_row(++aj);
  }
  if (count < expected) {
    if (h.coordinate) r.fail_at(size_line, "the size line announces " + announced + ", but the file has only " + std::to_string(count));
    r.fail_at(size_line, announced + ", but the file has only " + std::to_string(count));
  }
  finish(m.entries, h);
  return m;
}

// Opens `path` (file_error, line 0, if it is not a regular file or cannot be opened) and parses it.
inline matrix_market read_matrix_market(const std::string& path) {
  check_regular_file(path, "a Matrix Market file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, 0, "cannot be opened for reading");
  return parse_matrix_market(in, path);
}

// The file's entries in value type T, for a caller that has checked the field (a complex file for
// a real T is its error to word): file_error (line 0, path `name`) for an entry T cannot hold
// (a float overflow; the file's values are finite doubles).
template <class T>
std::vector<kronex::entry<T>> entries_as(const matrix_market& m, const std::string& name) {
  std::vector<kronex::entry<T>> entries;
  entries.reserve(m.entries.size());
  for (const matrix_market::entry& e : m.entries) {
    T v;
    if constexpr (value_traits<T>::is_complex) v = T(real_t<T>(e.value.real()), real_t<T>(e.value.imag()));
    else v = T(e.value.real());
    if (!detail::is_finite_value(v)) {
      throw file_error(name, 0, "entry (" + std::to_string(e.row + 1) + ", " + std::to_string(e.col + 1) + ") = " +
                                    detail::mm::value_text(e.value, m.is_complex) + " does not fit in " +
                                    value_traits<T>::name);
    }
    entries.push_back({e.row, e.col, v});
  }
  return entries;
}

} // namespace kronex::io
