#pragma once
// kronex::device: what applications (and the kronex command) use of the linked device runtime
// directly, without kronex's internals: which device system it is, whether it can run, waiting
// for kronex's device work, timing it, and copying device memory. All device work kronex issues
// is ordered on one stream (CUDA) shared by every plan; these functions use the same one.
#include <cstddef>
#include <memory>

#include "runtime.hpp"

namespace kronex::device {

// "cuda", "omp" or "cpp": the device system of the linked runtime.
inline const char* system_name() { return detail::device::system_name(); }

// Whether device work can run now: a GPU is visible (CUDA), or always (a CPU device).
inline bool available() { return detail::device::available(); }

// Waits until all device work kronex has issued is complete.
inline void synchronize() { detail::device::default_context()->synchronize(); }

// Copies `bytes` bytes of device memory from src to dst (no host transfer), ordered after kronex's
// earlier device work; call synchronize() before the host relies on dst. The ranges must not
// overlap unless dst == src (then nothing is copied).
inline void copy(void* dst, const void* src, std::size_t bytes) {
  detail::device::copy_on_device(*detail::device::default_context(), dst, src, bytes);
}

// Elapsed time of the device work issued between start() and stop(): CUDA events on kronex's
// stream, or the steady clock on a CPU device (whose work is synchronous). seconds() waits for
// the work before stop() to finish. The events are made once, so a timer can be reused.
class timer {
public:
  timer() : m_ctx(detail::device::default_context()), m_timer(*m_ctx) {}
  void start() { m_timer.start(); }
  void stop() { m_timer.stop(); }
  double seconds() { return m_timer.seconds(); }

private:
  std::shared_ptr<detail::device::context> m_ctx;  // outlives the timer's events
  detail::device::timer m_timer;
};

} // namespace kronex::device
