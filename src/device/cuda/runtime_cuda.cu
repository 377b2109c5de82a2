// The device runtime for CUDA: context (stream, cuBLAS handle, and the cuSPARSE handle made on
// first use), copies, events, and the shared Thrust code compiled by nvcc. The GEMMs are cuBLAS
// (blas_cublas.cu), the sparse matrix-vector product cuSPARSE (sparse_cusparse.cu).
#include <memory>

#include <thrust/execution_policy.h>
#include <thrust/system/cuda/execution_policy.h>

#include "cuda_context.hpp"

namespace kronex::detail::device {

context::context() : m_impl(std::make_unique<impl>()) {
  check(cudaStreamCreate(&m_impl->stream), "cudaStreamCreate");
  check(cublasCreate(&m_impl->handle), "cublasCreate");
  check(cublasSetStream(m_impl->handle, m_impl->stream), "cublasSetStream");
}

context::~context() = default;  // impl's destructor releases the handles, the workspace and the stream

void context::synchronize() { check(cudaStreamSynchronize(m_impl->stream), "cudaStreamSynchronize"); }

std::shared_ptr<context> default_context() {
  static const std::shared_ptr<context> ctx = std::make_shared<context>();
  return ctx;
}

const char* system_name() { return "cuda"; }
bool host_addressable() { return false; }

// Asked once per process: whether a GPU is visible does not change while it runs.
bool available() {
  static const bool visible = [] {
    int count = 0;
    return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  }();
  return visible;
}

void* allocate_bytes(std::size_t bytes) {
  if (!available()) {
    throw backend_unavailable(message("kronex: device allocation of ", bytes,
                                      " bytes: the device backend (cuda) has no device to run on: no GPU is visible "
                                      "to this process"));
  }
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), message("cudaMalloc of ", bytes, " bytes").c_str());
  return p;
}
void free_bytes(void* p) noexcept {
  if (p) cudaFree(p);  // cannot throw from a destructor; a failure here leaves nothing to undo
}

void raw_copy(copy_direction dir, void* dst, const void* src, std::size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, dir == copy_direction::host_to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
        dir == copy_direction::host_to_device ? "cudaMemcpy (host to device)" : "cudaMemcpy (device to host)");
}

void copy_on_device(context& ctx, void* dst, const void* src, std::size_t bytes) {
  if (dst == src || bytes == 0) return;
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx.get().stream),
        "cudaMemcpyAsync (device to device)");
}

struct timer::impl {
  cudaStream_t stream = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
};
timer::timer(context& ctx) : m_impl(std::make_unique<impl>()) {
  m_impl->stream = ctx.get().stream;
  check(cudaEventCreate(&m_impl->start), "cudaEventCreate");
  check(cudaEventCreate(&m_impl->stop), "cudaEventCreate");
}
timer::~timer() {
  if (m_impl->start) cudaEventDestroy(m_impl->start);
  if (m_impl->stop) cudaEventDestroy(m_impl->stop);
}
void timer::start() { check(cudaEventRecord(m_impl->start, m_impl->stream), "cudaEventRecord"); }
void timer::stop() { check(cudaEventRecord(m_impl->stop, m_impl->stream), "cudaEventRecord"); }
double timer::seconds() {
  check(cudaEventSynchronize(m_impl->stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, m_impl->start, m_impl->stop), "cudaEventElapsedTime");
  return double(ms) * 1e-3;
}

namespace {
auto device_policy(context& ctx) { return thrust::cuda::par.on(ctx.get().stream); }
} // namespace

} // namespace kronex::detail::device

#include "../thrust_ops.inl"
