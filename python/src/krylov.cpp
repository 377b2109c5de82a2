#include "krylov.hpp"

namespace kronex::python {

erased_map sparse_map(const sparse_source& a, dtype t) {
  return dsl::with_dtype(t, [&](auto zero) -> erased_map {
    using T = decltype(zero);
    auto action = a.action<T>();
    return [action](const void* x, void* y) { action->apply(static_cast<const T*>(x), static_cast<T*>(y)); };
  });
}

krylov_result krylov(krylov_method m, const shape_t& shape, dtype t, erased_map A, erased_map P, const void* b, void* x,
                     const krylov_options<double>& options) {
  return dsl::with_dtype(t, [&](auto zero) {
    return krylov_as<decltype(zero)>(m, shape, std::move(A), std::move(P), b, x, options);
  });
}

} // namespace kronex::python
