#pragma once
// factor_view<T>: the one runtime description of a 1D factor that everything below the expression
// layer reads. Each factor type the user can pass to kron() maps to a view here, and nowhere else
// does kronex branch on factor types; adding a factor type means adding one make_view overload.
#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>

#include <xtensor/xtensor.hpp>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "any_factor.hpp"
#include "banded.hpp"
#include "diagonal.hpp"
#include "function_solver.hpp"
#include "identity.hpp"

namespace kronex {

enum class factor_kind { identity, diagonal, banded, dense, function };

inline const char* to_string(factor_kind k) {
  switch (k) {
    case factor_kind::identity: return "identity";
    case factor_kind::diagonal: return "diagonal";
    case factor_kind::banded: return "banded";
    case factor_kind::dense: return "dense";
    case factor_kind::function: return "function";
  }
  return "?";
}

template <class T>
struct factor_view {
  factor_kind kind = factor_kind::identity;
  std::size_t n = 0;
  std::size_t kl = 0, ku = 0;           // banded only
  boundary bc = boundary::clamped;      // banded only
  const T* data = nullptr;              // banded: diagonals; diagonal: values; dense: A(0,0)
  std::ptrdiff_t row_stride = 0, col_stride = 0;  // dense only, in elements
  const std::function<void(T*, std::size_t)>* solve = nullptr;  // function only

  // A(i, j) for any factor kind; used to build factorizations and the dense reference.
  T operator()(std::size_t i, std::size_t j) const {
    switch (kind) {
      case factor_kind::identity: return i == j ? T(1) : T(0);
      case factor_kind::diagonal: return i == j ? data[i] : T(0);
      case factor_kind::dense: return data[std::ptrdiff_t(i) * row_stride + std::ptrdiff_t(j) * col_stride];
      case factor_kind::function:
        throw invalid_factor(detail::message("kronex: a function solver (n=", n, ") has no entries to read"));
      case factor_kind::banded: {
        long d = long(j) - long(i);
        if (bc == boundary::periodic) {
          if (d > long(ku)) d -= long(n);
          if (d < -long(kl)) d += long(n);
        }
        if (d < -long(kl) || d > long(ku)) return T(0);
        return data[i * (kl + ku + 1) + std::size_t(d + long(kl))];
      }
    }
    return T(0);
  }

  std::string describe() const {
    switch (kind) {
      case factor_kind::identity: return detail::message("identity n=", n);
      case factor_kind::diagonal: return detail::message("diagonal n=", n);
      case factor_kind::dense: return detail::message("dense n=", n);
      case factor_kind::function: return detail::message("function n=", n);
      case factor_kind::banded:
        return detail::message("banded n=", n, " kl=", kl, " ku=", ku, " ", to_string(bc));
    }
    return "?";
  }
};

// Value type of a factor; identity factors have none (void) and take the operand's.
template <class F, class = void>
struct factor_value_type { using type = void; };
template <class F>
struct factor_value_type<F, std::void_t<typename F::value_type>> { using type = typename F::value_type; };

template <class F>
struct is_factor : std::false_type {};
template <class T>
struct is_factor<banded<T>> : std::true_type {};
template <class T>
struct is_factor<diagonal_factor<T>> : std::true_type {};
template <>
struct is_factor<identity_factor> : std::true_type {};
template <class T>
struct is_factor<function_solver<T>> : std::true_type {};
template <class T, xt::layout_type L>
struct is_factor<xt::xtensor<T, 2, L>> : std::true_type {};
template <class T>
struct is_factor<any_factor<T>> : std::true_type {};

template <class T>
factor_view<T> make_view(const banded<T>& a) {
  factor_view<T> v;
  v.kind = factor_kind::banded;
  v.n = a.size();
  v.kl = a.lower();
  v.ku = a.upper();
  v.bc = a.boundary_condition();
  v.data = a.diagonals().data();
  return v;
}

template <class T>
factor_view<T> make_view(const diagonal_factor<T>& a) {
  factor_view<T> v;
  v.kind = factor_kind::diagonal;
  v.n = a.size();
  v.data = a.values().data();
  return v;
}

template <class T>
factor_view<T> make_view(const identity_factor& a) {
  factor_view<T> v;
  v.kind = factor_kind::identity;
  v.n = a.size();
  return v;
}

template <class T>
factor_view<T> make_view(const function_solver<T>& a) {
  factor_view<T> v;
  v.kind = factor_kind::function;
  v.n = a.size();
  v.solve = &a.function();
  return v;
}

template <class T, class U, xt::layout_type L>
factor_view<T> make_view(const xt::xtensor<U, 2, L>& a) {
  static_assert(std::is_same_v<T, U>, "kronex: a dense factor's value type must match the other factors'");
  factor_view<T> v;
  v.kind = factor_kind::dense;
  v.n = a.shape()[0];
  v.data = a.data();
  v.row_stride = std::ptrdiff_t(a.strides()[0]);
  v.col_stride = std::ptrdiff_t(a.strides()[1]);
  return v;
}

template <class T>
factor_view<T> make_view(const any_factor<T>& a) {
  return std::visit([](const auto& f) { return make_view<T>(f); }, a.get());
}

namespace detail {
// Eager checks at kron() time, so the error points at the call that made the mistake.
template <class F>
void check_factor(const F&, std::size_t) {}
template <class T, xt::layout_type L>
void check_factor(const xt::xtensor<T, 2, L>& a, std::size_t mode) {
  if (a.shape()[0] != a.shape()[1] || a.shape()[0] == 0) {
    throw invalid_factor(message("kronex::kron: the dense factor for mode ", mode,
                                 " must be square and non-empty, got shape (", a.shape()[0], ",",
                                 a.shape()[1], ")"));
  }
}
template <class T>
void check_factor(const any_factor<T>& a, std::size_t mode) {
  std::visit([&](const auto& f) { check_factor(f, mode); }, a.get());
}

} // namespace detail

} // namespace kronex
