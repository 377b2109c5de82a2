#pragma once
// any_factor<T>: a factor whose kind (identity, diagonal, banded, dense, function) is chosen at
// run time, for code that builds factors from files or user input (the kronex DSL reads Matrix
// Market files into it). The value type stays a compile-time parameter: kron() still checks that
// all factors agree. It views as the factor it holds, so it compiles to exactly the plan the
// concrete factor would.
#include <cstddef>
#include <type_traits>
#include <utility>
#include <variant>

#include <xtensor/xtensor.hpp>

#include "banded.hpp"
#include "diagonal.hpp"
#include "function_solver.hpp"
#include "identity.hpp"

namespace kronex {

template <class T>
class any_factor {
public:
  using value_type = T;
  using storage = std::variant<identity_factor, diagonal_factor<T>, banded<T>, xt::xtensor<T, 2>, function_solver<T>>;

  // From any of the factor types above (implicit, like std::variant: any_factor<double> f = banded<double>(...)).
  template <class F, class = std::enable_if_t<std::is_constructible_v<storage, F&&> &&
                                              !std::is_same_v<std::decay_t<F>, any_factor>>>
  any_factor(F&& f) : m_factor(std::forward<F>(f)) {}

  std::size_t size() const {
    return std::visit([](const auto& f) -> std::size_t {
      if constexpr (std::is_same_v<std::decay_t<decltype(f)>, xt::xtensor<T, 2>>) return f.shape()[0];
      else return f.size();
    }, m_factor);
  }

  const storage& get() const noexcept { return m_factor; }

private:
  storage m_factor;
};

} // namespace kronex
