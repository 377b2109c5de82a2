#pragma once
// What the CUDA runtime's files share: the context's contents and status checks that turn every
// CUDA and cuBLAS failure into a kronex::device_error naming the call and the status.
#include <cublas_v2.h>
#include <cuda_runtime.h>

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

// A blocking stream: it synchronizes with the legacy default stream, so an application's
// cudaMemcpy after a solve sees the result even before context::synchronize().
struct context::impl {
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
};

} // namespace kronex::detail::device
