#pragma once
// What kronex needs to know about a value type: its name (for printed plans), whether it is
// complex, and conjugation that is a no-op for real types.
#include <complex>
#include <type_traits>

namespace kronex {

template <class T>
struct value_traits;

template <>
struct value_traits<float> {
  static constexpr const char* name = "float";
  static constexpr bool is_complex = false;
  using real_type = float;
};
template <>
struct value_traits<double> {
  static constexpr const char* name = "double";
  static constexpr bool is_complex = false;
  using real_type = double;
};
template <>
struct value_traits<std::complex<float>> {
  static constexpr const char* name = "complex<float>";
  static constexpr bool is_complex = true;
  using real_type = float;
};
template <>
struct value_traits<std::complex<double>> {
  static constexpr const char* name = "complex<double>";
  static constexpr bool is_complex = true;
  using real_type = double;
};

template <class T, class = void>
struct is_value_type : std::false_type {};
template <class T>
struct is_value_type<T, std::void_t<decltype(value_traits<T>::name)>> : std::true_type {};
template <class T>
inline constexpr bool is_value_type_v = is_value_type<T>::value;

template <class T>
using real_t = typename value_traits<T>::real_type;

namespace detail {
template <class T>
constexpr T conj_if_complex(const T& v) {
  if constexpr (value_traits<T>::is_complex) {
    return std::conj(v);
  } else {
    return v;
  }
}
} // namespace detail

} // namespace kronex
