#pragma once
// The device backend for compiled_impl.hpp: device_operator over device_plan (one Kronecker
// product: a GEMM per mode) or device_composite_plan (the algebra), on device memory. Header code
// only: the same objects link with either device runtime (kronex::device_cuda, kronex::device_cpu).
// finish() waits for kronex's stream, so a run's result is complete for any stream that reads it.
#include <cstddef>

#include <kronex/backends/device/device_api.hpp>
#include <kronex/backends/device/device_operator.hpp>

#include "../compiled.hpp"

namespace kronex::python {

struct device_backend {
  template <class T, std::size_t D>
  using kron_operator = device_operator<T, D>;
  template <class T, std::size_t D>
  using tree_operator = device_operator<T, D, kronex::detail::device_composite_plan<T>>;
  template <class T>
  using kron_plan = kronex::detail::device_plan<T>;
  template <class T>
  using tree_plan = kronex::detail::device_composite_plan<T>;
  static constexpr memory_space memory = memory_space::device;
  static void finish() { kronex::device::synchronize(); }
};

} // namespace kronex::python
