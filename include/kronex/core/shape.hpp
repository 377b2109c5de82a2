#pragma once
// Runtime shapes and their printing. Below the expression layer kronex works on a shape held at
// run time (type erasure at the plan boundary keeps compile times flat in the rank).
#include <array>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

namespace kronex {

using shape_t = std::vector<std::size_t>;

namespace detail {

inline std::string format_shape(const shape_t& s) {
  std::ostringstream os;
  os << '(';
  for (std::size_t k = 0; k < s.size(); ++k) os << (k ? "," : "") << s[k];
  os << (s.size() == 1 ? ",)" : ")");
  return os.str();
}

// Row-major (C order) strides of a shape, in elements.
inline shape_t c_strides(const shape_t& s) {
  shape_t st(s.size(), 1);
  for (std::size_t k = s.size(); k-- > 1;) st[k - 1] = st[k] * s[k];
  return st;
}

// "(a,b,c):(sa,sb,sc)", the CuTe-style layout notation used in printed plans.
inline std::string format_layout(const shape_t& s, const shape_t& strides) {
  return format_shape(s) + ":" + format_shape(strides);
}

inline std::size_t product(const shape_t& s, std::size_t begin = 0, std::size_t end = std::size_t(-1)) {
  std::size_t p = 1;
  for (std::size_t k = begin; k < s.size() && k < end; ++k) p *= s[k];
  return p;
}

// The same for a fixed-rank shape, without building a vector (device tensors' size()).
template <std::size_t N>
constexpr std::size_t product(const std::array<std::size_t, N>& s) noexcept {
  std::size_t p = 1;
  for (const std::size_t e : s) p *= e;
  return p;
}

// The multi-index of a C-order flat index.
inline shape_t unflatten(std::size_t flat, const shape_t& s) {
  shape_t idx(s.size(), 0);
  for (std::size_t k = s.size(); k-- > 0;) {
    idx[k] = flat % s[k];
    flat /= s[k];
  }
  return idx;
}

template <class Shape>
shape_t to_shape(const Shape& s) {
  return shape_t(std::begin(s), std::end(s));
}

} // namespace detail
} // namespace kronex
