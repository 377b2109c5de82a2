#pragma once
// Krylov solves from Python: kronex's CG, BiCGSTAB, GMRES and MINRES (krylov/solver.hpp) on raw
// C-order buffers, with the operator and the preconditioner each given as a linear map: a
// compiled kronex operator, a sparse matrix (sparse_source: kronex::sparse_operator's product),
// or a Python function (called with the GIL taken). The solve itself runs with the GIL released.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <kronex/krylov/options.hpp>

#include "compiled.hpp"
#include "sparse_source.hpp"

namespace kronex::python {

// y = A x on buffers of the solve's value type (x and y never overlap).
using erased_map = std::function<void(const void* x, void* y)>;

// Solves A x = b from the initial guess in x (b and x distinct buffers of `shape`); P empty: no
// preconditioner.
template <class T>
krylov_result krylov_as(krylov_method m, const shape_t& shape, erased_map A, erased_map P, const void* b, void* x,
                        const krylov_options<double>& options);

// A sparse matrix's action as a map in value type t.
erased_map sparse_map(const sparse_source& a, dtype t);
krylov_result krylov(krylov_method m, const shape_t& shape, dtype t, erased_map A, erased_map P, const void* b, void* x,
                     const krylov_options<double>& options);

} // namespace kronex::python
