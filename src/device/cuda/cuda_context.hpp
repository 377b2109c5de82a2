#pragma once
// What the CUDA runtime's files share: the context's contents and status checks that turn every
// CUDA, cuBLAS and cuSPARSE failure into a kronex::device_error naming the call and the status.
#include <cstddef>

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <kronex/backends/device/runtime.hpp>
#include <kronex/core/error.hpp>

namespace kronex::detail::device {

inline void check(cudaError_t status, const char* call) {
  if (status != cudaSuccess) {
    throw device_error(message("kronex: ", call, " failed: ", cudaGetErrorName(status), " (", int(status), "): ",
                               cudaGetErrorString(status)));
  }
}

inline void check(cublasStatus_t status, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) {
    throw device_error(message("kronex: ", call, " failed: ", cublasGetStatusName(status), " (", int(status),
                               "): ", cublasGetStatusString(status)));
  }
}

inline void check(cusparseStatus_t status, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS) {
    throw device_error(message("kronex: ", call, " failed: ", cusparseGetErrorName(status), " (", int(status),
                               "): ", cusparseGetErrorString(status)));
  }
}

// A blocking stream: it synchronizes with the legacy default stream, so an application's
// cudaMemcpy after a solve sees the result even before context::synchronize().
//
// The cuSPARSE handle and the SpMV workspace are made on the first sparse product
// (sparse_cusparse.cu), so a context that never multiplies a sparse matrix does not pay for
// them; the workspace only grows, so the products of a Krylov solve allocate nothing after the
// first. The destructor releases what was made; it must not throw, so failures there are
// ignored (the process may be exiting).
struct context::impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
  cusparseHandle_t sparse_handle = nullptr;
  void* spmv_buffer = nullptr;
  std::size_t spmv_buffer_bytes = 0;

  impl() = default;
  impl(const impl&) = delete;
  impl& operator=(const impl&) = delete;
  ~impl() {
    if (sparse_handle) cusparseDestroy(sparse_handle);
    if (spmv_buffer) cudaFree(spmv_buffer);
    if (handle) cublasDestroy(handle);
    if (stream) cudaStreamDestroy(stream);
  }
};

} // namespace kronex::detail::device
