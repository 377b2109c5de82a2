#pragma once
// The one place that turns a run-time rank (1 to 6, the number of factors kron() takes) into a
// compile-time one, as dtype.hpp's with_dtype does for value types: the kronex command's
// programs and the Python package's operators.
#include <cstddef>
#include <type_traits>

#include <kronex/core/error.hpp>

namespace kronex::dsl {

// Calls f(std::integral_constant<std::size_t, D>{}) for rank d; invalid_operator outside 1..6.
template <class F>
decltype(auto) with_rank(std::size_t d, F&& f) {
  switch (d) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 5: return f(std::integral_constant<std::size_t, 5>{});
    case 6: break;
    default: throw invalid_operator(detail::message("kronex: operators have 1 to 6 factors, not ", d));
  }
  return f(std::integral_constant<std::size_t, 6>{});
}

} // namespace kronex::dsl
