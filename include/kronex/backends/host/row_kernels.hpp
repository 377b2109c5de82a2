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

// A real row of N * 64 bytes (a strip row: N = 2, V values) as N 64-byte GCC vectors: the
// kernels below hold a row in registers whatever the vectoriser decides (left to it, the float
// kernel ran scalar). Each clone lowers a vector to its width: 1 zmm (AVX-512), 2 ymm, or 4 xmm.
template <class T, std::size_t N = 2>
struct strip_row {
  static constexpr std::size_t W = 64 / sizeof(T);
  typedef T vec __attribute__((vector_size(64)));
  vec v[N];
  static strip_row load(const T* p) {
    strip_row r;
    for (std::size_t k = 0; k < N; ++k) std::memcpy(&r.v[k], p + k * W, 64);
    return r;
  }
  void store(T* p) const {
    for (std::size_t k = 0; k < N; ++k) std::memcpy(p + k * W, &v[k], 64);
  }
  void scale(T c) {
    for (std::size_t k = 0; k < N; ++k) v[k] *= c;
  }
  // this += c * s, this -= c * s
  void add_scaled(T c, const strip_row& s) {
    for (std::size_t k = 0; k < N; ++k) v[k] += c * s.v[k];
  }
  void sub_scaled(T c, const strip_row& s) {
    for (std::size_t k = 0; k < N; ++k) v[k] -= c * s.v[k];
  }
};

// In place on K blocks of V columns of n rows: b on entry, op(A)^{-1} b on exit. Row i of
// block k is at strip + k * gap + i * stride (stride >= V): K gathered strips (stride V, gap
// n * V), or 2V columns of a slab in cache (stride R, gap V). Substitution is a chain of
// dependent row updates (each waits for the last multiply-add of the row written before it and
// that row's store), so latency bounds it: K = 2 blocks are two independent chains in flight,
// nearly twice the work per step of the chain. The accumulators live in registers.
// Each operation also prefetches K lines of `ahead` (tiles.hpp): the loads are free.
template <class T, std::size_t K = 1>
KRONEX_TARGET_CLONES void run_solve_program(const row_program<T>& p, T* strip, std::size_t stride, std::size_t gap,
                                            prefetch_stream& ahead) {
  static_assert(!value_traits<T>::is_complex || K == 1, "complex rows run one chain (solve_chains)");
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  for (const auto& o : p.ops) {
    for (std::size_t k = 0; k < K; ++k) next.next();
    T* r = strip + std::size_t(o.target) * stride;
    T* other = strip + std::size_t(o.other) * stride;
    if constexpr (value_traits<T>::is_complex) {
      if (o.swap) {
        std::swap_ranges(r, r + V, other);
        continue;
      }
      T acc[V];
      for (std::size_t j = 0; j < V; ++j) acc[j] = r[j];
      if (o.scaled) scale_row<V>(acc, o.scale);
      for (index_t e = o.begin; e < o.end; ++e) sub_scaled<V>(acc, coef[e], strip + std::size_t(src[e]) * stride);
      for (std::size_t j = 0; j < V; ++j) r[j] = acc[j];
    } else {
      using row = strip_row<T>;
      if (o.swap) {  // all loaded before any is stored: right for a row swapped with itself too
        row a[K], b[K];
        for (std::size_t k = 0; k < K; ++k) a[k] = row::load(r + k * gap), b[k] = row::load(other + k * gap);
        for (std::size_t k = 0; k < K; ++k) b[k].store(r + k * gap), a[k].store(other + k * gap);
        continue;
      }
      row acc[K];
      for (std::size_t k = 0; k < K; ++k) acc[k] = row::load(r + k * gap);
      if (o.scaled)
        for (std::size_t k = 0; k < K; ++k) acc[k].scale(o.scale);
      for (index_t e = o.begin; e < o.end; ++e) {
        const T c = coef[e];
        const T* s = strip + std::size_t(src[e]) * stride;
        for (std::size_t k = 0; k < K; ++k) acc[k].sub_scaled(c, row::load(s + k * gap));
      }
      for (std::size_t k = 0; k < K; ++k) acc[k].store(r + k * gap);
    }
  }
  ahead = next;
}

// The blocks run_solve_program takes at once (K) on panels and slabs: two chains for real types.
// A complex row update's products are off its chain already; two complex chains interleaved
// were measured 1.5x slower (GCC does not keep both rows' accumulators in registers).
template <class T>
inline constexpr std::size_t solve_chains = value_traits<T>::is_complex ? 1 : 2;

// Out of place on one strip: out = op(A) in, rows `stride` apart in both; two lines of `ahead`
// prefetched per row (a strip row is two lines, and each row is written once).
template <class T>
KRONEX_TARGET_CLONES void run_apply_program(const row_program<T>& p, const T* in, T* out, std::size_t stride,
                                            prefetch_stream& ahead) {
  constexpr std::size_t V = strip_width<T>;
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  prefetch_stream next = ahead;  // a local copy stays in registers (out may alias it)
  for (std::size_t i = 0; i < p.n; ++i) {
    next.next();
    next.next();
    if constexpr (value_traits<T>::is_complex) {
      T acc[V] = {};
      // acc -= (-c) * in keeps one multiply-add kernel for both programs.
      for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e)
        sub_scaled<V>(acc, T(-coef[e]), in + std::size_t(src[e]) * stride);
      for (std::size_t k = 0; k < V; ++k) out[i * stride + k] = acc[k];
    } else {
      strip_row<T> acc{};
      for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e)
        acc.add_scaled(coef[e], strip_row<T>::load(in + std::size_t(src[e]) * stride));
      acc.store(out + i * stride);
    }
  }
  ahead = next;
}

} // namespace kronex::detail

namespace kronex::detail {

// The kernels with nothing to prefetch.
template <class T>
void run_solve_program(const row_program<T>& p, T* strip) {
  prefetch_stream none;
  run_solve_program(p, strip, strip_width<T>, 0, none);
}
template <class T>
void run_apply_program(const row_program<T>& p, const T* in, T* out) {
  prefetch_stream none;
  run_apply_program(p, in, out, strip_width<T>, none);
}

} // namespace kronex::detail
