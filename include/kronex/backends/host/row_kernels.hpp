#pragma once
// The host kernels: run a row program (plan/row_program.hpp) on a panel of W right-hand sides.
// A panel is n rows of W contiguous values (W fixed at compile time, so every row operation is a
// fixed-length loop the compiler vectorises). Complex products are written out by hand because
// std::complex's operator* checks for NaN/inf and does not vectorise.
#include <algorithm>
#include <complex>
#include <cstddef>

#include "../../plan/row_program.hpp"

namespace kronex::detail {

// Panel width in elements: 512 bytes per row, small enough that a panel of a few hundred rows
// stays in L2, wide enough to amortise the per-row bookkeeping.
template <class T>
inline constexpr std::size_t panel_width = 512 / sizeof(T);

// r -= c * s over W entries.
template <std::size_t W, class T>
inline void sub_scaled(T* __restrict r, const T c, const T* __restrict s) {
  if constexpr (value_traits<T>::is_complex) {
    using R = real_t<T>;
    R* rr = reinterpret_cast<R*>(r);
    const R* ss = reinterpret_cast<const R*>(s);
    const R cr = c.real(), ci = c.imag();
    for (std::size_t k = 0; k < W; ++k) {
      const R sr = ss[2 * k], si = ss[2 * k + 1];
      rr[2 * k] -= cr * sr - ci * si;
      rr[2 * k + 1] -= cr * si + ci * sr;
    }
  } else {
    for (std::size_t k = 0; k < W; ++k) r[k] -= c * s[k];
  }
}

// r = c * r over W entries.
template <std::size_t W, class T>
inline void scale_row(T* __restrict r, const T c) {
  if constexpr (value_traits<T>::is_complex) {
    using R = real_t<T>;
    R* rr = reinterpret_cast<R*>(r);
    const R cr = c.real(), ci = c.imag();
    for (std::size_t k = 0; k < W; ++k) {
      const R a = rr[2 * k], b = rr[2 * k + 1];
      rr[2 * k] = cr * a - ci * b;
      rr[2 * k + 1] = cr * b + ci * a;
    }
  } else {
    for (std::size_t k = 0; k < W; ++k) r[k] *= c;
  }
}

// In place: the panel holds b on entry and op(A)^{-1} b on exit.
template <std::size_t W, class T>
void run_solve_program(const row_program<T>& p, T* panel) {
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (const auto& o : p.ops) {
    T* r = panel + std::size_t(o.target) * W;
    if (o.swap) {
      std::swap_ranges(r, r + W, panel + std::size_t(o.other) * W);
      continue;
    }
    for (index_t e = o.begin; e < o.end; ++e) sub_scaled<W>(r, coef[e], panel + std::size_t(src[e]) * W);
    if (o.scaled) scale_row<W>(r, o.scale);
  }
}

// Out of place: out = op(A) in.
template <std::size_t W, class T>
void run_apply_program(const row_program<T>& p, const T* in, T* out) {
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (std::size_t i = 0; i < p.n; ++i) {
    T* r = out + i * W;
    std::fill(r, r + W, T(0));
    // out -= (-c) * in keeps one kernel for both programs.
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) sub_scaled<W>(r, T(-coef[e]), in + std::size_t(src[e]) * W);
  }
}

} // namespace kronex::detail
