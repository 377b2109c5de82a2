#pragma once
// The host kernels: run a row program (plan/row_program.hpp) on a strip of V right-hand sides
// (tiles.hpp). V is fixed at compile time, so every row operation is a fixed-length loop the
// compiler vectorises. Complex products are written out by hand because
// std::complex's operator* checks for NaN/inf and does not vectorise.
#include <algorithm>
#include <complex>
#include <cstddef>

#include "../../plan/row_program.hpp"
#include "tiles.hpp"

namespace kronex::detail {

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

// In place on K strips at once (each n rows of V values, contiguous, strip_size apart): b on
// entry, op(A)^{-1} b on exit. A strip stays in L1 while the whole program runs, and its V
// accumulators live in registers. Each row update depends on the rows just written, so a single
// strip is latency-bound; K independent strips interleaved keep the FMA units busy.
template <std::size_t K, class T>
void run_solve_program(const row_program<T>& p, T* strips, std::size_t strip_size) {
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (const auto& o : p.ops) {
    if (o.swap) {
      for (std::size_t q = 0; q < K; ++q) {
        T* r = strips + q * strip_size + std::size_t(o.target) * V;
        std::swap_ranges(r, r + V, strips + q * strip_size + std::size_t(o.other) * V);
      }
      continue;
    }
    T acc[K][V];
    for (std::size_t q = 0; q < K; ++q)
      for (std::size_t k = 0; k < V; ++k) acc[q][k] = strips[q * strip_size + std::size_t(o.target) * V + k];
    for (index_t e = o.begin; e < o.end; ++e) {
      const T c = coef[e];
      const std::size_t row = std::size_t(src[e]) * V;
      for (std::size_t q = 0; q < K; ++q) sub_scaled<V>(acc[q], c, strips + q * strip_size + row);
    }
    for (std::size_t q = 0; q < K; ++q) {
      if (o.scaled) scale_row<V>(acc[q], o.scale);
      T* r = strips + q * strip_size + std::size_t(o.target) * V;
      for (std::size_t k = 0; k < V; ++k) r[k] = acc[q][k];
    }
  }
}

// Solves `count` strips, interleaving pairs.
template <class T>
void run_solve_program(const row_program<T>& p, T* strips, std::size_t strip_size, std::size_t count) {
  std::size_t q = 0;
  for (; q + 2 <= count; q += 2) run_solve_program<2>(p, strips + q * strip_size, strip_size);
  if (q < count) run_solve_program<1>(p, strips + q * strip_size, strip_size);
}

// Out of place on one strip: out = op(A) in.
template <class T>
void run_apply_program(const row_program<T>& p, const T* in, T* out) {
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (std::size_t i = 0; i < p.n; ++i) {
    T acc[V] = {};
    // acc -= (-c) * in keeps one multiply-add kernel for both programs.
    for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) sub_scaled<V>(acc, T(-coef[e]), in + std::size_t(src[e]) * V);
    for (std::size_t k = 0; k < V; ++k) out[i * V + k] = acc[k];
  }
}

} // namespace kronex::detail
