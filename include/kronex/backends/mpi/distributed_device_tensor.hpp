#pragma once
// Device ranks: distributed_device_tensor<T, D> holds each rank's block as a device_tensor, and
// its plans run device plans (one GEMM per mode) on the block. Exchanges pack and unpack on the
// device; MPI then reads and writes either device memory directly (CUDA-aware MPI, or a CPU
// device whose memory is host memory) or host buffers, with the packed data staged through the
// host: two counted transfers per exchange, shown on the plan's exchange steps.
#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>  // Open MPI: MPIX_Query_cuda_support
#endif

#include "../device/device_buffer.hpp"
#include "../device/device_composite.hpp"
#include "../device/device_operator.hpp"
#include "../device/device_plan.hpp"
#include "../device/device_tensor.hpp"
#include "distributed_operator.hpp"
#include "distributed_tensor.hpp"

namespace kronex {

// How a device rank's exchanges reach MPI.
enum class exchange_memory {
  automatic,  // device memory when MPI can use it (CPU device, or CUDA-aware MPI), else staged
  device,     // MPI reads and writes device memory: needs a CUDA-aware MPI on a GPU
  staged,     // packed messages are copied to host buffers and back (counted transfers)
};

namespace detail {

// Whether the MPI library can take device pointers: always on a CPU device system; on CUDA, when
// Open MPI says it was built CUDA-aware.
inline bool mpi_takes_device_memory() {
  if (device::host_addressable()) return true;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

template <class T>
struct device_ranks {
  using local_plan = device_plan<T>;
  using buffer = device_buffer<T>;
  static constexpr const char* name = "device";
  static constexpr bool counts_transfers = true;
  exchange_memory memory = exchange_memory::automatic;
  bool staged = false;
  // Exchanges pack on the device by default: MPI datatypes over device memory would make a
  // CUDA-aware MPI copy each contiguous run on its own.
  static constexpr bool packs_by_default = true;
  // Device work is not pipelined with the exchanges (a device plan per chunk extent would
  // upload the factors again).
  static constexpr bool pipelines = false;
  static constexpr bool shares_memory = false;  // MPI moves device memory
  std::shared_ptr<device::context> ctx;

  explicit device_ranks(exchange_memory m = exchange_memory::automatic) : memory(m) {}

  // How exchanges reach MPI (device memory or staged); needs no device, so explain can print it.
  // Called by the plan inside its collective part, so a failure raises on every rank.
  void decide() {
    if (memory == exchange_memory::device && !mpi_takes_device_memory()) {
      throw backend_unavailable(message("kronex: exchange_memory::device needs an MPI that accepts device memory "
                                        "(CUDA-aware); this one does not: use exchange_memory::staged or automatic"));
    }
    staged = memory == exchange_memory::staged || (memory == exchange_memory::automatic && !mpi_takes_device_memory());
  }

  // Before instantiating: a device must be visible (collective too).
  void init() {
    decide();
    if (!device::available()) {
      throw backend_unavailable(message("kronex: distributed device ranks (", device::system_name(),
                                        "): no device is visible to this process"));
    }
    ctx = device::default_context();
  }

  void allocate(buffer& b, std::size_t n) { b = buffer(n); }
  T* data(buffer& b) { return b.data(); }
  void copy(const box& part, const box& from, const T* src, const box& to, T* dst) {
    if (part.size() == 0) return;
    if (part.extent.size() > 6) throw error("kronex: device box copies support at most 6 axes");
    device::device_box b;
    b.rank = int(part.extent.size());
    for (std::size_t k = 0; k < part.extent.size(); ++k) {
      b.part_offset[k] = part.offset[k];
      b.part_extent[k] = part.extent[k];
      b.from_offset[k] = from.offset[k];
      b.from_extent[k] = from.extent[k];
      b.to_offset[k] = to.offset[k];
      b.to_extent[k] = to.extent[k];
    }
    device::copy_box(*ctx, b, src, dst);
  }
  void synchronize() { ctx->synchronize(); }
  std::string memory_text() const { return staged ? " (staged through host)" : " (device memory)"; }
  void download(T* dst, const T* src, std::size_t bytes) {
    transfer(device::copy_direction::device_to_host, dst, src, bytes, "distributed exchange (staged send)");
  }
  void upload(T* dst, const T* src, std::size_t bytes) {
    transfer(device::copy_direction::host_to_device, dst, src, bytes, "distributed exchange (staged receive)");
  }
};

// Operator sums on device ranks: the device's kernels on each rank's block.
template <class T>
struct block_kernels<device_ranks<T>> {
  using type = device_composite_ops<T>;
};

} // namespace detail

template <class T, std::size_t D>
class distributed_device_tensor : public detail::distribution<D> {
public:
  using value_type = T;
  using typename detail::distribution<D>::shape_type;
  using typename detail::distribution<D>::grid_type;
  using ranks_type = detail::device_ranks<T>;
  static constexpr std::size_t rank = D;

  // Collective over comm. `memory` says how exchanges of plans compiled for this tensor reach MPI.
  distributed_device_tensor(MPI_Comm comm, const shape_type& global, const grid_type& grid,
                            exchange_memory memory = exchange_memory::automatic)
      : detail::distribution<D>(comm, global, grid), m_memory(memory) {
    // Allocating fails the same way on every rank (no device): raised on all of them together.
    detail::collective(this->comm(), [&] { m_local = device_tensor<T, D>(this->local_shape()); });
  }

  // Same global shape, grid, communicator and exchange memory; block contents unspecified.
  static distributed_device_tensor like(const distributed_device_tensor& other) {
    return distributed_device_tensor(static_cast<const detail::distribution<D>&>(other), other.m_memory);
  }

  device_tensor<T, D>& local() noexcept { return m_local; }
  const device_tensor<T, D>& local() const noexcept { return m_local; }
  exchange_memory memory() const noexcept { return m_memory; }
  ranks_type ranks() const { return ranks_type(m_memory); }

private:
  distributed_device_tensor(const detail::distribution<D>& d, exchange_memory memory)
      : detail::distribution<D>(d), m_local(this->local_shape()), m_memory(memory) {}  // not collective: no MPI

  device_tensor<T, D> m_local;
  exchange_memory m_memory;
};

template <class T, std::size_t D>
struct backend_traits<distributed_device_tensor<T, D>>
    : detail::distributed_backend_traits<distributed_device_tensor<T, D>> {};

} // namespace kronex
