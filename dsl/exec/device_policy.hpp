#pragma once
// The device backend as chain_executable sees it: tensors are kronex::device_tensor, the operand
// is uploaded once when the program is prepared, runs happen inside a no_transfer_guard (a copy
// would throw), and the result is downloaded on request. Compiled twice: against the CPU device
// runtime (kronex::device_cpu) and the CUDA one (kronex::device_cuda).
#include <string>

#include <kronex/device.hpp>
#include <kronex_bench/device_membw.hpp>

namespace kronex::dsl::exec {

struct device_policy {
  template <class T, std::size_t D>
  using tensor = device_tensor<T, D>;
  using run_guard = no_transfer_guard;

  static std::string name() { return std::string("device/") + kronex::device::system_name(); }
  // Operator sums, multiples and compositions (exec/composite_program.hpp).
  template <class T, std::size_t D>
  using composite_operator = device_operator<T, D, kronex::detail::device_composite_plan<T>>;
  template <class T>
  static plan_description explain_composite(const operator_tree<T>& t, const shape_t& shape) {
    return kronex::detail::device_composite_plan<T>::explain(t, shape);
  }

  template <class T, std::size_t D>
  static device_tensor<T, D> upload(const xt::xtensor<T, D>& b) {
    if (!kronex::device::available()) {
      throw backend_unavailable(std::string("kronex: no device is available for the device backend (runtime: ") +
                                kronex::device::system_name() + ")");
    }
    return device_tensor<T, D>(b);
  }
  template <class T, std::size_t D>
  static device_tensor<T, D> like(const device_tensor<T, D>& b) { return device_tensor<T, D>(b.shape()); }
  // What explain() takes for an operand of this shape.
  template <class T, std::size_t D>
  static device_shape<T, D> explain_like(const std::array<std::size_t, D>& shape) { return {shape}; }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> download(const device_tensor<T, D>& x) { return x.to_host(); }
  // dst = src, both on the device, of one shape: a device copy, no transfer.
  template <class T, std::size_t D>
  static void copy(const device_tensor<T, D>& src, device_tensor<T, D>& dst) {
    kronex::device::copy(dst.data(), src.data(), src.size() * sizeof(T));
  }

  static double memory_bandwidth() { return kronex_bench::device_copy_bandwidth(); }

  // Times one call of f with device events; the events are made once, with the stopwatch.
  struct stopwatch {
    kronex::device::timer timer;
    template <class F>
    double time(F&& f) {
      timer.start();
      f();
      timer.stop();
      return timer.seconds();
    }
  };
};

} // namespace kronex::dsl::exec
