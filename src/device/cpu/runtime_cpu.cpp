// The device runtime for a CPU device system (THRUST_DEVICE_SYSTEM_OMP or _CPP): "device" memory
// is host memory, so the copies are memcpy; they are still counted by detail::transfer, which is
// what lets CI check the device backend's transfer behaviour without a GPU.
#include <chrono>
#include <cstring>
#include <memory>
#include <new>

#include <kronex/backends/device/runtime.hpp>
#include <thrust/execution_policy.h>

#if THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_OMP && THRUST_DEVICE_SYSTEM != THRUST_DEVICE_SYSTEM_CPP
#error "kronex's CPU device runtime needs THRUST_DEVICE_SYSTEM_OMP or THRUST_DEVICE_SYSTEM_CPP"
#endif

namespace kronex::detail::device {

struct context::impl {};
context::context() : m_impl(std::make_unique<impl>()) {}
context::~context() = default;
void context::synchronize() {}  // every operation below is synchronous

std::shared_ptr<context> default_context() {
  static const std::shared_ptr<context> ctx = std::make_shared<context>();
  return ctx;
}

const char* system_name() { return THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_OMP ? "omp" : "cpp"; }
bool available() { return true; }
bool host_addressable() { return true; }

// cudaMalloc's alignment, so code tested here meets the same guarantee as on a GPU.
constexpr std::align_val_t device_alignment{256};

void* allocate_bytes(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = ::operator new(bytes, device_alignment, std::nothrow);
  if (!p) throw device_error(message("kronex: device allocation of ", bytes, " bytes failed (", system_name(), " device: out of host memory)"));
  return p;
}
void free_bytes(void* p) noexcept {
  if (p) ::operator delete(p, device_alignment);
}

void raw_copy(copy_direction, void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
void copy_on_device(context&, void* dst, const void* src, std::size_t bytes) {
  if (dst != src && bytes) std::memcpy(dst, src, bytes);
}

struct timer::impl {
  std::chrono::steady_clock::time_point start, stop;
};
timer::timer(context&) : m_impl(std::make_unique<impl>()) {}
timer::~timer() = default;
void timer::start() { m_impl->start = std::chrono::steady_clock::now(); }
void timer::stop() { m_impl->stop = std::chrono::steady_clock::now(); }
double timer::seconds() { return std::chrono::duration<double>(m_impl->stop - m_impl->start).count(); }

namespace {
auto device_policy(context&) { return thrust::device; }
} // namespace

} // namespace kronex::detail::device

#include "../thrust_ops.inl"

// ---- The sparse product: a Thrust kernel, one thread per row, entries in row order ----
namespace kronex::detail::device {

namespace {
template <class V>
struct csr_row_product {
  const std::size_t* row_ptr;
  const std::size_t* col_idx;
  const V* values;
  const V* x;
  V* y;
  void operator()(std::size_t i) const {
    V sum(0);
    for (std::size_t k = row_ptr[i]; k < row_ptr[i + 1]; ++k) sum += values[k] * x[col_idx[k]];
    y[i] = sum;
  }
};
} // namespace

template <class T>
void csr_spmv(context& ctx, std::size_t n, std::size_t nnz, const std::size_t* row_ptr, const std::size_t* col_idx,
              const T* values, const T* x, T* y) {
  using V = device_value_t<T>;
  try {
    launch(ctx, n, csr_row_product<V>{row_ptr, col_idx, reinterpret_cast<const V*>(values), reinterpret_cast<const V*>(x),
                                      reinterpret_cast<V*>(y)});
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device sparse matrix-vector product (", n, " rows, ", nnz,
                               " entries) failed: ", e.what()));
  }
}

#define KRONEX_INSTANTIATE(T)                                                                                     \
  template void csr_spmv<T>(context&, std::size_t, std::size_t, const std::size_t*, const std::size_t*, const T*, \
                            const T*, T*);
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
