#pragma once
// Opt-in checks for NaN and +-Inf. kronex does not look for them by default (a solve with a NaN
// in its input gives NaNs, as IEEE arithmetic does), because checking reads every value once:
//   check_finite(x, what)        any host tensor or expression (xtensor): non_finite_value
//                                naming `what`, the first offending index and the value;
//   compile_options::check_finite  every factor's stored entries, in the plan's check phase:
//                                invalid_factor naming the mode, the entry and the value.
#include <cmath>
#include <cstddef>
#include <string>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "factor_view.hpp"

namespace kronex {

namespace detail {

template <class T>
bool is_finite_value(const T& v) {
  if constexpr (value_traits<T>::is_complex) return std::isfinite(v.real()) && std::isfinite(v.imag());
  else return std::isfinite(v);
}

// Throws invalid_factor at the first stored entry of f that is not finite.
template <class T>
void check_factor_finite(const factor_view<T>& f, std::size_t mode) {
  auto fail = [&](std::size_t i, std::size_t j, const T& v) {
    throw invalid_factor(message("kronex: the factor for mode ", mode, " (", f.describe(), ") has a non-finite entry A(",
                                 i, ", ", j, ") = ", v));
  };
  switch (f.kind) {
    case factor_kind::banded: {
      const std::size_t w = f.kl + f.ku + 1;
      for (std::size_t i = 0; i < f.n; ++i)
        for (std::size_t d = 0; d < w; ++d) {
          const T v = f.data[i * w + d];
          if (is_finite_value(v)) continue;
          const long j = long(i) + long(d) - long(f.kl);
          fail(i, std::size_t((j + long(f.n)) % long(f.n)), v);
        }
      break;
    }
    case factor_kind::dense:
      for (std::size_t i = 0; i < f.n; ++i)
        for (std::size_t j = 0; j < f.n; ++j)
          if (!is_finite_value(f(i, j))) fail(i, j, f(i, j));
      break;
    case factor_kind::diagonal:
      for (std::size_t i = 0; i < f.n; ++i)
        if (!is_finite_value(f.data[i])) fail(i, i, f.data[i]);
      break;
    case factor_kind::identity:
    case factor_kind::function:
      break;
  }
}

} // namespace detail

// Throws non_finite_value if x (an xtensor container or expression, any rank) holds a NaN or an
// infinity: the message names `what`, the first such index in C order and its value.
template <class E>
void check_finite(const E& x, const std::string& what = "tensor") {
  const auto& shape = x.shape();
  std::size_t flat = 0;
  for (auto it = x.begin(); it != x.end(); ++it, ++flat) {
    if (detail::is_finite_value(*it)) continue;
    std::string index;
    std::size_t rest = flat;
    for (std::size_t k = shape.size(); k-- > 0;) {
      index = std::to_string(rest % shape[k]) + (index.empty() ? "" : ", ") + index;
      rest /= shape[k];
    }
    throw non_finite_value(detail::message("kronex: ", what, " has a non-finite value at index (", index, "): ", *it));
  }
}

} // namespace kronex
