#pragma once
// function_solver<T>: a 1D factor known only by its solver, a function the application supplies
// (a multigrid cycle, an FFT-based solver, a solver from another library). kronex calls
//   solve(x, count)
// to solve A y = x in place for `count` contiguous vectors of length n (x[c*n + i]). It is only
// usable inside solve()/inverse(), untransposed: kronex has no entries of A to apply or transpose.
//
// Having no entries, it cannot be densified: on the device its mode runs as a visible
// stage_through_host step, with counted copies (the device backend's rule).
#include <cstddef>
#include <functional>
#include <utility>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"

namespace kronex {

template <class T>
class function_solver {
  static_assert(is_value_type_v<T>, "kronex::function_solver: T must be float, double, "
                                                 "std::complex<float> or std::complex<double>");

public:
  using value_type = T;
  using function_type = std::function<void(T* x, std::size_t count)>;

  function_solver(std::size_t n, function_type solve) : m_n(n), m_solve(std::move(solve)) {
    if (n == 0) throw invalid_factor("kronex::function_solver: n must be at least 1");
    if (!m_solve) throw invalid_factor("kronex::function_solver: the solve function is empty");
  }

  std::size_t size() const noexcept { return m_n; }
  const function_type& function() const noexcept { return m_solve; }

private:
  std::size_t m_n;
  function_type m_solve;
};

} // namespace kronex
