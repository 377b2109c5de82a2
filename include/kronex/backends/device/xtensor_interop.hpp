#pragma once
// device_tensor<T, D>::to_host() returns an xt::xtensor<T, D>. Kept apart from device_tensor.hpp
// so that code compiled by nvcc can use device tensors without parsing xtensor.
#include <array>
#include <cstddef>

#include <xtensor/xtensor.hpp>

#include "device_tensor.hpp"

namespace kronex {

template <class T, std::size_t D>
struct host_tensor_of {
  using type = xt::xtensor<T, D>;
  static type make(const std::array<std::size_t, D>& shape) { return type::from_shape(shape); }
};

} // namespace kronex
