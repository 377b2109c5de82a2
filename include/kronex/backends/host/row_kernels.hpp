#pragma once
// The host kernels: run a row program (row_program.hpp) on a strip of V right-hand sides
// (tiles.hpp). V is fixed at compile time, so every row operation works on a fixed number of
// vectors held in registers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include "../../core/target_clones.hpp"
#include "row_program.hpp"
#include "tiles.hpp"

namespace kronex::detail {

// A strip row, 128 bytes (V values), as N = 128 / B GCC vectors of B bytes, B the CPU's native
// vector width (with_native_vectors, target_clones.hpp): the kernels below hold rows in registers
// whatever the vectoriser decides (left to it, the float kernel ran scalar, and two complex
// chains spilled). Complex values stay interleaved (re, im): c * s is re(c) * s + im' * swap(s),
// where swap exchanges re and im in each pair and im' = (-im c, im c, ...): two multiply-adds
// and an in-lane permute per vector, where std::complex's operator* checks for NaN/inf and does
// not vectorise.
template <class T, std::size_t B>
struct strip_row {
  using R = real_t<T>;
  static constexpr bool is_complex = value_traits<T>::is_complex;
  static constexpr std::size_t N = 128 / B;          // vectors per row
  static constexpr std::size_t W = B / sizeof(R);    // reals per vector
  typedef R vec __attribute__((vector_size(B)));
  // The same vector at any address of an R: loads and stores through it are plain vector moves.
  typedef R unaligned_vec __attribute__((vector_size(B), aligned(alignof(R)), may_alias));
  vec v[N];

  static strip_row load(const T* p) {
    strip_row r;
    for (std::size_t k = 0; k < N; ++k) r.v[k] = reinterpret_cast<const unaligned_vec*>(p)[k];
    return r;
  }
  void store(T* p) const {
    for (std::size_t k = 0; k < N; ++k) reinterpret_cast<unaligned_vec*>(p)[k] = v[k];
  }

  // c as a real factor and, for complex c, the vector (-im c, im c, ...).
  struct factor {
    R re;
    vec im;
    explicit factor(T c) {
      if constexpr (is_complex) {
        vec sign = {};
        for (std::size_t j = 0; j < W; ++j) sign[j] = j % 2 ? R(1) : R(-1);  // folded to a constant
        re = c.real();
        im = c.imag() * sign;
      } else {
        re = c;
      }
    }
  };
  // Vectors pass by reference here: by value, they would change the ABI between versions.
  // out = (im, re) of each (re, im) pair of x.
  // (Clang: constant indices; GCC and nvcc: a mask vector, as in block_transpose.hpp.)
  template <std::size_t... I>
  static void swap_pairs(const vec& x, vec& out, std::index_sequence<I...>) {
#if defined(__clang__)
    out = __builtin_shufflevector(x, x, (I ^ 1)...);
#else
    typedef std::conditional_t<sizeof(R) == 8, std::int64_t, std::int32_t> lane;
    typedef lane mask __attribute__((vector_size(B)));
    mask swap = {};
    for (std::size_t j = 0; j < W; ++j) swap[j] = lane(j ^ 1);
    out = __builtin_shuffle(x, swap);
#endif
  }
  // out = c * x
  static void product(const factor& f, const vec& x, vec& out) {
    if constexpr (is_complex) {
      vec swapped;
      swap_pairs(x, swapped, std::make_index_sequence<W>{});
      out = f.re * x + f.im * swapped;
    } else {
      out = f.re * x;
    }
  }

