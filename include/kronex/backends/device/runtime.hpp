#pragma once
// The device runtime: the only door from header code (compiled by the application's C++
// compiler) to code that runs on the device. It is a compiled library, built once per device
// system: kronex::device_cuda (nvcc, Thrust from CCCL, cuBLAS, cuSPARSE) or kronex::device_cpu
// (g++, the same Thrust code with THRUST_DEVICE_SYSTEM_OMP, host BLAS for the GEMMs). Everything here takes
// raw pointers and sizes: no Thrust type crosses this boundary, so the application's compiler
// never sees Thrust and cannot disagree with the runtime about it.
//
// Host<->device copies are not here: they go through detail::transfer (transfers.hpp), which
// counts them.
#include <complex>
#include <cstddef>
#include <memory>

#include "../../core/error.hpp"
#include "../../core/value_traits.hpp"

namespace kronex::detail::device {

// "cuda", "omp" or "cpp": the device system this runtime was built for.
const char* system_name();

// Whether device work can run now: a GPU is present (CUDA), or always (CPU device systems).
bool available();

// Whether device memory is ordinary host memory that any host library (MPI) may read and write:
// true on CPU device systems, false on CUDA.
bool host_addressable();

// Owns what device work is issued on: the stream, the cuBLAS handle, and the cuSPARSE handle and
// its workspace once a sparse product has run (CUDA); nothing on a CPU device. Every compiled device plan holds one; work on it is ordered.
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

// Device memory: `bytes` bytes, uninitialised, aligned for any value type (CUDA: cudaMalloc; a
// CPU device: aligned host memory). A null pointer for 0 bytes. Throws backend_unavailable when
// no device is visible, device_error (naming the size and the failed call) when allocation fails.
// device_buffer (device_buffer.hpp) is the owner header code uses.
void* allocate_bytes(std::size_t bytes);
// Frees what allocate_bytes returned (null is fine). Never throws: a failure is ignored, as in a
// destructor.
void free_bytes(void* p) noexcept;

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

// y = a x + y over n values (operator sums add a term's result in).
template <class T>
void axpy(context& ctx, std::size_t n, T a, const T* x, T* y);
// y = a y over n values.
template <class T>
void scale(context& ctx, std::size_t n, T a, T* y);

// Fast diagonalisation's scaling of a C-order block (algebra/fast_diagonalisation.hpp): entry i
// of the block (global index origin + i) is multiplied by scale / s, where
// s = sum_t coefs[t] prod_d weights[t * axis_total + axis_offset[d] + origin[d] + i_d], or set to
// 0 when |s| <= cutoff. coefs and weights are in device memory. Up to 6 axes.
template <class T>
struct eigen_scale_args {
  int rank = 0;
  std::size_t terms = 0, axis_total = 0;
  std::size_t local[6] = {}, origin[6] = {}, axis_offset[6] = {};
  const T* coefs = nullptr;
  const typename value_traits<T>::real_type* weights = nullptr;
  T scale = T(1);
  double cutoff = -1;
};
template <class T>
void eigen_scale(context& ctx, const eigen_scale_args<T>& args, T* x);

// A pseudo-inverse's projection onto k rank-one tensors r_j = v_{j,0} ⊗ ... ⊗ v_{j,rank-1} of a
// C-order block (algebra/fast_diagonalisation.hpp, pseudo_projection): entry i_d of v_{j,d} is
// vectors[j * axis_total + axis_offset[d] + i_d]. All pointers are device memory: the
// coefficients never leave the device.
template <class T>
struct rank_one_args {
  int rank = 0;
  std::size_t count = 0, axis_total = 0;
  std::size_t local[6] = {}, axis_offset[6] = {};
  const T* vectors = nullptr;
  const T* gram_inverse = nullptr;  // k x k, row-major
  T* partials = nullptr;            // k * rank_one_partitions scratch values
  T* dots = nullptr;                // k scratch values
};
// The number of partial sums per dot product (a fixed, deterministic reduction order).
constexpr std::size_t rank_one_partitions = 4096;
// args.dots = [r_j^H x]_j over the block.
template <class T>
void rank_one_dots(context& ctx, const rank_one_args<T>& args, const T* x);
// coefs = G^{-1} args.dots.
template <class T>
void rank_one_combine(context& ctx, const rank_one_args<T>& args, T* coefs);
// y -= sum_j coefs[j] r_j.
template <class T>
void rank_one_subtract(context& ctx, const rank_one_args<T>& args, const T* coefs, T* y);

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

// Krylov solves on the device (krylov/device_space.hpp). Their scalars live in one device array
// s: the solve's slots, then s[flag] (0, or 1 + a krylov_status: the breakdown flagged), then
// s[flag + 1] (where a read stages the value it reads, so that one copy of s[flag .. flag + 1]
// brings both to the host).

// Vector operations, each a no-op while s[flag] != 0 (the kernel reads the flag itself, so the
// host never has to know it): copy y = x, zero y = 0, axpy y += s[a] x, xpay y = x + s[a] y,
// scale y = s[a] y.
enum class krylov_vector_op { copy, zero, axpy, xpay, scale };
template <class T>
void krylov_vector(context& ctx, krylov_vector_op op, std::size_t n, const T* s, std::size_t flag, std::size_t a,
                   const T* x, T* y);

// Slot arithmetic (krylov/space.hpp has the meaning of each op; the guards set s[flag] to
// 1 + status, or 1 + non_finite_status for a NaN or an infinity, unless it is set already). A
// batch of at most krylov_slot_batch ops runs in order, in one kernel on one thread.
enum class krylov_slot_op {
  set, assign, add, sub, mul, div, sub_mul, neg, real, abs, sqrt, hypot, givens, rotate,
  guard_positive, guard_nonnegative, guard_nonzero, reset, read
};
template <class T>
struct krylov_slot_args {
  krylov_slot_op op = krylov_slot_op::assign;
  std::size_t a = 0, b = 0, c = 0, d = 0;
  T value = T(0);   // set's value
  int status = 0;   // a guard's status
};
constexpr std::size_t krylov_slot_batch = 24;
template <class T>
void krylov_slots(context& ctx, T* s, std::size_t flag, int non_finite_status, const krylov_slot_args<T>* ops,
                  std::size_t count);

// s[out_t] = x_t^H y_t for count <= krylov_dot_batch terms over n values: one kernel of partial
// sums over fixed partitions (entries p, p + parts, ... for parts = min(n, krylov_dot_partitions)),
// one adding each term's partials in order: the same bits on every run.
template <class T>
struct krylov_dot_term {
  const T* x = nullptr;
  const T* y = nullptr;
  std::size_t out = 0;
};
constexpr std::size_t krylov_dot_batch = 16;
constexpr std::size_t krylov_dot_partitions = 1024;
template <class T>
void krylov_dots(context& ctx, std::size_t n, const krylov_dot_term<T>* terms, std::size_t count, T* partials, T* s);

// y = A x for an n x n CSR matrix with nnz entries (nnz == row_ptr[n]) in device memory. CUDA:
// cuSPARSE's SpMV with its deterministic CSR algorithm; a CPU device: a Thrust kernel, one
// thread per row, entries in row order. Each gives the same bits on every run.
template <class T>
void csr_spmv(context& ctx, std::size_t n, std::size_t nnz, const std::size_t* row_ptr, const std::size_t* col_idx,
              const T* values, const T* x, T* y);

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
