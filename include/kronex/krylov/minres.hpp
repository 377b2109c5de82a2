#pragma once
// Preconditioned MINRES (Paige and Saunders), for a hermitian A that may be indefinite, with a
// hermitian positive definite preconditioner M. The Lanczos recurrences and rotations are those
// of SciPy's scipy.sparse.linalg.minres; the Lanczos coefficients are real (A and M hermitian),
// so the rotations are too.
//
// Preconditioned MINRES minimises the residual in the norm of M, not ||r||; to test ||r|| as
// every kronex method does, the residual itself is updated alongside x: x += phi w and
// r -= phi A w, with A w by the same three-term recurrence as w from A v (which the Lanczos step
// computes anyway): no extra apply of A, three more vectors. Per iteration: one apply of A and
// one of M, two reductions (v^H y, then r^H M r), and r^H r at a check. Breakdown: r^H M r < 0
// (indefinite_preconditioner). Unlike SciPy, the test is ||r|| <= max(rtol ||b||, atol), not
// SciPy's ||r|| / (||A|| ||x||).
#include <cstddef>
#include <utility>

#include "control.hpp"

namespace kronex::krylov {

struct minres_method {
  enum : std::size_t {
    beta = common_slots::count, old_beta, alpha, delta, gbar, dbar, eps, old_eps, gamma, cs, sn, phi, phibar, denom,
    t1, t2, rr, slot_count
  };
  enum : std::size_t { r, v1, v2, y, zbuf, v, av, w0, w1, w2, aw0, aw1, aw2, vector_count };

  static constexpr std::size_t default_max_factor = 5;

  template <class Space>
  static void run(control<Space>& c) {
    Space& s = c.space();
    const auto S = [](std::size_t i) { return slot{i}; };
    const auto r_ = s.vector(r), zbuf_ = s.vector(zbuf), v_ = s.vector(v), av_ = s.vector(av);
    // Rotated by handle each iteration: the Lanczos residuals (r1, r2) with the new one in y,
    // and the directions w, A w with their two predecessors.
    auto r1 = s.vector(v1), r2 = s.vector(v2), y_ = s.vector(y);
    auto w = s.vector(w0), wm1 = s.vector(w1), wm2 = s.vector(w2);
    auto aw = s.vector(aw0), awm1 = s.vector(aw1), awm2 = s.vector(aw2);
    const auto x = c.x();

    c.residual(r_);
    s.copy(r_, r1);
    s.copy(r_, r2);
    auto z = c.precondition(r2, zbuf_);
    s.dots({{r2, z, S(t1)}, {r_, r_, S(rr)}});
    s.guard(S(t1), guard_test::nonnegative, krylov_status::indefinite_preconditioner);
    s.sqrt(S(beta), S(t1));
    s.assign(S(old_beta), common_slots::zero);
    s.assign(S(dbar), common_slots::zero);
    s.assign(S(eps), common_slots::zero);
    s.assign(S(phibar), S(beta));
    s.assign(S(cs), common_slots::minus_one);
    s.assign(S(sn), common_slots::zero);
    s.zero(w);
    s.zero(wm1);
    s.zero(aw);
    s.zero(awm1);
    s.sqrt(common_slots::norm, S(rr));
    if (c.check(common_slots::norm, 0)) return;
    for (std::size_t k = 1;; ++k) {
      // Lanczos: v = z / beta, y = A v - (beta / old_beta) r1 - (alpha / beta) r2.
      s.div(S(t1), common_slots::one, S(beta));
      s.copy(z, v_);
      s.scale(S(t1), v_);
      c.apply(v_, y_);
      s.copy(y_, av_);
      if (k >= 2) {
        s.div(S(t1), S(beta), S(old_beta));
        s.neg(S(t1), S(t1));
        s.axpy(S(t1), r1, y_);
      }
      s.dots({{v_, y_, S(alpha)}});
      s.real(S(alpha), S(alpha));
      s.div(S(t1), S(alpha), S(beta));
      s.neg(S(t1), S(t1));
      s.axpy(S(t1), r2, y_);
      std::swap(r1, r2);  // r1 = r2, r2 = y, and y takes the old r1's storage
      std::swap(r2, y_);
      z = c.precondition(r2, zbuf_);
      s.assign(S(old_beta), S(beta));
      s.dots({{r2, z, S(t1)}});
      s.guard(S(t1), guard_test::nonnegative, krylov_status::indefinite_preconditioner);
      s.sqrt(S(beta), S(t1));

      // The previous rotation, then the new one (cs, sn) that eliminates beta.
      s.assign(S(old_eps), S(eps));
      s.mul(S(delta), S(cs), S(dbar));  // delta = cs dbar + sn alpha
      s.mul(S(t1), S(sn), S(alpha));
      s.add(S(delta), S(delta), S(t1));
      s.mul(S(gbar), S(sn), S(dbar));  // gbar = sn dbar - cs alpha
      s.mul(S(t1), S(cs), S(alpha));
      s.sub(S(gbar), S(gbar), S(t1));
      s.mul(S(eps), S(sn), S(beta));  // eps = sn beta
      s.mul(S(dbar), S(cs), S(beta));  // dbar = -cs beta
      s.neg(S(dbar), S(dbar));
      s.hypot(S(gamma), S(gbar), S(beta));
      s.div(S(cs), S(gbar), S(gamma));
      s.div(S(sn), S(beta), S(gamma));
      s.mul(S(phi), S(cs), S(phibar));
      s.mul(S(phibar), S(sn), S(phibar));
      s.div(S(denom), common_slots::one, S(gamma));

      // w = (v - old_eps w_{-2} - delta w_{-1}) / gamma, and the same for A w from A v.
      std::swap(wm2, wm1);  // w_{-2} = w_{-1}, w_{-1} = w, w takes the old w_{-2}'s storage
      std::swap(wm1, w);
      std::swap(awm2, awm1);
      std::swap(awm1, aw);
      s.neg(S(t1), S(old_eps));
      s.neg(S(t2), S(delta));
      s.copy(v_, w);
      s.axpy(S(t1), wm2, w);
      s.axpy(S(t2), wm1, w);
      s.scale(S(denom), w);
      s.copy(av_, aw);
      s.axpy(S(t1), awm2, aw);
      s.axpy(S(t2), awm1, aw);
      s.scale(S(denom), aw);
      s.axpy(S(phi), w, x);
      s.neg(S(t1), S(phi));
      s.axpy(S(t1), aw, r_);
      if (c.due(k)) {
        s.dots({{r_, r_, S(rr)}});
        s.sqrt(common_slots::norm, S(rr));
        if (c.check(common_slots::norm, k)) return;
      }
    }
  }
};

} // namespace kronex::krylov
