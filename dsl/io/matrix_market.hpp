#pragma once
// Matrix Market files (https://math.nist.gov/MatrixMarket/formats.html) for the DSL's mtx("A.mtx"):
// a strict reader that reports every problem as a file_error with the line, and the factor for a
// square matrix read from a file (its storage is the library's rule, kronex::factor_from_entries).
//
// The reader never allocates from a count announced in the file: entries are appended as they
// are read, so a file that claims 10^18 entries fails with "announces ..., has only ..." instead
// of exhausting memory.
#include <complex>
#include <cstddef>
#include <istream>
#include <string>
#include <vector>

#include <kronex/factors/any_factor.hpp>
#include <kronex/factors/from_entries.hpp>

namespace kronex::dsl::io {

// The most values one array-format file, or one factor built from a file, may hold (2^28, 2 GiB of
// doubles): a guard against sizes no 1D factor needs, typed or fuzzed.
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

// Reads a Matrix Market file from `in`; `name` is the file name used in messages. Comment lines
// ('%') and blank lines may appear anywhere after line 1; a real or integer "hermitian" file is
// read as symmetric; symmetric files must hold only their lower triangle (an entry above it is an
// error rather than a silent doubling).
matrix_market parse_matrix_market(std::istream& in, const std::string& name);
// Opens `path` (file_error, line 0, if it cannot be opened) and parses it.
matrix_market read_matrix_market(const std::string& path);

// The narrowest band holding every entry of a square matrix, as kronex::choose_storage finds it:
// clamped, or periodic when that is strictly narrower. kl = ku = 0 means diagonal (or no entries).
using band_shape = kronex::band_shape;
band_shape narrowest_band(const matrix_market& m);  // throws kronex::error unless square

// The factor for a square matrix from a file, in the storage kronex::factor_from_entries chooses
// (diagonal, clamped or periodic band, dense). file_error (line 0, path `name`) if the matrix is
// not square, is empty, is complex and T is real, has a value T cannot hold, or would store more
// than max_stored_values values.
template <class T>
kronex::any_factor<T> to_factor(const matrix_market& m, const std::string& name);

extern template kronex::any_factor<float> to_factor<float>(const matrix_market&, const std::string&);
extern template kronex::any_factor<double> to_factor<double>(const matrix_market&, const std::string&);
extern template kronex::any_factor<std::complex<float>> to_factor<std::complex<float>>(const matrix_market&, const std::string&);
extern template kronex::any_factor<std::complex<double>> to_factor<std::complex<double>>(const matrix_market&, const std::string&);

} // namespace kronex::dsl::io
