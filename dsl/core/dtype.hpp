#pragma once
// The DSL's names for kronex's four value types, and the one place that turns a run-time dtype
// into a compile-time type (with_dtype), so no other file switches on dtypes.
#include <complex>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace kronex::dsl {

enum class dtype { float32, float64, complex64, complex128 };

inline const char* to_string(dtype t) {
  switch (t) {
    case dtype::float32: return "float32";
    case dtype::float64: return "float64";
    case dtype::complex64: return "complex64";
    case dtype::complex128: return "complex128";
  }
  return "?";
}

inline std::optional<dtype> dtype_from_name(std::string_view s) {
  if (s == "float32") return dtype::float32;
  if (s == "float64") return dtype::float64;
  if (s == "complex64") return dtype::complex64;
  if (s == "complex128") return dtype::complex128;
  return std::nullopt;
}

inline bool is_complex(dtype t) { return t == dtype::complex64 || t == dtype::complex128; }

// Bytes per value.
inline std::size_t size_of(dtype t) {
  switch (t) {
    case dtype::float32: return 4;
    case dtype::float64: return 8;
    case dtype::complex64: return 8;
    case dtype::complex128: return 16;
  }
  return 16;
}

template <class T>
constexpr dtype dtype_of() {
  if constexpr (std::is_same_v<T, float>) return dtype::float32;
  else if constexpr (std::is_same_v<T, double>) return dtype::float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return dtype::complex64;
  else {
    static_assert(std::is_same_v<T, std::complex<double>>, "kronex::dsl: not a kronex value type");
    return dtype::complex128;
  }
}

// Calls f(T{}) with the C++ type of t.
template <class F>
decltype(auto) with_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::float32: return f(float{});
    case dtype::float64: return f(double{});
    case dtype::complex64: return f(std::complex<float>{});
    case dtype::complex128: break;
  }
  return f(std::complex<double>{});
}

} // namespace kronex::dsl