  void scale(T c) {
    const factor f(c);
    for (std::size_t k = 0; k < N; ++k) product(f, vec(v[k]), v[k]);
  }
  // this += c * s, this -= c * s
  void add_scaled(T c, const strip_row& s) {
    const factor f(c);
    vec t;
    for (std::size_t k = 0; k < N; ++k) product(f, s.v[k], t), v[k] += t;
  }
  void sub_scaled(T c, const strip_row& s) {
    const factor f(c);
    vec t;
    for (std::size_t k = 0; k < N; ++k) product(f, s.v[k], t), v[k] -= t;
  }
};

// Rows of the strip the solve kernel keeps in registers with B-byte vectors and K chains: the
// rows the last `window_rows` operations wrote. With 32 vector registers (AVX-512) three rows of
// two chains fit beside the accumulators. With 16 (AVX2) one row of one chain of real values
// does (solve_chains); complex rows also need their permutes and sign vectors in registers.
template <class T, std::size_t B, std::size_t K>
inline constexpr std::size_t window_rows =
    B == 64 ? max_recent_rows : B == 32 && K == 1 && !value_traits<T>::is_complex ? 1 : 0;

// In place on K blocks of V columns of n rows: b on entry, op(A)^{-1} b on exit. Row i of
// block k is at strip + k * gap + i * stride (stride >= V): K gathered strips (stride V, gap
// n * V), or 2V columns of a slab in cache (stride R, gap V). Substitution is a chain of
// dependent row updates (each waits for the last multiply-add of the row written before it and
// that row's store), so latency bounds it: K = 2 blocks are two independent chains in flight,
// nearly twice the work per step of the chain. The accumulators live in registers, and so do
// the rows the last few operations wrote (window_rows): in a band, an operation's last sources
// are exactly those rows (entries come oldest write first; row_op::recent counts them), which
// then come from registers instead of a store and a reload. The operations run in the same order
// either way, so the bits of the result do not depend on the window.
// Each operation also prefetches K lines of `ahead` (tiles.hpp): the loads are free.
template <class T, std::size_t K = 1>
void run_solve_program(const row_program<T>& p, T* const strip_at, const std::size_t row_stride,
                       const std::size_t block_gap, prefetch_stream& ahead) {
  with_native_vectors([&](auto bytes) {
    // Locals, not the captured references: after every store through a strip row's may_alias
    // vectors the compiler would reload those from the caller's frame, a chain of two loads at
    // the head of each operation, which held the kernel back on an AVX2 CPU.
    T* const strip = strip_at;
    const std::size_t stride = row_stride, gap = block_gap;
    using row = strip_row<T, decltype(bytes)::value>;
    constexpr std::size_t KW = window_rows<T, decltype(bytes)::value, K>;
    // window[KW - 1 - j]: the row the (j+1)-th last non-swap operation wrote (KW + 1: never an
    // empty array).
    row window[KW + 1][K] = {};
    const index_t* src = p.src.data();
    const T* coef = p.coef.data();
    prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
    for (const auto& o : p.ops) {
      for (std::size_t k = 0; k < K; ++k) next.next();
      T* r = strip + std::size_t(o.target) * stride;
      T* other = strip + std::size_t(o.other) * stride;
      if (o.swap) {  // all loaded before any is stored: right for a row swapped with itself too
        row a[K], b[K];
        for (std::size_t k = 0; k < K; ++k) a[k] = row::load(r + k * gap), b[k] = row::load(other + k * gap);
        for (std::size_t k = 0; k < K; ++k) b[k].store(r + k * gap), a[k].store(other + k * gap);
        continue;
      }
      const std::size_t m = std::min<std::size_t>(o.recent, KW);  // sources in the window
      row acc[K];
      for (std::size_t k = 0; k < K; ++k) acc[k] = row::load(r + k * gap);
      if (o.scaled)
        for (std::size_t k = 0; k < K; ++k) acc[k].scale(o.scale);
      for (index_t e = o.begin; e < o.end - index_t(m); ++e) {
        const T c = coef[e];
        const T* s = strip + std::size_t(src[e]) * stride;
        for (std::size_t k = 0; k < K; ++k) acc[k].sub_scaled(c, row::load(s + k * gap));
      }
      if constexpr (KW > 0) {
        // The register sources, with M fixed at compile time so the window stays in registers.
        const auto from_window = [&](auto count) {
          constexpr std::size_t M = decltype(count)::value;
          for (std::size_t j = 0; j < M; ++j)
            for (std::size_t k = 0; k < K; ++k) acc[k].sub_scaled(coef[o.end - index_t(M - j)], window[KW - M + j][k]);
        };
        static_assert(KW <= 3, "from_window cases");
        switch (m) {
          case 1: from_window(std::integral_constant<std::size_t, 1>{}); break;
          case 2: from_window(std::integral_constant<std::size_t, std::min<std::size_t>(2, KW)>{}); break;
          case 3: from_window(std::integral_constant<std::size_t, std::min<std::size_t>(3, KW)>{}); break;
          default: break;
        }
        for (std::size_t j = 0; j + 1 < KW; ++j)
          for (std::size_t k = 0; k < K; ++k) window[j][k] = window[j + 1][k];
        for (std::size_t k = 0; k < K; ++k) window[KW - 1][k] = acc[k];
      }
      for (std::size_t k = 0; k < K; ++k) acc[k].store(r + k * gap);
    }
    ahead = next;
  });
}

// The blocks run_solve_program takes at once (K) on panels and slabs with B-byte vectors: two
// chains, except for real values with 32-byte vectors (AVX2) when the program favours one chain
// with the row written last in registers (row_program::one_chain_pays): 16 vector registers
// hold that row or a second chain, not both. In cache, on a Zen 3, ns per value and mode for
// double, two chains -> one: clamped p = 1, 3: 0.56 -> 0.46, 0.75 -> 0.66 (float 0.39 -> 0.34);
// not chosen: periodic p = 3 (folded) 0.94 -> 1.03, clamped p = 7 1.42 -> 1.37 but whole solves
// slower.
template <class T, std::size_t B>
std::size_t solve_chains(const row_program<T>& p) {
  return B == 32 && !value_traits<T>::is_complex && p.one_chain_pays() ? 1 : 2;
}

// In place on `blocks` blocks of V columns (block j at base + j * gap, rows `stride` apart):
// solve_chains blocks at a time for the CPU's vectors, then the rest one by one.
template <class T>
void run_solve_blocks(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride, std::size_t gap,
                      prefetch_stream& ahead) {
  std::size_t K = 2;
  with_native_vectors([&](auto bytes) { K = solve_chains<T, decltype(bytes)::value>(p); });
  std::size_t j = 0;
  if (K == 2)
    for (; j + 2 <= blocks; j += 2) run_solve_program<T, 2>(p, base + j * gap, stride, gap, ahead);
  for (; j < blocks; ++j) run_solve_program<T, 1>(p, base + j * gap, stride, 0, ahead);
}

// Out of place on one strip: out = op(A) in, rows `stride` apart in both; two lines of `ahead`
// prefetched per row (a strip row is two lines, and each row is written once).
template <class T>
void run_apply_program(const row_program<T>& p, const T* const in_at, T* const out_at, const std::size_t row_stride,
                       prefetch_stream& ahead) {
  with_native_vectors([&](auto bytes) {
    const T* const in = in_at;  // locals, as in run_solve_program
    T* const out = out_at;
    const std::size_t stride = row_stride;
    using row = strip_row<T, decltype(bytes)::value>;
    const index_t* src = p.src.data();
    const T* coef = p.coef.data();
    prefetch_stream next = ahead;  // a local copy stays in registers (out may alias it)
    for (std::size_t i = 0; i < p.n; ++i) {
      next.next();
      next.next();
      row acc{};
      for (index_t e = p.row_ptr[i]; e < p.row_ptr[i + 1]; ++e)
        acc.add_scaled(coef[e], row::load(in + std::size_t(src[e]) * stride));
      acc.store(out + i * stride);
    }
    ahead = next;
  });
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
