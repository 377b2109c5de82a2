#pragma once
// The device backend as chain_executable sees it: tensors are kronex::device_tensor, the operand
// is uploaded once when the program is prepared, runs happen inside a no_transfer_guard (a copy
// would throw), and the result is downloaded on request. Compiled twice: against the CPU device
// runtime (kronex::device_cpu) and the CUDA one (kronex::device_cuda).
#include <memory>
#include <string>

#include <kronex/device.hpp>

namespace kronex::dsl::detail {

struct device_policy {
  template <class T, std::size_t D>
  using tensor = device_tensor<T, D>;
  using run_guard = no_transfer_guard;

  static std::string name() { return std::string("device/") + kronex::detail::device::system_name(); }

  template <class T, std::size_t D>
  static device_tensor<T, D> upload(const xt::xtensor<T, D>& b) {
    if (!kronex::detail::device::available()) {
      throw backend_unavailable(std::string("kronex: no device is available for the device backend (runtime: ") +
                                kronex::detail::device::system_name() + ")");
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

  // A device-to-device copy of 256 MiB, best of 5: reads and writes it once.
  static double memory_bandwidth() {
    auto ctx = kronex::detail::device::default_context();
    const std::size_t n = std::size_t(1) << 25;
    device_tensor<double, 1> a({n}), b({n});
    kronex::detail::device::timer timer(*ctx);
    double best = 1e30;
    for (int r = 0; r < 6; ++r) {
      timer.start();
      kronex::detail::device::copy_on_device(*ctx, b.data(), a.data(), n * sizeof(double));
      timer.stop();
      const double t = timer.seconds();
      if (r > 0 && t < best) best = t;  // the first copy also touches the pages
    }
    return 2.0 * double(n * sizeof(double)) / best;
  }

  // Times one call of f with device events; the events are made once, with the stopwatch.
  struct stopwatch {
    std::shared_ptr<kronex::detail::device::context> ctx = kronex::detail::device::default_context();
    kronex::detail::device::timer timer{*ctx};
    template <class F>
    double time(F&& f) {
      timer.start();
      f();
      timer.stop();
      return timer.seconds();
    }
  };
};

} // namespace kronex::dsl::detail
