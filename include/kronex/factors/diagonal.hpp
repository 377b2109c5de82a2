#pragma once
// kronex::diagonal(v): a diagonal factor; the plan compiler turns it into a scaling step.
#include <cstddef>
#include <vector>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"

namespace kronex {

template <class T>
class diagonal_factor {
  static_assert(is_value_type_v<T>,
                "kronex::diagonal: values must be float, double, std::complex<float> or std::complex<double>");

public:
  using value_type = T;
  explicit diagonal_factor(std::vector<T> d) : m_d(std::move(d)) {
    if (m_d.empty()) throw invalid_factor("kronex::diagonal: the diagonal must have at least one entry");
  }
  std::size_t size() const noexcept { return m_d.size(); }
  const std::vector<T>& values() const noexcept { return m_d; }

private:
  std::vector<T> m_d;
};

template <class T>
diagonal_factor<T> diagonal(std::vector<T> d) { return diagonal_factor<T>(std::move(d)); }

// Any 1D container or xtensor expression with begin()/end().
template <class Container, class T = std::decay_t<decltype(*std::begin(std::declval<const Container&>()))>>
diagonal_factor<T> diagonal(const Container& c) {
  return diagonal_factor<T>(std::vector<T>(std::begin(c), std::end(c)));
}

} // namespace kronex
