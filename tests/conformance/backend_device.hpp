#pragma once
// The conformance suite's adaptor for the device backend (operands are kronex::device_tensor):
// the same source links the CPU device or CUDA; without a visible device it exits 77 (skipped).
// See backend_host.hpp for what an adaptor provides.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kronex_device_test_support.hpp"

#include "single_layout.hpp"

namespace kronex_conformance {

struct backend : single_layout {
  static constexpr const char* name = "device";
  static kronex::compile_options options() { return {}; }
  static constexpr std::size_t max_rank = 4;
  static constexpr bool every_kind_tuple = true;
  template <class T, std::size_t D>
  using tensor = kronex::device_tensor<T, D>;

  template <std::size_t D>
  static std::string layout_text(const std::array<int, D>&) {
    return std::string("device ") + kronex::device::system_name();
  }

  template <class T, std::size_t D>
  static tensor<T, D> upload(const xt::xtensor<T, D>& b, const std::array<int, D>&) { return tensor<T, D>(b); }
  template <class T, std::size_t D>
  static tensor<T, D> like(const tensor<T, D>& t) { return tensor<T, D>(t.shape()); }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> download(const tensor<T, D>& t) { return t.to_host(); }
};

} // namespace kronex_conformance
