#pragma once
// device_buffer<T>: n values of T in device memory, allocated and freed by the compiled device
// runtime (detail::device::allocate_bytes / free_bytes), so header code holds only a pointer and a
// size, never a Thrust container. It is move-only: copying device memory is work issued on a
// stream, which the owner (device_tensor's copy constructor, a plan) does explicitly through
// kronex::device::copy. The contents are unspecified until written.
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>

#include "../../core/error.hpp"
#include "runtime.hpp"

namespace kronex {

template <class T>
class device_buffer {
  static_assert(std::is_trivially_copyable_v<T>, "kronex::device_buffer: T must be trivially copyable");

public:
  using value_type = T;

  device_buffer() noexcept = default;
  // n values, uninitialised. backend_unavailable without a device; device_error when the
  // allocation fails (the message names the size).
  explicit device_buffer(std::size_t n) : m_data(static_cast<T*>(detail::device::allocate_bytes(bytes_for(n)))), m_size(n) {}
  ~device_buffer() { detail::device::free_bytes(m_data); }

  device_buffer(const device_buffer&) = delete;
  device_buffer& operator=(const device_buffer&) = delete;
  device_buffer(device_buffer&& other) noexcept
      : m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0)) {}
  device_buffer& operator=(device_buffer&& other) noexcept {
    device_buffer(std::move(other)).swap(*this);
    return *this;
  }
  void swap(device_buffer& other) noexcept {
    std::swap(m_data, other.m_data);
    std::swap(m_size, other.m_size);
  }

  // The raw device pointer (null when empty).
  T* data() noexcept { return m_data; }
  const T* data() const noexcept { return m_data; }
  std::size_t size() const noexcept { return m_size; }
  std::size_t bytes() const noexcept { return m_size * sizeof(T); }
  bool empty() const noexcept { return m_size == 0; }

private:
  static std::size_t bytes_for(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
      throw device_error(detail::message("kronex: device allocation of ", n, " values of ", sizeof(T),
                                         " bytes: the size in bytes overflows std::size_t"));
    }
    return n * sizeof(T);
  }

  T* m_data = nullptr;
  std::size_t m_size = 0;
};

template <class T>
void swap(device_buffer<T>& a, device_buffer<T>& b) noexcept {
  a.swap(b);
}

} // namespace kronex
