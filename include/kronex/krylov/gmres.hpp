#pragma once
// Restarted GMRES(m) with right preconditioning: it builds an orthonormal basis V of the Krylov
// space of A M, minimises ||b - A (x0 + M V y)|| over y, and updates x = x0 + M (V y) at the end
// of each cycle of m = restart iterations. Because the preconditioner is on the right, the
// least-squares residual |g_{j+1}| that the Givens rotations give at each iteration is the
// residual of A x = b itself (in exact arithmetic): that is the tested residual. Each restart
// recomputes the true residual b - A x to start the next cycle.
//
// The Hessenberg matrix, the rotations and the right-hand side g live in the space's slots
// (givens/rotate), so a check reads one number. Orthogonalisation is classical Gram-Schmidt done
// twice (CGS2): each pass is one batched reduction of j + 1 inner products (MPI: one
// MPI_Allreduce), as stable as modified Gram-Schmidt in practice; per iteration one apply of A
// and one of M and three reductions. A "happy breakdown" (the new basis vector is zero: the
// solution is in the Krylov space) needs no test: a zero divisor gives 0 (space.hpp), the basis
// vector is zero and contributes nothing, and the residual estimate is zero at the next check.
#include <cstddef>
#include <vector>

#include "control.hpp"

namespace kronex::krylov {

struct gmres_method {
  // Scalars: beta (the residual norm at a restart), inv, hh; then per restart length m the
  // Hessenberg matrix H ((m+1) x m), the rotations (c, s), g (m+1), y (m) and the Gram-Schmidt
  // coefficients of a pass (m+1) and their negatives (m+1).
  enum : std::size_t { beta = common_slots::count, inv, hh, fixed_slots };
  // Vectors: z (M V_j), u (V y, then M V y), then the basis V_0 .. V_m.
  enum : std::size_t { z, u, basis };

  struct layout {
    std::size_t m;
    slot h(std::size_t i, std::size_t j) const { return {fixed_slots + i + j * (m + 1)}; }
    slot c(std::size_t j) const { return {fixed_slots + (m + 1) * m + j}; }
    slot s(std::size_t j) const { return {fixed_slots + (m + 1) * m + m + j}; }
    slot g(std::size_t i) const { return {fixed_slots + (m + 1) * m + 2 * m + i}; }
    slot y(std::size_t j) const { return {fixed_slots + (m + 1) * m + 3 * m + 1 + j}; }
    slot coef(std::size_t i) const { return {fixed_slots + (m + 1) * m + 4 * m + 1 + i}; }
    slot neg_coef(std::size_t i) const { return {fixed_slots + (m + 1) * m + 5 * m + 2 + i}; }
    std::size_t count() const { return fixed_slots + (m + 1) * m + 6 * m + 3; }
  };

  static std::size_t slots(const settings& st) { return layout{st.restart}.count(); }
  static std::size_t vectors(const settings& st) { return basis + st.restart + 1; }
  static constexpr std::size_t default_max_factor = 10;

  template <class Space>
  static void run(control<Space>& c) {
    using vec = typename Space::vec;
    using term = typename Space::dot_term;
    Space& s = c.space();
    const std::size_t m = c.options().restart;
    const layout L{m};
    const auto S = [](std::size_t i) { return slot{i}; };
    const auto V = [&](std::size_t i) { return s.vector(basis + i); };
    const vec z_ = s.vector(z), u_ = s.vector(u), x = c.x();
    std::vector<term> terms;
    terms.reserve(m + 1);

    c.residual(V(0));
    s.dots({{V(0), V(0), S(hh)}});
    s.sqrt(S(beta), S(hh));
    s.assign(common_slots::norm, S(beta));
    if (c.check(common_slots::norm, 0)) return;
    std::size_t k = 0;
    for (;;) {  // one restart cycle
      s.div(S(inv), common_slots::one, S(beta));
      s.scale(S(inv), V(0));
      s.assign(L.g(0), S(beta));
      for (std::size_t i = 1; i <= m; ++i) s.assign(L.g(i), common_slots::zero);
      bool stop = false;
      std::size_t cols = 0;
      while (cols < m && !stop) {
        const std::size_t j = cols++;
        const vec w = V(j + 1);
        c.apply(c.precondition(V(j), z_), w);
        // w -= V h, twice (CGS2); h accumulates both passes' coefficients.
        for (int pass = 0; pass < 2; ++pass) {
          terms.clear();
          for (std::size_t i = 0; i <= j; ++i) terms.push_back({V(i), w, pass == 0 ? L.h(i, j) : L.coef(i)});
          s.dots(terms);
          for (std::size_t i = 0; i <= j; ++i) {
            if (pass == 1) s.add(L.h(i, j), L.h(i, j), L.coef(i));
            s.neg(L.neg_coef(i), pass == 0 ? L.h(i, j) : L.coef(i));
            s.axpy(L.neg_coef(i), V(i), w);
          }
        }
        s.dots({{w, w, S(hh)}});
        s.sqrt(L.h(j + 1, j), S(hh));
        s.div(S(inv), common_slots::one, L.h(j + 1, j));
        s.scale(S(inv), w);
        // The QR factorisation of H by rotations, and the rotated right-hand side.
        for (std::size_t i = 0; i < j; ++i) s.rotate(L.c(i), L.s(i), L.h(i, j), L.h(i + 1, j));
        s.givens(L.c(j), L.s(j), L.h(j, j), L.h(j + 1, j));
        s.rotate(L.c(j), L.s(j), L.g(j), L.g(j + 1));
        s.abs(common_slots::norm, L.g(j + 1));
        ++k;
        stop = c.due(k) && c.check(common_slots::norm, k);
      }
      // A NaN or an infinity: keep the x of the cycle's start rather than a non-finite update.
      if (stop && c.stopped_non_finite()) return;
      // y = R^{-1} g (R: the rotated H, upper triangular), x += M (V y).
      for (std::size_t i = cols; i-- > 0;) {
        s.assign(L.y(i), L.g(i));
        for (std::size_t l = i + 1; l < cols; ++l) s.sub_mul(L.y(i), L.h(i, l), L.y(l));
        s.div(L.y(i), L.y(i), L.h(i, i));
      }
      s.zero(u_);
      for (std::size_t i = 0; i < cols; ++i) s.axpy(L.y(i), V(i), u_);
      s.axpy(common_slots::one, c.precondition(u_, z_), x);
      if (stop) return;
      c.residual(V(0));
      s.dots({{V(0), V(0), S(hh)}});
      s.sqrt(S(beta), S(hh));
    }
  }
};

} // namespace kronex::krylov
