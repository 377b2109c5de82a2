#pragma once
// The device runtime: the only door from header code (compiled by the application's C++
// compiler) to code that runs on the device. It is a compiled library, built once per device
// system: kronex::device_cuda (nvcc, Thrust from CCCL, cuBLAS) or kronex::device_cpu (g++, the
// same Thrust code with THRUST_DEVICE_SYSTEM_OMP, host BLAS for the GEMMs). Everything here takes
// raw pointers and sizes, so headers never instantiate a device algorithm themselves.
//
// Host<->device copies are not here: they go through detail::transfer (transfers.hpp), which
// counts them.
#include <complex>
#include <cstddef>
#include <memory>

#include <thrust/device_vector.h>
#include <thrust/version.h>

#include "../../core/error.hpp"

namespace kronex::detail::device {

// "cuda", "omp" or "cpp": the device system this runtime was built for.
const char* system_name();

// Whether device work can run now: a GPU is present (CUDA), or always (CPU device systems).
bool available();

// Owns what device work is issued on: the cuBLAS handle and the stream (CUDA); nothing on a CPU
// device. Every compiled device plan holds one; work on it is ordered.
class context {
public:
  context();
  ~context();
  context(const context&) = delete;
  context& operator=(const context&) = delete;
  void synchronize();
  struct impl;
  impl& get() noexcept { return *m_impl; }

private:
  std::unique_ptr<impl> m_impl;
};

// The process-wide context that plans share (created on first use).
std::shared_ptr<context> default_context();

// v.resize(n) without defining the contents, done where the device system's algorithms are
// compiled (header code must not instantiate them: see docs/backends.md). Header code calls
// allocate(), which first checks that it and the runtime agree on Thrust.
template <class T>
void resize(thrust::device_vector<T>& v, std::size_t n);

// What the header code and the compiled runtime must agree on for a thrust::device_vector to
// cross between them: the Thrust version, the device system and the vector's size. With
// THRUST_DISABLE_ABI_NAMESPACE two Thrust versions would link silently, so this is checked.
struct thrust_signature {
  int version;
  int system;
  std::size_t vector_bytes;
};
thrust_signature runtime_thrust_signature();

inline void check_runtime_signature() {
  static const bool checked = [] {
    const thrust_signature here{THRUST_VERSION, THRUST_DEVICE_SYSTEM, sizeof(thrust::device_vector<double>)};
    const thrust_signature rt = runtime_thrust_signature();
    if (here.version != rt.version || here.system != rt.system || here.vector_bytes != rt.vector_bytes) {
      throw error(message("kronex: this code and the linked device runtime (", system_name(),
                          ") were compiled with different Thrust builds: version ", here.version, " vs ", rt.version,
                          ", device system ", here.system, " vs ", rt.system, ", sizeof(device_vector<double>) ",
                          here.vector_bytes, " vs ", rt.vector_bytes,
                          ". Link kronex::device_cuda or kronex::device_cpu through CMake, which sets the include "
                          "path and definitions, and never mix two Thrust versions in one binary."));
    }
    return true;
  }();
  (void)checked;
}

template <class T>
void allocate(thrust::device_vector<T>& v, std::size_t n) {
  check_runtime_signature();
  resize(v, n);
}

// dst = src on the device (no host transfer), ordered on the context's stream like every other
// operation; call ctx.synchronize() before the host relies on it.
void copy_on_device(context& ctx, void* dst, const void* src, std::size_t bytes);

enum class copy_direction { host_to_device, device_to_host };
// The raw copy behind detail::transfer; synchronous. Call detail::transfer instead.
void raw_copy(copy_direction dir, void* dst, const void* src, std::size_t bytes);

// Column-major GEMMs with cuBLAS's conventions (alpha = 1, beta = 0, C = op(A) op(B));
// trans_a/trans_b are 'N' or 'T'. The stand-in on a CPU device calls the host BLAS.
template <class T>
struct blas {
  static void gemm(context& ctx, char trans_a, char trans_b, long m, long n, long k, const T* a, long lda,
                   const T* b, long ldb, T* c, long ldc);
  static void gemm_strided_batched(context& ctx, char trans_a, char trans_b, long m, long n, long k,
                                   const T* a, long lda, long long stride_a, const T* b, long ldb,
                                   long long stride_b, T* c, long ldc, long long stride_c, long batch);
};

// dst[l, i, r] = s[i] * src[l, i, r] for a C-order (L, n, R) tensor; dst may equal src.
template <class T>
void scale_mode(context& ctx, std::size_t L, std::size_t n, std::size_t R, const T* s, const T* src, T* dst);

// Where a copy_box reads and writes: the part (global indices) of the C-order block `from`,
// written into the C-order block `to`. Up to 6 axes.
struct device_box {
  int rank = 0;
  std::size_t part_offset[6] = {}, part_extent[6] = {};
  std::size_t from_offset[6] = {}, from_extent[6] = {}, to_offset[6] = {}, to_extent[6] = {};
};
// Copies box.part from the block stored at src to the block stored at dst, on the device
// (distributed device ranks pack and unpack their exchanges with it).
template <class T>
void copy_box(context& ctx, const device_box& box, const T* src, T* dst);

// Elapsed time of device work between start() and stop(), from device events (CUDA) or the
// steady clock after synchronizing (CPU device).
class timer {
public:
  explicit timer(context& ctx);
  ~timer();
  timer(const timer&) = delete;
  timer& operator=(const timer&) = delete;
  void start();
  void stop();
  double seconds();  // waits for the stop event
  struct impl;

private:
  std::unique_ptr<impl> m_impl;
};

#define KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(X) X(float) X(double) X(std::complex<float>) X(std::complex<double>)

} // namespace kronex::detail::device
