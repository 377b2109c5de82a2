#pragma once
// sparse_operator<T>: an assembled N x N sparse matrix (CSR) acting on tensors of a given shape,
// N the product of its extents, the tensor flattened in C order. It is for the operators that are
// not Kronecker products (a mass matrix on a mapped domain, a variable-coefficient Laplacian):
// the operator of a Krylov solve, preconditioned by a kronex expression (docs/krylov.md).
//
//   sparse_operator<T>(shape, row_ptr, col_idx, values)   CSR arrays, checked
//   sparse_operator<T>::from_entries(shape, entries)      (row, col, value) entries, 0-based;
//                                                         duplicates summed, zero sums dropped
//   sparse_operator<T>::read_matrix_market(path, shape)   a Matrix Market file (kronex/io)
//
// The arrays are shared, immutable, between copies: a Krylov solver keeps a copy of the operator
// without copying the matrix. Products run on the host (one pass over the entries).
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../core/error.hpp"
#include "../factors/from_entries.hpp"
#include "../io/matrix_market.hpp"
#include "../plan/csr_matrix.hpp"
#include "flat_operator.hpp"

namespace kronex {

template <class T>
class sparse_operator : public detail::flat_operator<sparse_operator<T>, T> {
  using base = detail::flat_operator<sparse_operator<T>, T>;

public:
  // CSR: row i holds entries row_ptr[i] .. row_ptr[i+1]-1, at columns col_idx[k] with values
  // values[k]. A column may repeat within a row (the products sum them). Throws
  // dimension_mismatch when row_ptr does not have N + 1 entries, invalid_operator when the arrays
  // do not describe an N x N matrix.
  sparse_operator(shape_t shape, std::vector<std::size_t> row_ptr, std::vector<std::size_t> col_idx,
                  std::vector<T> values)
      : base(std::move(shape), "sparse_operator") {
    check_csr(row_ptr, col_idx, values);
    m_csr = std::make_shared<const csr>(csr{std::move(row_ptr), std::move(col_idx), std::move(values)});
  }

  // From 0-based (row, col, value) entries in any order; entries at the same position are summed
  // and zero sums dropped (kronex::canonical_entries). invalid_operator for an entry outside the
  // N x N matrix, naming it.
  static sparse_operator from_entries(shape_t shape, std::vector<entry<T>> entries) {
    const std::size_t n = detail::product(shape);
    for (std::size_t k = 0; k < entries.size(); ++k)
      if (entries[k].row >= n || entries[k].col >= n)
        throw invalid_operator(detail::message("kronex::sparse_operator: entry ", k, " (row ", entries[k].row, ", column ",
                                               entries[k].col, ") is outside the ", n, " x ", n, " matrix of shape ",
                                               detail::format_shape(shape), " (indices are 0-based)"));
    entries = canonical_entries(std::move(entries));
    std::vector<std::size_t> row_ptr(n + 1, 0), col_idx(entries.size());
    std::vector<T> values(entries.size());
    for (std::size_t k = 0; k < entries.size(); ++k) {
      ++row_ptr[entries[k].row + 1];
      col_idx[k] = entries[k].col;
      values[k] = entries[k].value;
    }
    for (std::size_t i = 0; i < n; ++i) row_ptr[i + 1] += row_ptr[i];
    return sparse_operator(std::move(shape), std::move(row_ptr), std::move(col_idx), std::move(values));
  }

  // A square Matrix Market file (any format, field and symmetry the reader takes) whose size is
  // the product of `shape`. file_error (with the line) for a malformed file, or one with complex
  // entries for a real T; dimension_mismatch naming the file's size and the shape's.
  static sparse_operator read_matrix_market(const std::string& path, shape_t shape) {
    return from_matrix_market(io::read_matrix_market(path), std::move(shape), path);
  }

  // The same from a file already read (io::read_matrix_market), `path` naming it in errors: for
  // a caller that chooses T from the file's field.
  static sparse_operator from_matrix_market(const io::matrix_market& m, shape_t shape, const std::string& path) {
    const std::size_t n = detail::product(shape);
    if (m.rows != n || m.cols != n)
      throw dimension_mismatch(detail::message("kronex::sparse_operator: \"", path, "\" holds a ", m.rows, " x ", m.cols,
                                               " matrix, but the shape ", detail::format_shape(shape), " needs ", n, " x ",
                                               n));
    if (m.is_complex && !value_traits<T>::is_complex)
      throw file_error(path, 0, std::string("has complex entries, but the operator's value type is ") + value_traits<T>::name);
    return from_entries(std::move(shape), io::entries_as<T>(m, path));
  }

