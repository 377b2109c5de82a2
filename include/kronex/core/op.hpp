#pragma once
// How a factor is applied: as is, transposed, or conjugate-transposed (the adjoint). Transposes
// are never formed: the solve kernels read the same LU factors in another order.

namespace kronex {

// conjugate (conj(A), no transpose) arises as transpose(adjoint(A)); for real types it equals A.
enum class op { none, transpose, adjoint, conjugate };

// Letter used in printed plans: LAPACK's trans letters N, T, C, and R for a plain conjugate.
inline char trans_letter(op o) {
  switch (o) {
    case op::none: return 'N';
    case op::transpose: return 'T';
    case op::adjoint: return 'C';
    case op::conjugate: return 'R';
  }
  return '?';
}

inline bool is_transposed(op o) { return o == op::transpose || o == op::adjoint; }
inline bool is_conjugated(op o) { return o == op::adjoint || o == op::conjugate; }

inline op make_op(bool transposed, bool conjugated) {
  return transposed ? (conjugated ? op::adjoint : op::transpose) : (conjugated ? op::conjugate : op::none);
}
inline op compose_transpose(op o) { return make_op(!is_transposed(o), is_conjugated(o)); }
inline op compose_adjoint(op o) { return make_op(!is_transposed(o), !is_conjugated(o)); }

} // namespace kronex
