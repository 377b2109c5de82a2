#pragma once
// How a factor is applied: as is, transposed, or conjugate-transposed (the adjoint). Transposes
// are never formed: the solve kernels read the same LU factors in another order.

namespace kronex {

enum class op { none, transpose, adjoint };

// LAPACK's trans letter, also used in printed plans.
inline char trans_letter(op o) { return o == op::none ? 'N' : (o == op::transpose ? 'T' : 'C'); }

// Composition: transpose(adjoint(A)) is conj(A), which kron factors of real type equal A; for
// complex types kronex keeps the three forms above and rejects a plain conjugate (see kron.hpp).
inline op compose_transpose(op o) { return o == op::none ? op::transpose : op::none; }
inline op compose_adjoint(op o) { return o == op::none ? op::adjoint : op::none; }

} // namespace kronex
