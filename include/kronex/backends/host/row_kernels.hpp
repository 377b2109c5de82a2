#pragma once
// The host kernels: run a row program (row_program.hpp) on a strip of V right-hand sides
// (tiles.hpp). V is fixed at compile time, so every row operation is a fixed-length loop the
// compiler vectorises. Complex products are written out by hand because
// std::complex's operator* checks for NaN/inf and does not vectorise.
#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>

#include "../../core/target_clones.hpp"
#include "row_program.hpp"
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

// A real strip row (V values, 128 bytes) as two 64-byte GCC vectors: the kernels below hold a
// row in registers whatever the vectoriser decides (left to it, the float kernel ran scalar).
// Each clone lowers them to its width: 2 zmm (AVX-512), 4 ymm, or 8 xmm registers.
template <class T>
struct strip_row {
  static constexpr std::size_t W = 64 / sizeof(T);
  typedef T vec __attribute__((vector_size(64)));
  vec lo, hi;
  static strip_row load(const T* p) {
    strip_row r;
    std::memcpy(&r.lo, p, 64);
    std::memcpy(&r.hi, p + W, 64);
    return r;
  }
  void store(T* p) const {
    std::memcpy(p, &lo, 64);
    std::memcpy(p + W, &hi, 64);
  }
};

// In place on one strip (n rows of V values, contiguous): b on entry, op(A)^{-1} b on exit. The
// strip stays in L1 while the whole program runs, and its V accumulators live in registers.
// (Interleaving two strips for more independent work was measured slower: it spills registers.)
template <class T>
KRONEX_TARGET_CLONES void run_solve_program(const row_program<T>& p, T* strip) {
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (const auto& o : p.ops) {
    T* r = strip + std::size_t(o.target) * V;
    T* other = strip + std::size_t(o.other) * V;
    if constexpr (value_traits<T>::is_complex) {
      if (o.swap) {
        std::swap_ranges(r, r + V, other);
        continue;
      }
      T acc[V];
      for (std::size_t k = 0; k < V; ++k) acc[k] = r[k];
      if (o.scaled) scale_row<V>(acc, o.scale);
      for (index_t e = o.begin; e < o.end; ++e) sub_scaled<V>(acc, coef[e], strip + std::size_t(src[e]) * V);
      for (std::size_t k = 0; k < V; ++k) r[k] = acc[k];
    } else {
      static_assert(V == 2 * strip_row<T>::W, "a strip row is two vectors");
      if (o.swap) {  // both loaded before either is stored: right for a row swapped with itself too
        const strip_row<T> a = strip_row<T>::load(r), b = strip_row<T>::load(other);
        b.store(r);
        a.store(other);
        continue;
      }
      strip_row<T> acc = strip_row<T>::load(r);
      if (o.scaled) {
        acc.lo *= o.scale;
        acc.hi *= o.scale;
      }
      for (index_t e = o.begin; e < o.end; ++e) {
        const T c = coef[e];
        const strip_row<T> s = strip_row<T>::load(strip + std::size_t(src[e]) * V);
        acc.lo -= c * s.lo;
        acc.hi -= c * s.hi;
      }
      acc.store(r);
    }
  }
}

// Out of place on one strip: out = op(A) in.
template <class T>
KRONEX_TARGET_CLONES void run_apply_program(const row_program<T>& p, const T* in, T* out) {
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  for (std::size_t i = 0; i < p.n; ++i) {
    if constexpr (value_traits<T>::is_complex) {
      T acc[V] = {};
      // acc -= (-c) * in keeps one multiply-add kernel for both programs.
      for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e)
        sub_scaled<V>(acc, T(-coef[e]), in + std::size_t(src[e]) * V);
      for (std::size_t k = 0; k < V; ++k) out[i * V + k] = acc[k];
    } else {
      strip_row<T> acc{};
      for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e) {
        const T c = coef[e];
        const strip_row<T> s = strip_row<T>::load(in + std::size_t(src[e]) * V);
        acc.lo += c * s.lo;
        acc.hi += c * s.hi;
      }
      acc.store(out + i * V);
    }
  }
}

} // namespace kronex::detail
