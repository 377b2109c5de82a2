#pragma once
// For adaptors of backends without data layouts (host, device): one layout, all 1s.
#include <array>
#include <cstddef>
#include <vector>

namespace kronex_conformance {

struct single_layout {
  template <std::size_t D>
  static std::vector<std::array<int, D>> layouts() {
    std::array<int, D> one;
    one.fill(1);
    return {one};
  }
};

} // namespace kronex_conformance
