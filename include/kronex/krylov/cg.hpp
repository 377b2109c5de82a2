#pragma once
// Preconditioned conjugate gradients, for a hermitian positive definite A and a hermitian positive
// definite preconditioner M (approximating A^{-1}); without M, plain CG. The recurrences are
// SciPy's (scipy.sparse.linalg.cg); the tested residual is the recursively updated r.
//
// Per iteration: one apply of A, one of M, two reductions: p^H q, then {r^H r, r^H z} fused (so
// the preconditioner is applied before the check that may stop the solve: one extra apply of M
// in the whole solve). Breakdowns: p^H A p <= 0 (indefinite_operator), r^H M r <= 0
// (indefinite_preconditioner).
#include <cstddef>

#include "control.hpp"

namespace kronex::krylov {

struct cg_method {
  enum : std::size_t { rho = common_slots::count, rho_new, pq, alpha, neg_alpha, beta, rr, slot_count };
  enum : std::size_t { r, z, p, q, vector_count };

  static constexpr std::size_t default_max_factor = 10;

  template <class Space>
  static void run(control<Space>& c) {
    Space& s = c.space();
    const auto S = [](std::size_t i) { return slot{i}; };
    const auto r_ = s.vector(r), z_ = s.vector(z), p_ = s.vector(p), q_ = s.vector(q);
    const auto x = c.x();

    c.residual(r_);
    auto zz = c.precondition(r_, z_);
    s.dots({{r_, r_, S(rr)}, {r_, zz, S(rho)}});
    s.guard(S(rho), guard_test::positive, krylov_status::indefinite_preconditioner);
    s.copy(zz, p_);
    s.sqrt(common_slots::norm, S(rr));
    if (c.check(common_slots::norm, 0)) return;
    for (std::size_t k = 1;; ++k) {
      c.apply(p_, q_);
      s.dots({{p_, q_, S(pq)}});
      s.guard(S(pq), guard_test::positive, krylov_status::indefinite_operator);
      s.div(S(alpha), S(rho), S(pq));
      s.neg(S(neg_alpha), S(alpha));
      s.axpy(S(alpha), p_, x);
      s.axpy(S(neg_alpha), q_, r_);
      zz = c.precondition(r_, z_);
      s.dots({{r_, r_, S(rr)}, {r_, zz, S(rho_new)}});
      s.guard(S(rho_new), guard_test::positive, krylov_status::indefinite_preconditioner);
      if (c.due(k)) {
        s.sqrt(common_slots::norm, S(rr));
        if (c.check(common_slots::norm, k)) return;
      }
      s.div(S(beta), S(rho_new), S(rho));
      s.assign(S(rho), S(rho_new));
      s.xpay(zz, S(beta), p_);
    }
  }
};

} // namespace kronex::krylov