  std::size_t nnz() const noexcept { return m_csr->values.size(); }
  const std::vector<std::size_t>& row_ptr() const noexcept { return m_csr->row_ptr; }
  const std::vector<std::size_t>& col_idx() const noexcept { return m_csr->col_idx; }
  const std::vector<T>& values() const noexcept { return m_csr->values; }

  // What the operator runs as a leaf of an expression: A x, A^T x and A^H x from the shared CSR
  // arrays (on the host the transposes scatter rows, with no transposed copy), and the arrays
  // themselves for a backend with its own product (the device uploads op(A)).
  std::shared_ptr<const flat_action<T>> action() const {
    auto a = std::make_shared<flat_action<T>>();
    a->name = "sparse_operator" + detail::format_shape(this->shape());
    a->method = "csr_spmv";
    a->shape = this->shape();
    a->csr = m_csr;
    const auto csr_data = m_csr;
    const std::size_t n = this->size();
    a->apply = [op = *this](const T* x, T* y) { op.run(x, y); };
    const auto scatter = [csr_data, n](bool conjugate) {
      return [csr_data, n, conjugate](const T* x, T* y) {
        for (std::size_t i = 0; i < n; ++i) y[i] = T(0);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t k = csr_data->row_ptr[i]; k < csr_data->row_ptr[i + 1]; ++k) {
            const T v = csr_data->values[k];
            y[csr_data->col_idx[k]] += (conjugate ? detail::conj_if_complex(v) : v) * x[i];
          }
      };
    };
    a->apply_transposed = scatter(false);
    a->apply_adjoint = scatter(true);
    const double nnz = double(csr_data->values.size());
    a->flops = nnz * (value_traits<T>::is_complex ? 8.0 : 2.0);
    a->bytes = nnz * double(sizeof(T) + sizeof(std::size_t)) + 2.0 * double(n) * double(sizeof(T));
    return a;
  }

  // y = A x on raw C-order buffers of size() values; x and y must not overlap.
  void run(const T* x, T* y) const {
    const std::size_t* rp = m_csr->row_ptr.data();
    const std::size_t* ci = m_csr->col_idx.data();
    const T* v = m_csr->values.data();
    const std::size_t n = this->size();
    for (std::size_t i = 0; i < n; ++i) {
      T s{};
      for (std::size_t k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[ci[k]];
      y[i] = s;
    }
  }

  // The CSR arrays, shared (a backend that uploads the matrix reads them here).
  const std::shared_ptr<const detail::csr_matrix<T>>& csr_arrays() const noexcept { return m_csr; }

private:
  using csr = detail::csr_matrix<T>;

  void check_csr(const std::vector<std::size_t>& row_ptr, const std::vector<std::size_t>& col_idx,
                 const std::vector<T>& values) const {
    using detail::message;
    const std::size_t n = this->size();
    const std::string what = message("kronex::sparse_operator: the CSR arrays for shape ", detail::format_shape(this->shape()),
                                     " (a ", n, " x ", n, " matrix)");
    if (row_ptr.size() != n + 1)
      throw dimension_mismatch(message(what, " need ", n + 1, " row pointers (N + 1), row_ptr has ", row_ptr.size()));
    if (row_ptr[0] != 0) throw invalid_operator(message(what, ": row_ptr[0] is ", row_ptr[0], ", it must be 0"));
    for (std::size_t i = 0; i < n; ++i)
      if (row_ptr[i + 1] < row_ptr[i])
        throw invalid_operator(message(what, ": row_ptr decreases at row ", i, " (row_ptr[", i, "] = ", row_ptr[i],
                                       " > row_ptr[", i + 1, "] = ", row_ptr[i + 1], ")"));
    if (col_idx.size() != values.size())
      throw invalid_operator(message(what, ": col_idx has ", col_idx.size(), " entries and values has ", values.size()));
    if (row_ptr[n] != col_idx.size())
      throw invalid_operator(message(what, ": row_ptr[N] = ", row_ptr[n], " but there are ", col_idx.size(), " entries"));
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k)
        if (col_idx[k] >= n)
          throw invalid_operator(message(what, ": column index ", col_idx[k], " of entry ", k, " (row ", i,
                                         ") is outside the matrix (indices are 0-based)"));
  }

  std::shared_ptr<const csr> m_csr;
};

} // namespace kronex
