#pragma once
// Matrix Market files for the DSL's mtx("A.mtx"): the library's strict reader
// (kronex/io/matrix_market.hpp), which reports every problem as a file_error with the line, and
// the factor for a square matrix read from a file (its storage is the library's rule,
// kronex::factor_from_entries).
#include <complex>
#include <string>

#include <kronex/factors/any_factor.hpp>
#include <kronex/factors/from_entries.hpp>
#include <kronex/io/matrix_market.hpp>

namespace kronex::dsl::io {

// The reader is the library's (kronex/io/matrix_market.hpp): one reader for kronex and the DSL.
using kronex::io::matrix_market;
using kronex::io::max_line_bytes;
using kronex::io::max_stored_values;  // also the most values a factor built from a file may hold
using kronex::io::parse_matrix_market;
using kronex::io::read_matrix_market;

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
