// The CUDA runtime's sparse matrix-vector product: cuSPARSE's generic SpMV on a CSR matrix with
// 64-bit indices (kronex's row pointers and column indices are std::size_t), all four value
// types, computed in the value type, every status checked.
//
// The algorithm is CUSPARSE_SPMV_CSR_ALG2, the CSR algorithm cuSPARSE documents as giving
// bit-wise identical results on every run (CUSPARSE_SPMV_ALG_DEFAULT and CSR_ALG1 make no such
// promise): kronex's repeated solves give the same bits.
//
// The handle and the workspace live in the context (cuda_context.hpp), made here on the first
// product; the descriptors are made for each call (host-side objects, no device work) and
// released whatever happens.
#include <complex>
#include <cstdint>

#include "cuda_context.hpp"

namespace kronex::detail::device {

namespace {
template <class T>
struct cusparse_value;
template <>
struct cusparse_value<float> {
  static constexpr cudaDataType type = CUDA_R_32F;
  static constexpr const char* name = "float";
};
template <>
struct cusparse_value<double> {
  static constexpr cudaDataType type = CUDA_R_64F;
  static constexpr const char* name = "double";
};
template <>
struct cusparse_value<std::complex<float>> {
  static constexpr cudaDataType type = CUDA_C_32F;
  static constexpr const char* name = "complex<float>";
};
template <>
struct cusparse_value<std::complex<double>> {
  static constexpr cudaDataType type = CUDA_C_64F;
  static constexpr const char* name = "complex<double>";
};

constexpr cusparseSpMVAlg_t spmv_algorithm = CUSPARSE_SPMV_CSR_ALG2;

// The context's cuSPARSE handle, made on first use: on the context's stream, scalars read from
// host memory. `checked(status, call)` throws for a failed status.
template <class Check>
cusparseHandle_t sparse_handle(context::impl& c, const Check& checked) {
  if (!c.sparse_handle) {
    cusparseHandle_t h = nullptr;
    checked(cusparseCreate(&h), "cusparseCreate");
    try {
      checked(cusparseSetStream(h, c.stream), "cusparseSetStream");
      checked(cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST), "cusparseSetPointerMode");
    } catch (...) {
      cusparseDestroy(h);
      throw;
    }
    c.sparse_handle = h;
  }
  return c.sparse_handle;
}

// The context's SpMV workspace, grown to at least `bytes` (never shrunk). cudaFree waits for the
// device, so work still queued on the old workspace is done before it goes.
template <class Check>
void* spmv_workspace(context::impl& c, std::size_t bytes, const Check& checked) {
  if (bytes > c.spmv_buffer_bytes) {
    if (c.spmv_buffer) {
      void* old = c.spmv_buffer;
      c.spmv_buffer = nullptr;
      c.spmv_buffer_bytes = 0;
      checked(cudaFree(old), "cudaFree (cuSPARSE SpMV workspace)");
    }
    void* p = nullptr;
    checked(cudaMalloc(&p, bytes), message("cudaMalloc of ", bytes, " bytes (cuSPARSE SpMV workspace)").c_str());
    c.spmv_buffer = p;
    c.spmv_buffer_bytes = bytes;
  }
  return c.spmv_buffer;
}

// Descriptors released on every path out.
struct csr_descriptor {
  cusparseConstSpMatDescr_t d = nullptr;
  ~csr_descriptor() {
    if (d) cusparseDestroySpMat(d);
  }
};
struct const_vector_descriptor {
  cusparseConstDnVecDescr_t d = nullptr;
  ~const_vector_descriptor() {
    if (d) cusparseDestroyDnVec(d);
  }
};
struct vector_descriptor {
  cusparseDnVecDescr_t d = nullptr;
  ~vector_descriptor() {
    if (d) cusparseDestroyDnVec(d);
  }
};
} // namespace

template <class T>
void csr_spmv(context& ctx, std::size_t n, std::size_t nnz, const std::size_t* row_ptr, const std::size_t* col_idx,
              const T* values, const T* x, T* y) {
  if (n == 0) return;
  context::impl& c = ctx.get();
  // Throws for a failed CUDA or cuSPARSE status (success is 0 for both), naming the call and the
  // problem (the message is built only then).
  const auto checked = [&](auto status, const char* call) {
    using S = decltype(status);
    if (status != S(0)) {
      check(status, message(call, " (", n, "x", n, " CSR matrix, ", nnz, " entries, ", cusparse_value<T>::name, ")").c_str());
    }
  };
  if (nnz == 0) {  // A = 0: y = 0, all bits zero for every value type
    checked(cudaMemsetAsync(y, 0, n * sizeof(T), c.stream), "cudaMemsetAsync (sparse product without entries)");
    return;
  }
  constexpr cudaDataType type = cusparse_value<T>::type;
  const auto rows = static_cast<std::int64_t>(n);
  csr_descriptor a;
  const_vector_descriptor vx;
  vector_descriptor vy;
  checked(cusparseCreateConstCsr(&a.d, rows, rows, static_cast<std::int64_t>(nnz), row_ptr, col_idx, values,
                                 CUSPARSE_INDEX_64I, CUSPARSE_INDEX_64I, CUSPARSE_INDEX_BASE_ZERO, type),
          "cusparseCreateConstCsr");
  checked(cusparseCreateConstDnVec(&vx.d, rows, x, type), "cusparseCreateConstDnVec");
  checked(cusparseCreateDnVec(&vy.d, rows, y, type), "cusparseCreateDnVec");
  const T alpha(1), beta(0);  // std::complex<R> has cuComplex's layout
  cusparseHandle_t h = sparse_handle(c, checked);
  std::size_t bytes = 0;
  checked(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a.d, vx.d, &beta, vy.d, type,
                                  spmv_algorithm, &bytes),
          "cusparseSpMV_bufferSize");
  void* workspace = spmv_workspace(c, bytes, checked);
  checked(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, a.d, vx.d, &beta, vy.d, type, spmv_algorithm,
                       workspace),
          "cusparseSpMV");
}

#define KRONEX_INSTANTIATE(T)                                                                                     \
  template void csr_spmv<T>(context&, std::size_t, std::size_t, const std::size_t*, const std::size_t*, const T*, \
                            const T*, T*);
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
