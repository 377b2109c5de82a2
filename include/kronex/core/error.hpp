#pragma once
// The error tree: every exception kronex throws derives from kronex::error, so application code
// can catch one type, and tests can check the precise subclass and the numbers in the message.
#include <cstddef>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace kronex {

class error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// Operand shapes or ranks that do not match the operator: the message holds both shapes.
class dimension_mismatch : public error {
public:
  using error::error;
};

// A factor that cannot be used as given: not square, bad band widths, a write outside its band.
class invalid_factor : public error {
public:
  using error::error;
};

// An operator that cannot be used as given (operators/sparse_operator.hpp): CSR arrays that do
// not describe a matrix (row pointers that decrease or do not end at the number of entries, a
// column index outside the matrix), an entry outside the matrix.
class invalid_operator : public error {
public:
  using error::error;
};

// A file that cannot be used: missing, unreadable or malformed (io/matrix_market.hpp), with the
// line in that file when the format has lines (0 otherwise). The message is
// "\"<path>\", line <line>: <reason>" (without the line part when it is 0).
class file_error : public error {
public:
  file_error(std::string path, std::size_t line, const std::string& reason)
      : error(describe(path, line, reason)), m_path(std::move(path)), m_line(line), m_reason(reason) {}
  const std::string& path() const noexcept { return m_path; }
  std::size_t line() const noexcept { return m_line; }
  const std::string& reason() const noexcept { return m_reason; }

private:
  static std::string describe(const std::string& path, std::size_t line, const std::string& reason) {
    return "\"" + path + "\"" + (line ? ", line " + std::to_string(line) : std::string()) + ": " + reason;
  }
  std::string m_path;
  std::size_t m_line;
  std::string m_reason;
};

// A plan that exceeds one of kronex's size limits, found by the check phase (before anything is
// allocated): the message names the limit, the size needed and the mode.
class size_limit_exceeded : public error {
public:
  using error::error;
};

// A NaN or an infinity where kronex needs finite numbers, found by an opt-in check
// (kronex::check_finite, compile_options::check_finite for factors, which throw invalid_factor):
// the message names what was checked, the first offending index and the value.
class non_finite_value : public error {
public:
  using error::error;
};

// A factor that is singular to working precision: its LU factorization hit an exactly zero pivot
// (`info()` is LAPACK's info, the 1-based index of that pivot), or the factorization succeeded
// but the reciprocal condition number estimate is below the threshold (`info()` is 0; the
// message gives the estimate and the threshold). `mode()` is the tensor mode the factor acts on.
class singular_factor : public error {
public:
  singular_factor(std::size_t mode, long info, const std::string& what)
      : error(what), m_mode(mode), m_info(info) {}
  std::size_t mode() const noexcept { return m_mode; }
  long info() const noexcept { return m_info; }

private:
  std::size_t m_mode;
  long m_info;
};

// A sum of Kronecker products that cannot be solved by fast diagonalisation: an axis that uses
// more than two different matrices, a matrix that is not symmetric (hermitian), no positive
// definite matrix on an axis, or a term that is not a plain Kronecker product. The message names
// the axis and the matrices found there, or the term. Applying such a sum is fine.
class not_separable : public error {
public:
  using error::error;
};

// A LAPACK routine rejected its arguments (info < 0): a bug in kronex, reported, never ignored.
class lapack_error : public error {
public:
  using error::error;
};

// A backend that this build of kronex does not contain (e.g. CUDA in a build without nvcc).
class backend_unavailable : public error {
public:
  using error::error;
};

// A host<->device copy where none may happen: inside a kronex::no_transfer_guard scope.
class transfer_error : public error {
public:
  using error::error;
};

// A CUDA or cuBLAS call (or a Thrust algorithm on the device) failed; the message names the call
// and the status, by name and number.
class device_error : public error {
public:
  using error::error;
};

// An MPI call failed; the message names the call and MPI's error string and code.
class mpi_error : public error {
public:
  using error::error;
};

namespace detail {
// Streams all arguments into one message; keeps throw sites to a single readable line.
template <class... Args>
std::string message(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
} // namespace detail

} // namespace kronex
