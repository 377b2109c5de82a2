#pragma once
// The device's memory-bandwidth floor: a device-to-device copy of 256 MiB (read once, written
// once), best of 5 after one that also touches the pages, timed with kronex::device::timer (CUDA
// events, or the steady clock on a CPU device). Needs a device runtime linked.
#include <cstddef>

#include <kronex/device.hpp>

namespace kronex_bench {

inline double device_copy_bandwidth(std::size_t n = std::size_t(1) << 25, int reps = 6) {
  kronex::device_buffer<double> a(n), b(n);
  kronex::device::timer timer;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    timer.start();
    kronex::device::copy(b.data(), a.data(), n * sizeof(double));
    timer.stop();
    const double t = timer.seconds();
    if (r > 0 && t < best) best = t;  // the first copy also touches the pages
  }
  return 2.0 * double(n * sizeof(double)) / best;
}

} // namespace kronex_bench
