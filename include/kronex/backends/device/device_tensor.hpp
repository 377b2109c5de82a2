#pragma once
// Tensors on the device, in C order like xt::xtensor:
//   device_tensor<T, D>  owns its storage, a device_buffer<T> (memory the device runtime allocates);
//   device_view<T, D>    refers to device memory someone else owns (an application's buffer),
//                        given as a raw device pointer and a shape. T may be const.
// Moving data between host and device is always explicit (the host-tensor constructor,
// to_host(), copy_from_host(), copy_to_host()) and always counted (transfers.hpp).
//
// This header includes neither xtensor nor Thrust, so device code (nvcc) and plain C++ can include it. to_host() returns
// host_tensor_of<T, D>::type, which kronex/backends/device/xtensor_interop.hpp defines as
// xt::xtensor<T, D> (kronex/device.hpp includes it).
#include <array>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>

#include "../../core/error.hpp"
#include "../../core/shape.hpp"
#include "device_buffer.hpp"
#include "transfers.hpp"

namespace kronex {

// The host tensor type to_host() returns: declared here, defined by the interop header.
template <class T, std::size_t D>
struct host_tensor_of;

template <class T, std::size_t D>
class device_view {
public:
  using value_type = std::remove_const_t<T>;
  using shape_type = std::array<std::size_t, D>;
  static constexpr std::size_t rank = D;

  device_view(T* data, const shape_type& shape) : m_data(data), m_shape(shape) {
    if (data == nullptr && size() != 0) throw error("kronex::device_view: null device pointer for a non-empty shape");
  }
  // A view of mutable data is also a view of constant data.
  template <class U, class = std::enable_if_t<std::is_same_v<const U, T> && !std::is_same_v<U, T>>>
  device_view(const device_view<U, D>& v) : m_data(v.data()), m_shape(v.shape()) {}

  T* data() const noexcept { return m_data; }
  const shape_type& shape() const noexcept { return m_shape; }
  std::size_t size() const noexcept { return detail::product(m_shape); }

private:
  T* m_data;
  shape_type m_shape;
};

namespace detail {
// A host tensor kronex can upload from: value_type, data(), shape(), strides() (xt::xtensor and
// friends). Checked for C-order contiguity at run time.
template <class H, class T, class = void>
struct is_host_tensor : std::false_type {};
template <class H, class T>
struct is_host_tensor<H, T,
                      std::void_t<decltype(std::declval<const H&>().data()), decltype(std::declval<const H&>().shape()),
                                  decltype(std::declval<const H&>().strides()), typename H::value_type>>
    : std::is_same<typename H::value_type, T> {};

template <class H>
void check_c_order(const H& h, const char* what) {
  const shape_t shape(h.shape().begin(), h.shape().end());
  const shape_t expected = c_strides(shape);
  for (std::size_t k = 0; k < shape.size(); ++k) {
    // xtensor gives extent-1 axes stride 0; their stride never matters.
    if (shape[k] > 1 && std::size_t(h.strides()[k]) != expected[k]) {
      throw error(message("kronex: ", what, ": the host tensor must be contiguous in C (row-major) order; shape ",
                          format_shape(shape), " has strides ",
                          format_shape(shape_t(h.strides().begin(), h.strides().end())), ", expected ",
                          format_shape(expected)));
    }
  }
}
} // namespace detail

template <class T, std::size_t D>
class device_tensor {
  static_assert(std::is_same_v<T, std::remove_cv_t<T>>, "kronex::device_tensor: T must not be const");

public:
  using value_type = T;
  using shape_type = std::array<std::size_t, D>;
  static constexpr std::size_t rank = D;

  // An empty tensor: every extent 0, no storage (assign to it later).
  device_tensor() : m_shape{} {}

  // Device storage for `shape`; its contents are unspecified until written.
  explicit device_tensor(const shape_type& shape) : m_shape(shape), m_storage(size()) {}

  // Upload of a host tensor (one counted host-to-device copy). The host tensor must be contiguous
  // in C order, with this rank and value type.
  template <class H, class = std::enable_if_t<detail::is_host_tensor<H, T>::value>>
  explicit device_tensor(const H& host) : m_shape(checked_shape(host)) {
    detail::check_c_order(host, "device_tensor upload");
    m_storage = device_buffer<T>(size());
    copy_from_host(host.data());
  }

  // Copies stay on the device (no transfer).
  device_tensor(const device_tensor& other) : m_shape(other.m_shape), m_storage(other.size()) {
    auto& ctx = *detail::device::default_context();
    detail::device::copy_on_device(ctx, data(), other.data(), size() * sizeof(T));
    ctx.synchronize();
  }
  device_tensor& operator=(const device_tensor& other) {
    if (this != &other) {
      device_tensor copy(other);
      swap(copy);
    }
    return *this;
  }
  device_tensor(device_tensor&& other) noexcept
      : m_shape(std::exchange(other.m_shape, shape_type{})), m_storage(std::move(other.m_storage)) {}
  device_tensor& operator=(device_tensor&& other) noexcept {
    swap(other);
    return *this;
  }
  void swap(device_tensor& other) noexcept {
    m_storage.swap(other.m_storage);
    std::swap(m_shape, other.m_shape);
  }

  // Download into a new host tensor (xt::xtensor<T, D>): one counted device-to-host copy.
  template <class U = T>
  typename host_tensor_of<U, D>::type to_host() const {
    auto h = host_tensor_of<U, D>::make(m_shape);
    copy_to_host(h.data());
    return h;
  }
  // Raw forms: size() values, C order, from/to host memory. Counted.
  void copy_to_host(T* dst) const {
    detail::transfer(detail::device::copy_direction::device_to_host, dst, data(), size() * sizeof(T),
                     "device_tensor download");
  }
  void copy_from_host(const T* src) {
    detail::transfer(detail::device::copy_direction::host_to_device, data(), src, size() * sizeof(T),
                     "device_tensor upload");
  }

  // The raw device pointer (for cuBLAS, kernels, or a device_view elsewhere).
  T* data() noexcept { return m_storage.data(); }
  const T* data() const noexcept { return m_storage.data(); }
  const shape_type& shape() const noexcept { return m_shape; }
  std::size_t size() const noexcept { return detail::product(m_shape); }
  // The device memory itself (read-only: replacing it would break the shape); empty for size 0.
  const device_buffer<T>& storage() const noexcept { return m_storage; }

  device_view<T, D> view() noexcept { return {data(), m_shape}; }
  device_view<const T, D> view() const noexcept { return {data(), m_shape}; }
  operator device_view<T, D>() noexcept { return view(); }
  operator device_view<const T, D>() const noexcept { return view(); }

private:
  template <class H>
  static shape_type checked_shape(const H& host) {
    if (host.shape().size() != D) {
      throw dimension_mismatch(detail::message("kronex::device_tensor: a host tensor of rank ", host.shape().size(),
                                               " cannot become a device_tensor of rank ", D));
    }
    shape_type s{};
    for (std::size_t k = 0; k < D; ++k) s[k] = std::size_t(host.shape()[k]);
    return s;
  }

  shape_type m_shape;
  device_buffer<T> m_storage;
};

} // namespace kronex
