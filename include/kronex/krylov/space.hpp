#pragma once
// The vector space the Krylov methods are written over, once for every backend.
//
// A method (cg.hpp, bicgstab.hpp, gmres.hpp, minres.hpp) never touches a number itself: it asks
// its Space for vector updates, reductions and arithmetic on a small array of scalars that the
// space owns, in the space's memory. A scalar is named by a `slot` (an index into that array).
// Inner products land in slots, coefficients are read from slots, and only `read` brings a value
// to the host: one read per convergence check. On a device the slots live in device memory; under
// MPI the batched `dots` is one MPI_Allreduce. host_space.hpp is the host's implementation.
//
// A Space provides (T = value_type, R = real_type):
//
//   vec, cvec                 cheap handles to a vector of size() values (cvec: read only;
//                             a vec converts to a cvec)
//   map                       a linear map (the operator or the preconditioner) in this space
//   vector(i)                 the i-th workspace vector, allocated when the space was made
//   wrap(T*), wrap(const T*)  a handle to the caller's memory (b and x)
//
//   vector operations (no-ops while a breakdown is flagged, see `guard`):
//   apply(A, x, y)            y = A x
//   copy(x, y)                y = x
//   zero(y)                   y = 0
//   axpy(a, x, y)             y = y + s[a] x
//   xpay(x, a, y)             y = x + s[a] y
//   scale(a, y)               y = s[a] y
//
//   dots({{x, y, a}, ...})    s[a] = x^H y for every term, in one reduction
//
//   slot arithmetic (fixed operations, on the space's scalars):
//   set(a, v)                 s[a] = v (a value from the host: constants, once per solve)
//   assign(a, b)              s[a] = s[b]
//   add(a, b, c)  sub  mul    s[a] = s[b] + s[c], s[b] - s[c], s[b] s[c]
//   div(a, b, c)              s[a] = s[b] / s[c], or 0 when s[c] = 0 (a direction that breaks
//                             down contributes nothing: GMRES and MINRES rely on it)
//   sub_mul(a, b, c)          s[a] = s[a] - s[b] s[c]
//   neg(a, b)                 s[a] = -s[b]
//   real(a, b)                s[a] = Re s[b]
//   abs(a, b)                 s[a] = |s[b]|
//   sqrt(a, b)                s[a] = sqrt(max(Re s[b], 0)) (a NaN stays a NaN)
//   hypot(a, b, c)            s[a] = sqrt(|s[b]|^2 + |s[c]|^2)
//   givens(c, s, a, b)        the plane rotation [c s; -conj(s) c] (c real) taking (s[a], s[b])
//                             to (r, 0): writes c, s, s[a] = r, s[b] = 0. For (0, 0) it is
//                             (c, s) = (0, 1): a rotated least-squares right-hand side then moves
//                             down unchanged, so the residual estimate does not drop for a
//                             column that eliminates nothing (GMRES on a singular A M)
//   rotate(c, s, a, b)        (s[a], s[b]) = (c s[a] + s s[b], -conj(s) s[a] + c s[b])
//   guard(a, test, status)    flags `status` when s[a] fails `test` (positive, nonnegative,
//                             nonzero; a NaN or an infinity flags non_finite), unless a breakdown
//                             is flagged already. From then on vector operations do nothing, so
//                             the iterate stays the last one before the breakdown; slot
//                             arithmetic and dots go on (their results are not used).
//
//   reset()                   clears the flag (start of a solve, and before the final residual)
//   read(a)                   {s[a], the flagged breakdown if any}: the one transfer per check
//
// The flag and the scalars are in the same small array, so `read` is one copy of a few bytes.
#include <cstddef>
#include <functional>
#include <optional>

#include "options.hpp"

namespace kronex::krylov {

// A scalar of the space: an index into its array of scalars.
struct slot {
  std::size_t index;
};

enum class guard_test { positive, nonnegative, nonzero };

// The handles every space uses (host_space, distributed_space and device_space differ only in
// the memory the pointers point to): a vector is a pointer to size() values, a map a function on such pointers.
template <class T>
struct space_handles {
  struct cvec {
    const T* data;
  };
  struct vec {
    T* data;
    operator cvec() const noexcept { return {data}; }
  };
  // y = A x on C-order buffers (x and y never overlap).
  using map = std::function<void(const T* x, T* y)>;
  struct dot_term {
    cvec x, y;
    slot out;
  };
  vec wrap(T* p) const noexcept { return {p}; }
  cvec wrap(const T* p) const noexcept { return {p}; }
};

// What read() brings to the host.
template <class T>
struct slot_value {
  T value;
  std::optional<krylov_status> breakdown;
};

} // namespace kronex::krylov
