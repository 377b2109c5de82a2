#pragma once
// Transfer accounting. Every host<->device copy kronex makes goes through detail::transfer, which
// counts it (calls and bytes per direction) and refuses it inside a no_transfer_guard scope. So
// "a solve makes zero transfers" is something a test can check, and a plan that stages data
// through the host cannot do it silently.
#include <atomic>
#include <cstddef>

#include "../../core/error.hpp"
#include "runtime.hpp"

namespace kronex {

struct transfer_counts {
  std::size_t uploads = 0;          // host -> device copies
  std::size_t downloads = 0;        // device -> host copies
  std::size_t upload_bytes = 0;
  std::size_t download_bytes = 0;

  std::size_t calls() const noexcept { return uploads + downloads; }
  std::size_t bytes() const noexcept { return upload_bytes + download_bytes; }
  friend transfer_counts operator-(const transfer_counts& a, const transfer_counts& b) noexcept {
    return {a.uploads - b.uploads, a.downloads - b.downloads, a.upload_bytes - b.upload_bytes,
            a.download_bytes - b.download_bytes};
  }
};

namespace detail {
struct transfer_state {
  std::atomic<std::size_t> uploads{0}, downloads{0}, upload_bytes{0}, download_bytes{0};
};
inline transfer_state& transfer_totals() {
  static transfer_state state;
  return state;
}
// Guards are per thread: a guard in one thread does not forbid copies made by another.
inline int& transfer_guard_depth() {
  thread_local int depth = 0;
  return depth;
}
} // namespace detail

// The cumulative counts since the program started (all threads). Take differences around the
// code you measure.
inline transfer_counts transfers() noexcept {
  auto& s = detail::transfer_totals();
  return {s.uploads.load(), s.downloads.load(), s.upload_bytes.load(), s.download_bytes.load()};
}

// While one exists in this thread, any host<->device copy by kronex throws kronex::transfer_error
// (and copies nothing). Nests.
class no_transfer_guard {
public:
  no_transfer_guard() noexcept { ++detail::transfer_guard_depth(); }
  ~no_transfer_guard() { --detail::transfer_guard_depth(); }
  no_transfer_guard(const no_transfer_guard&) = delete;
  no_transfer_guard& operator=(const no_transfer_guard&) = delete;
};

namespace detail {
// The one function through which kronex copies between host and device. `what` says why, for
// the guard's message ("device_tensor upload", "stage_through_host step 2", ...).
inline void transfer(device::copy_direction dir, void* dst, const void* src, std::size_t bytes, const char* what) {
  const bool up = dir == device::copy_direction::host_to_device;
  if (bytes == 0) return;  // nothing moves: neither counted nor refused (empty tensors)
  if (transfer_guard_depth() > 0) {
    throw transfer_error(message("kronex: ", up ? "host-to-device" : "device-to-host", " copy of ", bytes,
                                 " bytes (", what, ") inside a no_transfer_guard scope"));
  }
  device::raw_copy(dir, dst, src, bytes);
  auto& s = transfer_totals();
  (up ? s.uploads : s.downloads).fetch_add(1);
  (up ? s.upload_bytes : s.download_bytes).fetch_add(bytes);
}
} // namespace detail

} // namespace kronex
