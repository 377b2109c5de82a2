#pragma once
// Preconditioned BiCGSTAB (van der Vorst), for a general nonsingular A, with right
// preconditioning by M as in SciPy (scipy.sparse.linalg.bicgstab): the iterate is updated with
// M p and M s, so the tested residual is the recursively updated residual of A x = b itself.
//
// Per iteration: two applies of A and two of M, three reductions: r0^H v, {t^H t, t^H s}, then
// {r^H r, r0^H r} fused (the norm of this iteration's check and the next iteration's rho).
// SciPy's half-step test on ||s|| is not made: omega minimises ||s - omega t||, so the full step
// never has a larger residual, and a zero s gives omega = 0 and r = s. Breakdowns: rho = 0,
// r0^H v = 0, omega = 0 (tested exactly: zero, not below a threshold).
#include <cstddef>

#include "control.hpp"

namespace kronex::krylov {

struct bicgstab_method {
  enum : std::size_t {
    rho = common_slots::count, rho_prev, alpha, neg_alpha, omega, neg_omega, beta, ratio, rv, tt, ts, rr, slot_count
  };
  enum : std::size_t { r, r0, p, v, phat, shat, t, vector_count };

  static constexpr std::size_t default_max_factor = 10;

  template <class Space>
  static void run(control<Space>& c) {
    Space& s = c.space();
    const auto S = [](std::size_t i) { return slot{i}; };
    const auto r_ = s.vector(r), r0_ = s.vector(r0), p_ = s.vector(p), v_ = s.vector(v);
    const auto phat_ = s.vector(phat), shat_ = s.vector(shat), t_ = s.vector(t);
    const auto x = c.x();

    c.residual(r_);
    s.copy(r_, r0_);
    s.dots({{r_, r_, S(rr)}, {r0_, r_, S(rho)}});
    s.sqrt(common_slots::norm, S(rr));
    if (c.check(common_slots::norm, 0)) return;
    for (std::size_t k = 1;; ++k) {
      s.guard(S(rho), guard_test::nonzero, krylov_status::breakdown_rho);
      if (k == 1) {
        s.copy(r_, p_);
      } else {
        // p = r + beta (p - omega v), beta = (rho / rho_prev) (alpha / omega)
        s.guard(S(omega), guard_test::nonzero, krylov_status::breakdown_omega);
        s.div(S(ratio), S(rho), S(rho_prev));
        s.div(S(beta), S(alpha), S(omega));
        s.mul(S(beta), S(beta), S(ratio));
        s.axpy(S(neg_omega), v_, p_);
        s.xpay(r_, S(beta), p_);
      }
      const auto ph = c.precondition(p_, phat_);
      c.apply(ph, v_);
      s.dots({{r0_, v_, S(rv)}});
      s.guard(S(rv), guard_test::nonzero, krylov_status::breakdown_alpha);
      s.div(S(alpha), S(rho), S(rv));
      s.neg(S(neg_alpha), S(alpha));
      s.axpy(S(alpha), ph, x);
      s.axpy(S(neg_alpha), v_, r_);  // r is now s
      const auto sh = c.precondition(r_, shat_);
      c.apply(sh, t_);
      s.dots({{t_, t_, S(tt)}, {t_, r_, S(ts)}});
      s.div(S(omega), S(ts), S(tt));
      s.neg(S(neg_omega), S(omega));
      s.axpy(S(omega), sh, x);
      s.axpy(S(neg_omega), t_, r_);
      s.assign(S(rho_prev), S(rho));
      s.dots({{r_, r_, S(rr)}, {r0_, r_, S(rho)}});
      if (c.due(k)) {
        s.sqrt(common_slots::norm, S(rr));
        if (c.check(common_slots::norm, k)) return;
      }
    }
  }
};

} // namespace kronex::krylov
