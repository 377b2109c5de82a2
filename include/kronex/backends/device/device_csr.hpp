#pragma once
// device_csr<T>: an n x n sparse matrix's CSR arrays (csr_matrix) in device memory, uploaded
// once (three counted uploads; one, the row pointers, for a matrix without entries), and its product y = A x on
// device buffers as a runtime kernel (cuSPARSE on CUDA, a Thrust kernel on a CPU device). A
// sparse_operator in a device Krylov solve, or in an expression compiled for device tensors, is
// multiplied through one.
#include <cstddef>
#include <memory>
#include <utility>

#include "../../plan/csr_matrix.hpp"
#include "device_buffer.hpp"
#include "runtime.hpp"
#include "transfers.hpp"

namespace kronex::detail {

template <class T>
class device_csr {
public:
  device_csr(const csr_matrix<T>& a, std::shared_ptr<device::context> ctx)
      : m_n(a.rows()), m_ctx(std::move(ctx)), m_row_ptr(a.row_ptr.size()), m_col_idx(a.nnz()), m_values(a.nnz()) {
    constexpr auto up = device::copy_direction::host_to_device;
    transfer(up, m_row_ptr.data(), a.row_ptr.data(), m_row_ptr.bytes(), "sparse_operator upload: row pointers");
    transfer(up, m_col_idx.data(), a.col_idx.data(), m_col_idx.bytes(), "sparse_operator upload: column indices");
    transfer(up, m_values.data(), a.values.data(), m_values.bytes(), "sparse_operator upload: values");
  }
  // The uploads a device_csr of a makes: {count, bytes}.
  static std::pair<std::size_t, std::size_t> uploads(const csr_matrix<T>& a) {
    const std::size_t count = a.nnz() ? 3 : 1;
    return {count, a.row_ptr.size() * sizeof(std::size_t) + a.nnz() * (sizeof(std::size_t) + sizeof(T))};
  }

  // y = A x, x and y distinct, in device memory; ordered on the context's stream.
  void run(const T* x, T* y) const {
    device::csr_spmv(*m_ctx, m_n, m_values.size(), m_row_ptr.data(), m_col_idx.data(), m_values.data(), x, y);
  }

private:
  std::size_t m_n;
  std::shared_ptr<device::context> m_ctx;
  device_buffer<std::size_t> m_row_ptr, m_col_idx;
  device_buffer<T> m_values;
};

} // namespace kronex::detail
