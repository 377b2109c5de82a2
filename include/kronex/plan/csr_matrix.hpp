#pragma once
// csr_matrix<T>: an assembled n x n sparse matrix's CSR arrays, as a sparse_operator holds them
// and as a backend with its own sparse product (the device) takes them. csr_with(m, o) is op(A)
// as a new CSR matrix (A^T, A^H, conj(A)): a backend that multiplies by a copy uploads op(A)
// itself rather than scattering rows as the host's products do.
#include <cstddef>
#include <vector>

#include "../core/op.hpp"
#include "../core/value_traits.hpp"

namespace kronex::detail {

template <class T>
struct csr_matrix {
  // Row i holds entries row_ptr[i] .. row_ptr[i+1]-1, at columns col_idx[k] with values values[k].
  std::vector<std::size_t> row_ptr, col_idx;
  std::vector<T> values;

  std::size_t rows() const noexcept { return row_ptr.empty() ? 0 : row_ptr.size() - 1; }
  std::size_t nnz() const noexcept { return values.size(); }
};

// op(A) in CSR: A itself for op::none; the transpose (rows become columns, entries of a row kept
// in A's row order) for op::transpose, with conjugated values for op::adjoint; A with conjugated
// values for op::conjugate. For a real T, adjoint is transpose and conjugate is none.
template <class T>
csr_matrix<T> csr_with(const csr_matrix<T>& a, op o) {
  const bool conjugate = value_traits<T>::is_complex && (o == op::adjoint || o == op::conjugate);
  const auto value = [&](std::size_t k) { return conjugate ? conj_if_complex(a.values[k]) : a.values[k]; };
  if (o != op::transpose && o != op::adjoint) {
    csr_matrix<T> c = a;
    if (conjugate)
      for (std::size_t k = 0; k < c.values.size(); ++k) c.values[k] = value(k);
    return c;
  }
  const std::size_t n = a.rows();
  csr_matrix<T> t;
  t.row_ptr.assign(n + 1, 0);
  t.col_idx.resize(a.nnz());
  t.values.resize(a.nnz());
  for (std::size_t k = 0; k < a.nnz(); ++k) ++t.row_ptr[a.col_idx[k] + 1];
  for (std::size_t i = 0; i < n; ++i) t.row_ptr[i + 1] += t.row_ptr[i];
  std::vector<std::size_t> next(t.row_ptr.begin(), t.row_ptr.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = a.row_ptr[i]; k < a.row_ptr[i + 1]; ++k) {
      const std::size_t at = next[a.col_idx[k]]++;
      t.col_idx[at] = i;
      t.values[at] = value(k);
    }
  return t;
}

} // namespace kronex::detail
