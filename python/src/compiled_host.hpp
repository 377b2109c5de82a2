#pragma once
// The host backend for compiled_impl.hpp: host_operator over host_plan (one Kronecker product) or
// host_composite_plan (the algebra), on host memory. Its work is done when run() returns.
#include <cstddef>

#include <kronex/compile.hpp>

#include "compiled.hpp"

namespace kronex::python {

struct host_backend {
  template <class T, std::size_t D>
  using kron_operator = host_operator<T, D>;
  template <class T, std::size_t D>
  using tree_operator = host_operator<T, D, kronex::detail::host_composite_plan<T>>;
  template <class T>
  using kron_plan = kronex::detail::host_plan<T>;
  template <class T>
  using tree_plan = kronex::detail::host_composite_plan<T>;
  static constexpr memory_space memory = memory_space::host;
  static void finish() noexcept {}
};

} // namespace kronex::python
