#pragma once
// NumPy .npy files for the DSL's npy("b.npy") and for writing results: the four kronex value types
// only, read into row-major xarrays, written atomically.
//
// The format is read and written here, not by xtensor's npy code: its parser trusts the file (it
// sign-extends header lengths, indexes empty strings, wraps negative or huge shapes into small
// allocations and does not notice truncated data), and its public functions offer no stream to
// check. The header is parsed in full and every check happens before the array is allocated.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/dtype.hpp"

namespace kronex::dsl::io {

struct npy_array {
  dtype type = dtype::float64;
  std::vector<std::size_t> shape;  // () for a 0-d array (one value)
  // Row-major (C order); a Fortran-order file is converted.
  std::variant<xt::xarray<float>, xt::xarray<double>, xt::xarray<std::complex<float>>, xt::xarray<std::complex<double>>> data;
};

// What an npy file holds, from its header alone: read and checked before any data, so a caller
// can compare the shape with what it needs before the values are read.
struct npy_info {
  dtype type = dtype::float64;  // the file's
  std::vector<std::size_t> shape;
  bool fortran_order = false;
  std::uint64_t data_offset = 0, data_bytes = 0;
};

// Accepted dtypes: '<f4' '<f8' '<c8' '<c16' ('=' or '|' byte order too: native, little endian here).
// file_error (line 0) when the file is missing, not a regular file, unreadable, not an npy file,
// has a malformed header, another dtype (named, with the accepted list), or less data than its
// shape needs; with `as`, also when the values are complex and `as` is real.
npy_info read_npy_info(const std::string& path, std::optional<dtype> as = std::nullopt);

// The header's checks, then the values, held once: read straight into the array (or in blocks
// when they are converted to `as`, or reordered from Fortran order). A value that is nan or
// infinite, or that overflows `as`, is a file_error naming its index and the value.
npy_array read_npy(const std::string& path, std::optional<dtype> as = std::nullopt);

// The values as T: real -> complex and double -> float are fine; complex -> real is a file_error
// (`name` is the file, for the message).
template <class T>
xt::xarray<T> convert(const npy_array& a, const std::string& name);

// An npy_array holding x (its dtype and shape taken from x).
template <class T>
npy_array to_npy_array(xt::xarray<T> x) {
  npy_array a;
  a.type = dtype_of<T>();
  a.shape.assign(x.shape().begin(), x.shape().end());
  a.data = std::move(x);
  return a;
}

// Writes `path + ".tmp-<pid>"` in the same directory, then renames it onto `path`, so `path` is
// either the old file or the complete new one. On failure the temporary is removed and file_error
// thrown.
template <class T>
void write_npy_atomic(const std::string& path, const xt::xarray<T>& x);

#define KRONEX_DSL_NPY_EXTERN(T)                                                     \
  extern template xt::xarray<T> convert<T>(const npy_array&, const std::string&);   \
  extern template void write_npy_atomic<T>(const std::string&, const xt::xarray<T>&);
KRONEX_DSL_NPY_EXTERN(float)
KRONEX_DSL_NPY_EXTERN(double)
KRONEX_DSL_NPY_EXTERN(std::complex<float>)
KRONEX_DSL_NPY_EXTERN(std::complex<double>)
#undef KRONEX_DSL_NPY_EXTERN

} // namespace kronex::dsl::io
