#include "io/matrix_market.hpp"

#include <string>
#include <vector>

#include <kronex/core/value_traits.hpp>

#include "core/diagnostics.hpp"

namespace kronex::dsl::io {

// The reader is the library's (kronex/io/matrix_market.hpp); this file is the storage choice for
// factors read from files.

band_shape narrowest_band(const matrix_market& m) {
  if (m.rows != m.cols) {
    throw kronex::invalid_factor("kronex::dsl::io::narrowest_band: the matrix must be square, it is " +
                                 std::to_string(m.rows) + " x " + std::to_string(m.cols));
  }
  return kronex::choose_storage(m.rows, m.entries).band;
}

template <class T>
kronex::any_factor<T> to_factor(const matrix_market& m, const std::string& name) {
  const std::string shape = std::to_string(m.rows) + " x " + std::to_string(m.cols);
  if (m.rows != m.cols) throw file_error(name, 0, "a factor must be a square matrix, this one is " + shape);
  if (m.rows == 0) throw file_error(name, 0, "the matrix is empty (" + shape + ")");
  if (m.is_complex && !kronex::value_traits<T>::is_complex)
    throw file_error(name, 0, "has complex entries; ask for complex64 or complex128");

  const std::size_t n = m.rows;
  const std::vector<kronex::entry<T>> entries = kronex::io::entries_as<T>(m, name);
  // The storage is the library's choice; checked against the limit before anything is allocated.
  const kronex::factor_storage s = kronex::choose_storage(n, entries);
  if (s.stored_values() > max_stored_values) {
    const char* how = s.kind == kronex::factor_kind::diagonal ? "as a diagonal"
                    : s.kind == kronex::factor_kind::banded   ? "as a band"
                                                              : "dense";
    throw file_error(name, 0, "a " + shape + " factor stored " + how + " needs " + std::to_string(s.stored_values()) +
                                  " values, more than the limit of " + std::to_string(max_stored_values));
  }
  return kronex::factor_from_entries(s, entries);
}

template kronex::any_factor<float> to_factor<float>(const matrix_market&, const std::string&);
template kronex::any_factor<double> to_factor<double>(const matrix_market&, const std::string&);
template kronex::any_factor<std::complex<float>> to_factor<std::complex<float>>(const matrix_market&, const std::string&);
template kronex::any_factor<std::complex<double>> to_factor<std::complex<double>>(const matrix_market&, const std::string&);

} // namespace kronex::dsl::io
