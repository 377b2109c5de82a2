#pragma once
// krylov_as<T>, included once per value type by krylov_*.cpp.
#include <utility>

#include <kronex/krylov/solver.hpp>

#include "krylov.hpp"

namespace kronex::python {

namespace detail {

// kronex's solver over maps on raw buffers: krylov_solver without the tensors.
template <class T>
class raw_krylov_solver : public kronex::detail::krylov_solver_base<kronex::krylov::host_space<T>> {
  using space = kronex::krylov::host_space<T>;
  using base = kronex::detail::krylov_solver_base<space>;

public:
  raw_krylov_solver(const kronex::krylov::method_entry<space>& m, std::size_t n, typename base::map A,
                    typename base::map P, const krylov_options<double>& o)
      : base(m, kronex::detail::resolve_options(o, m.name, m.default_max_factor, n), std::move(A), std::move(P),
             [n](std::size_t vectors, std::size_t slots) { return space(n, vectors, slots); }) {}

  krylov_result solve(const T* b, T* x) { return this->run(b, x); }
};

template <class T>
std::function<void(const T*, T*)> typed(erased_map f) {
  if (!f) return {};
  return [f = std::move(f)](const T* x, T* y) { f(x, y); };
}

} // namespace detail

template <class T>
krylov_result krylov_as(krylov_method m, const shape_t& shape, erased_map A, erased_map P, const void* b, void* x,
                        const krylov_options<double>& options) {
  detail::raw_krylov_solver<T> solver(kronex::krylov::entry_for<kronex::krylov::host_space<T>>(m),
                                      kronex::detail::product(shape), detail::typed<T>(std::move(A)),
                                      detail::typed<T>(std::move(P)), options);
  return solver.solve(static_cast<const T*>(b), static_cast<T*>(x));
}

} // namespace kronex::python

// Inside namespace kronex::python.
#define KRONEX_PYTHON_INSTANTIATE_KRYLOV(T)                                                              \
  template krylov_result krylov_as<T>(krylov_method, const shape_t&, erased_map, erased_map, const void*, void*, \
                                      const krylov_options<double>&);
