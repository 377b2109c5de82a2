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

  // Vector k of the row at p.
  static void load_vector(const T* p, std::size_t k, vec& out) { out = reinterpret_cast<const unaligned_vec*>(p)[k]; }
  static void store_vector(T* p, std::size_t k, const vec& x) { reinterpret_cast<unaligned_vec*>(p)[k] = x; }

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

  // Ends a rounded product's life as an expression: the compiler may not fuse it into the next
  // multiply-add (s b - c x as one fused operation rounds differently from the product s b
  // first). The band kernels need it to round a scaled update as the general kernel does, where
  // GCC does not fuse across its loops (a barrier there cost 7 % for p = 7; the band kernel
  // test checks that the bits agree).
  // Only optimised builds fuse; the register constraint is valid where the kernels are inlined
  // (with_native_vectors), which an unoptimised build need not do.
  static void keep_rounded([[maybe_unused]] vec& x) {
#if defined(__OPTIMIZE__)
    if constexpr (!is_complex) asm("" : "+v"(x));
#endif
  }

  // this += c * s (apply programs; the solve kernel works on flat vector arrays)
  void add_scaled(T c, const strip_row& s) {
    const factor f(c);
    vec t;
    for (std::size_t k = 0; k < N; ++k) product(f, s.v[k], t), v[k] += t;
  }
};

// The most rows of the strip the solve kernel keeps in registers with B-byte vectors and K
// chains: the rows the last few operations wrote. A row of K chains is 128 K / B vectors: with 32
// vector registers (AVX-512), three rows of two chains (4 vectors each) fit beside the
// accumulators; with 16 (AVX2), three rows of one chain of real values do (12 vectors and 4
// accumulators; solve_chains). Complex rows also need their permutes and sign vectors.
template <class T, std::size_t B, std::size_t K>
inline constexpr std::size_t window_rows =
    B == 64 || (B == 32 && K == 1 && !value_traits<T>::is_complex) ? max_recent_rows : 0;

// run_solve_program with B-byte vectors, K chains and the rows the last KW operations wrote in
// registers. Rows are flat arrays of vectors (K chains of N each), never strip_row objects: GCC
// kept a window of three strip_rows partly on the stack, and the kernel took twice as long. Each
// chain's source row is loaded whole before its multiply-adds: complex rows ran 5-15 % slower
// when each vector was loaded just before its own, or both chains' rows at once.
template <class T, std::size_t B, std::size_t K, std::size_t KW>
void solve_with_window(const row_program<T>& p, const std::size_t first, const std::size_t last, T* const strip,
                       const std::size_t stride, const std::size_t gap, prefetch_stream& ahead) {
  using row = strip_row<T, B>;
  using vec = typename row::vec;
  using factor = typename row::factor;
  constexpr std::size_t N = row::N, NK = N * K;
  const auto load = [&](const T* r, vec(&out)[NK]) {
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) row::load_vector(r + k * gap, j, out[k * N + j]);
  };
  const auto store = [&](T* r, const vec(&in)[NK]) {
    for (std::size_t k = 0; k < K; ++k)
      for (std::size_t j = 0; j < N; ++j) row::store_vector(r + k * gap, j, in[k * N + j]);
  };
  // window[KW - 1 - j]: the row the (j+1)-th last non-swap operation wrote (KW + 1: never an
  // empty array). Empty at `first`: a range that starts after other operations runs with KW = 0.
  vec window[KW + 1][NK] = {};
  const index_t* src = p.src.data();
  const T* coef = p.coef.data();
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  // Operations through local pointers: p.ops.data() would be reloaded after every strip store.
  const row_op<T>* const end = p.ops.data() + last;
  for (const row_op<T>* at = p.ops.data() + first; at != end; ++at) {
    const row_op<T>& o = *at;
    for (std::size_t k = 0; k < K; ++k) next.next();
    T* r = strip + std::size_t(o.target) * stride;
    if (o.swap) {  // all loaded before any is stored: right for a row swapped with itself too
      T* other = strip + std::size_t(o.other) * stride;
      vec a[NK], b[NK];
      load(r, a);
      load(other, b);
      store(r, b);
      store(other, a);
      continue;
    }
    const std::size_t m = std::min<std::size_t>(o.recent, KW);  // sources in the window
    vec acc[NK];
    load(r, acc);
    if (o.scaled) {
      const factor f(o.scale);
      for (std::size_t v = 0; v < NK; ++v) row::product(f, vec(acc[v]), acc[v]);
    }
    for (index_t e = o.begin; e < o.end - index_t(m); ++e) {
      const factor f(coef[e]);
      const T* s = strip + std::size_t(src[e]) * stride;
      for (std::size_t k = 0; k < K; ++k) {
        vec x[N], t;
        for (std::size_t j = 0; j < N; ++j) row::load_vector(s + k * gap, j, x[j]);
        for (std::size_t j = 0; j < N; ++j) row::product(f, x[j], t), acc[k * N + j] -= t;
      }
    }
    if constexpr (KW > 0) {
      // The register sources, with M fixed at compile time so the window stays in registers.
      const auto from_window = [&](auto count) {
        constexpr std::size_t M = decltype(count)::value;
        for (std::size_t q = 0; q < M; ++q) {
          const factor f(coef[o.end - index_t(M - q)]);
          vec t;
          for (std::size_t v = 0; v < NK; ++v) row::product(f, window[KW - M + q][v], t), acc[v] -= t;
        }
      };
      static_assert(KW <= 3, "from_window cases");
      switch (m) {
        case 1: from_window(std::integral_constant<std::size_t, 1>{}); break;
        case 2: from_window(std::integral_constant<std::size_t, std::min<std::size_t>(2, KW)>{}); break;
        case 3: from_window(std::integral_constant<std::size_t, std::min<std::size_t>(3, KW)>{}); break;
        default: break;
      }
      for (std::size_t j = 0; j + 1 < KW; ++j)
        for (std::size_t v = 0; v < NK; ++v) window[j][v] = window[j + 1][v];
      for (std::size_t v = 0; v < NK; ++v) window[KW - 1][v] = acc[v];
    }
    store(r, acc);
  }
  ahead = next;
}

// Band runs (row_program.hpp) on one block of V real columns with B-byte vectors, one chain of
// `count` operations `lag` apart at a time (a one-front run, or one of the two chains of a lag-2
// run): the general kernel's arithmetic in the same order, without its bookkeeping. The chain's
// operations all read the `Width` rows the chain wrote just before, so those rows rotate through
// registers (the loop is unrolled Width times, so the rotation is a renaming, not moves); the row
// written comes one stride after the last; the coefficients come `Width` per operation from one
// pointer; and the oldest source's registers take the result. With 16 vector registers (AVX2)
// three rows of four vectors and a broadcast coefficient fit; with AVX-512 a row is two vectors.
// In cache (Zen 3, n = 256, clamped, a panel of 8 blocks, float and double, p = 1 to 3) it took
// 1.2-2.6x less time than the general kernel with its window (double p = 3: 0.31-0.45 ns per
// value and mode against 0.51-1.06). With AVX-512 (Zen 5, double p = 3, one strip of n = 2048 in
// L2): clamped 0.19 ns against 0.29, folded periodic 0.22 against 0.48. Complex programs with
// complex coefficients keep the general kernel: their rows need permutes and sign vectors.
template <class T, std::size_t B, std::size_t K>
inline constexpr bool band_kernel = (B == 32 || B == 64) && K == 1 && !value_traits<T>::is_complex;

// One operation of a band kernel on one block: the row at r (scaled by s when Scaled) minus
// coef[q] times the rows in registers, oldest first (rows[Oldest], then on in rotation); the
// result is stored and replaces the oldest row.
template <class T, std::size_t B, std::size_t Width, std::size_t Oldest, bool Scaled>
inline __attribute__((always_inline)) void band_row_update(T* const r, const T s, const T* const coef,
                                                           typename strip_row<T, B>::vec (&rows)[Width][strip_row<T, B>::N]) {
  using row = strip_row<T, B>;
  constexpr std::size_t N = row::N;
  typename row::vec acc[N];
  for (std::size_t j = 0; j < N; ++j) row::load_vector(r, j, acc[j]);
  if constexpr (Scaled)
    for (std::size_t j = 0; j < N; ++j) acc[j] *= s, row::keep_rounded(acc[j]);
  for (std::size_t q = 0; q < Width; ++q) {
    const T c = coef[q];
    for (std::size_t j = 0; j < N; ++j) acc[j] -= c * rows[(Oldest + q) % Width][j];
  }
  for (std::size_t j = 0; j < N; ++j) rows[Oldest][j] = acc[j], row::store_vector(r, j, acc[j]);
}

template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_chain(const row_program<T>& p, const std::size_t first, const std::size_t count,
                      const std::size_t lag, const long row_step, T* const strip, const std::size_t stride,
                      prefetch_stream& ahead) {
  using row = strip_row<T, B>;
  using vec = typename row::vec;
  constexpr std::size_t N = row::N;
  // rows[q]: the row the chain's (Width - q)-th operation before wrote (current in the strip too).
  vec rows[Width][N];
  for (std::size_t q = 0; q < Width; ++q) {
    const T* r = strip + std::size_t(p.ops[first - lag * (Width - q)].target) * stride;
    for (std::size_t j = 0; j < N; ++j) row::load_vector(r, j, rows[q][j]);
  }
  const row_op<T>* o = p.ops.data() + first;
  const T* coef = p.coef.data() + o->begin;
  T* r = strip + std::size_t(o->target) * stride;
  const std::ptrdiff_t step = row_step * std::ptrdiff_t(stride);
  const std::size_t coef_step = lag * Width;  // another chain's operations may lie between
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  // One operation, its oldest source in rows[Oldest].
  const auto update = [&](auto oldest) {
    next.next();
    band_row_update<T, B, Width, decltype(oldest)::value, Scaled>(r, o->scale, coef, rows);
    coef += coef_step;
    o += lag;
    r += step;
  };
  using I = std::integral_constant<std::size_t, 0>;
  using II = std::integral_constant<std::size_t, (Width > 1 ? 1 : 0)>;
  using III = std::integral_constant<std::size_t, (Width > 2 ? 2 : 0)>;
  std::size_t done = 0;
  for (; done + Width <= count; done += Width) {
    update(I{});
    if constexpr (Width > 1) update(II{});
    if constexpr (Width > 2) update(III{});
  }
  if (done < count) update(I{}), ++done;
  if constexpr (Width > 2)
    if (done < count) update(II{});
  ahead = next;
}

// f(first, count, lag, step) for the chain of a one-front run, or for each of the two chains of a
// lag-2 run (row_program.hpp), in the order they run.
template <class F>
void for_each_chain(const band_run& run, F&& f) {
  const std::size_t count = run.last - run.first;
  if (run.lag == 1) return f(run.first, count, std::size_t(1), run.step);
  f(run.first, (count + 1) / 2, std::size_t(2), run.step);
  f(run.first + 1, count / 2, std::size_t(2), run.other_step);
}

// A band run with one front or two chains: solve_band_chain on each chain.
template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_run(const row_program<T>& p, const band_run& run, T* const strip, const std::size_t stride,
                    prefetch_stream& ahead) {
  for_each_chain(run, [&](std::size_t first, std::size_t count, std::size_t lag, long step) {
    solve_band_chain<T, B, Width, Scaled>(p, first, count, lag, step, strip, stride, ahead);
  });
}

// A two-front band run with lag 1 (row_program.hpp; a folded periodic band near its corners) on
// `blocks` blocks of V real columns side by side (one, or all of them across: see
// solve_band_run_across), one operation at a time. Its Width = 2p sources (rows of both fronts)
// are too many for registers, so they come from L1, at addresses the fronts' steps give.
// Operations alternate between the fronts: the one at distance d before an operation is on its
// own front for even d (d / 2 rows back along it) and on the other front for odd d ((d - 1) / 2
// rows back from that front's last row). The general kernel's arithmetic in the same order.
template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_fronts(const row_program<T>& p, const band_run& run, T* const strip, const std::size_t stride,
                       const std::size_t blocks, prefetch_stream& ahead) {
  using row = strip_row<T, B>;
  using vec = typename row::vec;
  constexpr std::size_t N = row::N, V = strip_width<T>;
  const row_op<T>* o = p.ops.data() + run.first;
  const T* coef = p.coef.data() + o->begin;
  T* own = strip + std::size_t(o->target) * stride;                       // this operation's row
  T* other = strip + std::size_t(p.ops[run.first - 1].target) * stride;  // the other front's last
  const std::ptrdiff_t own_step = run.step * std::ptrdiff_t(stride);
  const std::ptrdiff_t other_step = run.other_step * std::ptrdiff_t(stride);
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  const auto update = [&](T* const r, const T* const last_other, std::ptrdiff_t along, std::ptrdiff_t across) {
    const T s = Scaled ? o->scale : T(1);
    for (std::size_t b = 0; b < blocks; ++b) {
      next.next();
      T* const at = r + b * V;
      vec acc[N];
      for (std::size_t j = 0; j < N; ++j) row::load_vector(at, j, acc[j]);
      if constexpr (Scaled)
        for (std::size_t j = 0; j < N; ++j) acc[j] *= s, row::keep_rounded(acc[j]);
      for (std::size_t q = 0; q < Width; ++q) {
        const std::size_t d = Width - q;  // oldest first
        const T* const source = d % 2 ? last_other + b * V - std::ptrdiff_t((d - 1) / 2) * across
                                      : at - std::ptrdiff_t(d / 2) * along;
        const T c = coef[q];
        for (std::size_t j = 0; j < N; ++j) {
          vec x;
          row::load_vector(source, j, x);
          acc[j] -= c * x;
        }
      }
      for (std::size_t j = 0; j < N; ++j) row::store_vector(at, j, acc[j]);
    }
    coef += Width;
    ++o;
  };
  const std::size_t count = run.last - run.first;
  std::size_t done = 0;
  for (; done + 2 <= count; done += 2) {  // one operation on each front
    update(own, other, own_step, other_step);
    T* const then = other + other_step;
    update(then, own, other_step, own_step);
    own += own_step;
    other = then;
  }
  if (done < count) update(own, other, own_step, other_step);
  ahead = next;
}

// f(0), f(1), ..., f(M - 1), each index an integral_constant.
template <std::size_t... I, class F>
void in_index_order(std::index_sequence<I...>, F&& f) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
template <std::size_t M, class F>
void in_index_order(F&& f) {
  in_index_order(std::make_index_sequence<M>{}, f);
}

// Whether two-front runs keep their rows in registers with B-byte vectors
// (solve_band_fronts_in_registers): with AVX-512's 32 registers; AVX2's 16 cannot hold six rows.
template <std::size_t B>
inline constexpr bool fronts_in_registers = B == 64;

// A two-front band run with lag 1 (as solve_band_fronts) on one block, its Width = 2p sources in
// registers: an operation's sources are the rows the Width operations before it wrote, oldest
// first (whichever front), so they rotate through registers as in solve_band_chain, and only the
// row written alternates between the fronts. 32 vector registers (AVX-512) hold six rows of two
// vectors; from L1, each operation waited for the row the one before it had just stored. In L2
// on a Zen 5 (double p = 3, folded periodic, n = 128 and 256, strips and panels) it took
// 0.32-0.44 ns per value and mode against 0.37-0.57 from L1. The same arithmetic in the same order.
template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_fronts_in_registers(const row_program<T>& p, const band_run& run, T* const strip,
                                    const std::size_t stride, prefetch_stream& ahead) {
  static_assert(Width % 2 == 0, "two fronts: an even width");
  using row = strip_row<T, B>;
  using vec = typename row::vec;
  constexpr std::size_t N = row::N;
  // rows[q]: the row the (Width - q)-th operation before the run wrote.
  vec rows[Width][N];
  for (std::size_t q = 0; q < Width; ++q) {
    const T* r = strip + std::size_t(p.ops[run.first - (Width - q)].target) * stride;
    for (std::size_t j = 0; j < N; ++j) row::load_vector(r, j, rows[q][j]);
  }
  const row_op<T>* o = p.ops.data() + run.first;
  const T* coef = p.coef.data() + o->begin;
  const std::ptrdiff_t own_step = run.step * std::ptrdiff_t(stride);
  const std::ptrdiff_t other_step = run.other_step * std::ptrdiff_t(stride);
  // The rows the run's even and odd operations write next (the odd ones on the other front).
  T* even = strip + std::size_t(o->target) * stride;
  T* odd = strip + std::size_t(p.ops[run.first - 1].target) * stride + other_step;
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  // Operation i of the run, i % Width = Oldest: its oldest source is in rows[Oldest].
  const auto update = [&](auto oldest) {
    constexpr std::size_t Oldest = decltype(oldest)::value;
    T*& r = Oldest % 2 == 0 ? even : odd;
    next.next();
    band_row_update<T, B, Width, Oldest, Scaled>(r, o->scale, coef, rows);
    coef += Width;
    ++o;
    r += Oldest % 2 == 0 ? own_step : other_step;
  };
  const std::size_t count = run.last - run.first;
  std::size_t done = 0;
  for (; done + Width <= count; done += Width) in_index_order<Width>(update);
  in_index_order<Width>([&](auto i) {  // the last count % Width operations
    if (done < count) update(i), ++done;
  });
  ahead = next;
}

// Whether run_solve_program runs p's band runs with solve_band_run on this CPU (for tests).
template <class T>
bool runs_band_kernel(const row_program<T>& p) {
  bool yes = false;
  with_native_vectors([&](auto bytes) { yes = band_kernel<T, decltype(bytes)::value, 1> && p.runs_in_bands(); });
  return yes;
}

// One chain of a band run (as solve_band_chain) on `blocks` blocks of V real columns side by
// side (block j at base + j V), rows `stride` apart, one whole operation across all blocks at a
// time: the sources come from L1 instead of registers, and the rows in flight are whole rows,
// spread over all L1 sets. For rows a multiple of 1 KB apart (slabs of 128 or 256 doubles): there, the rows of one
// block fall into a few L1 sets, evict each other, and the block kernel reread them from L2. In
// cache (Zen 3, double p = 3, n = 128 and 256) this took 0.41-0.43 ns per value and mode, the
// block kernel 0.61-0.73 with rows 1 or 2 KB apart, and 0.37 with padded rows.
template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_chain_across(const row_program<T>& p, const std::size_t first, const std::size_t count,
                             const std::size_t lag, const long row_step, T* const base, const std::size_t stride,
                             const std::size_t blocks, prefetch_stream& ahead) {
  using row = strip_row<T, B>;
  using vec = typename row::vec;
  constexpr std::size_t N = row::N, V = strip_width<T>;
  const row_op<T>* o = p.ops.data() + first;
  const T* coef = p.coef.data() + o->begin;
  T* r = base + std::size_t(o->target) * stride;
  const std::ptrdiff_t step = row_step * std::ptrdiff_t(stride);
  prefetch_stream next = ahead;  // a local copy stays in registers (strip writes may alias it)
  for (std::size_t k = 0; k < count; ++k, o += lag, coef += lag * Width, r += step) {
    T c[Width];
    for (std::size_t q = 0; q < Width; ++q) c[q] = coef[q];
    const T s = Scaled ? o->scale : T(1);
    for (std::size_t b = 0; b < blocks; ++b) {
      next.next();
      T* at = r + b * V;
      vec acc[N];
      for (std::size_t j = 0; j < N; ++j) row::load_vector(at, j, acc[j]);
      if constexpr (Scaled)
        for (std::size_t j = 0; j < N; ++j) acc[j] *= s, row::keep_rounded(acc[j]);
      for (std::size_t q = 0; q < Width; ++q) {
        const T* source = at - std::ptrdiff_t(Width - q) * step;  // oldest first
        for (std::size_t j = 0; j < N; ++j) {
          vec x;
          row::load_vector(source, j, x);
          acc[j] -= c[q] * x;
        }
      }
      for (std::size_t j = 0; j < N; ++j) row::store_vector(at, j, acc[j]);
    }
  }
  ahead = next;
}

// A band run with one front or two chains, as solve_band_run, across the blocks.
template <class T, std::size_t B, std::size_t Width, bool Scaled>
void solve_band_run_across(const row_program<T>& p, const band_run& run, T* const base, const std::size_t stride,
                           const std::size_t blocks, prefetch_stream& ahead) {
  for_each_chain(run, [&](std::size_t first, std::size_t count, std::size_t lag, long step) {
    solve_band_chain_across<T, B, Width, Scaled>(p, first, count, lag, step, base, stride, blocks, ahead);
  });
}

// f(width, scaled) with the run's width (1 to 3, or 2, 4, 6 for two fronts with lag 1) and
// scaling as compile-time constants.
template <class F>
void with_band_shape(const band_run& run, F&& f) {
  static_assert(max_recent_rows == 3, "band widths");
  const auto scaling = [&](auto width) {
    if (run.scaled) f(width, std::true_type{});
    else f(width, std::false_type{});
  };
  switch (run.width) {
    case 1: scaling(std::integral_constant<std::size_t, 1>{}); break;
    case 2: scaling(std::integral_constant<std::size_t, 2>{}); break;
    case 3: scaling(std::integral_constant<std::size_t, 3>{}); break;
    case 4: scaling(std::integral_constant<std::size_t, 4>{}); break;
    default: scaling(std::integral_constant<std::size_t, 6>{}); break;
  }
}

// Operations [first, last) of p on `blocks` blocks of V columns side by side (block j at base +
// j V, rows `stride` apart), one operation across all blocks before the next, with the general
// kernel two blocks at a time (without a window: each call starts empty).
template <class T, std::size_t B>
void solve_ops_across(const row_program<T>& p, const std::size_t first, const std::size_t last, T* const base,
                      const std::size_t blocks, const std::size_t stride, prefetch_stream& ahead) {
  constexpr std::size_t V = strip_width<T>;
  for (std::size_t k = first; k < last; ++k) {
    std::size_t j = 0;
    for (; j + 2 <= blocks; j += 2) solve_with_window<T, B, 2, 0>(p, k, k + 1, base + j * V, stride, V, ahead);
    if (j < blocks) solve_with_window<T, B, 1, 0>(p, k, k + 1, base + j * V, stride, 0, ahead);
  }
}

// Operations [first, last) of a program whose operations lie mostly in band runs, on `blocks`
// blocks of V columns (block j at base + j gap, rows `stride` apart): the runs (or the pieces of
// them in the range) with solve_band_run or solve_band_fronts, block by block, or across all
// blocks at once (`across`: blocks side by side, gap = V), the operations between them with the
// general kernel (without a window: it would start empty), block by block, or across
// (solve_ops_across: the rows in flight are then whole rows, as in the runs).
template <class T, std::size_t B>
void solve_in_bands(const row_program<T>& p, const std::size_t first, const std::size_t last, T* const base,
                    const std::size_t blocks, const std::size_t stride, const std::size_t gap, const bool across,
                    prefetch_stream& ahead) {
  prefetch_stream next = ahead;  // a local copy stays in registers
  const auto general = [&](std::size_t from, std::size_t to, std::size_t block) {
    if (from < to) solve_with_window<T, B, 1, 0>(p, from, to, base + block * gap, stride, 0, next);
  };
  const auto band = [&](const band_run& run, std::size_t block) {
    with_band_shape(run, [&](auto width, auto scaled) {
      constexpr std::size_t W = decltype(width)::value;
      constexpr bool S = decltype(scaled)::value;
      [[maybe_unused]] const bool chains = run.fronts == 1 || run.lag == 2;
      if constexpr (W <= max_recent_rows) {
        if (chains && across) return solve_band_run_across<T, B, W, S>(p, run, base, stride, blocks, next);
        if (chains) return solve_band_run<T, B, W, S>(p, run, base + block * gap, stride, next);
      }
      if constexpr (W % 2 == 0) {
        if constexpr (fronts_in_registers<B>)
          if (!across) return solve_band_fronts_in_registers<T, B, W, S>(p, run, base + block * gap, stride, next);
        solve_band_fronts<T, B, W, S>(p, run, across ? base : base + block * gap, stride, across ? blocks : 1,
                                      next);
      }
    });
  };
  // f(from, to, run): the operations [from, to) before the run (a piece in the range), in order.
  const auto pieces = [&](auto&& f) {
    std::size_t at = first;
    for (const band_run& run : p.band_runs) {
      if (run.last <= at) continue;
      if (run.first >= last) break;
      const band_run piece = band_run_piece(run, std::max(run.first, at), std::min(run.last, last));
      f(at, piece.first, piece);
      at = piece.last;
    }
    f(at, last, band_run{});
  };
  if (across) {
    pieces([&](std::size_t from, std::size_t to, const band_run& run) {
      solve_ops_across<T, B>(p, from, to, base, blocks, stride, next);
      if (run.last > run.first) band(run, 0);
    });
  } else {
    for (std::size_t j = 0; j < blocks; ++j)
      pieces([&](std::size_t from, std::size_t to, const band_run& run) {
        general(from, to, j);
        if (run.last > run.first) band(run, j);
      });
  }
  ahead = next;
}

// Whether run_solve_blocks takes a band program's operations across its blocks
// (solve_band_run_across): several blocks side by side in rows a multiple of 1 KB apart.
template <class T>
bool band_rows_across(std::size_t blocks, std::size_t stride, std::size_t gap) {
  return blocks > 1 && gap == strip_width<T> && stride * sizeof(T) % 1024 == 0;
}

// Complex values as (re, im) pairs of reals (the layout std::complex guarantees): a program with
// real coefficients (row_program::real_part) runs on them with the real kernels, a block of V
// complex columns being 2V real ones, with strides twice as many values.
template <class T>
real_t<T>* as_reals(T* p) {
  return reinterpret_cast<real_t<T>*>(p);
}
template <class T>
const real_t<T>* as_reals(const T* p) {
  return reinterpret_cast<const real_t<T>*>(p);
}

// In place on K blocks of V columns of n rows: b on entry, op(A)^{-1} b on exit. Row i of
// block k is at strip + k * gap + i * stride (stride >= V): K gathered strips (stride V, gap
// n * V), or 2V columns of a slab in cache (stride R, gap V). Substitution is a chain of
// dependent row updates (each waits for the last multiply-add of the row written before it and
// that row's store), so latency bounds it: K = 2 blocks are two independent chains in flight,
// nearly twice the work per step of the chain. The accumulators live in registers, and so do
// the rows the last few operations wrote, as many as the program's updates read (at most
// window_rows): in a band, an operation's last sources are exactly those rows (entries come
// oldest write first; row_op::recent counts them), which then come from registers instead of a
// store and a reload. A window larger than the program reads only costs register moves (p = 1
// ran 2-6 % slower with three rows than with one). The operations run in the same order
// either way, so the bits of the result do not depend on the window.
// Each operation also prefetches K lines of `ahead` (tiles.hpp): the loads are free.
template <class T, std::size_t K = 1>
void run_solve_program(const row_program<T>& p, T* const strip, const std::size_t stride, const std::size_t gap,
                       prefetch_stream& ahead) {
  if constexpr (value_traits<T>::is_complex) {
    if (p.real_part) return run_solve_program<real_t<T>, K>(*p.real_part, as_reals(strip), 2 * stride, 2 * gap, ahead);
  }
  with_native_vectors([&](auto bytes) {
    constexpr std::size_t B = decltype(bytes)::value, most = window_rows<T, B, K>;
    if constexpr (band_kernel<T, B, K>) {
      if (p.runs_in_bands()) {
        solve_in_bands<T, B>(p, 0, p.ops.size(), strip, 1, stride, 0, false, ahead);
        return;
      }
    }
    // Arguments by value: the kernel's locals. After every store through a strip row's may_alias
    // vectors the compiler would reload captured references from the caller's frame, a chain of
    // two loads at the head of each operation, which held the kernel back on an AVX2 CPU.
    // One copy of the kernel per window size (each is inlined here: no duplicates).
    static_assert(most == 0 || most == 3, "window sizes");
    const std::size_t all = p.ops.size();
    if constexpr (most == 0) {
      solve_with_window<T, B, K, 0>(p, 0, all, strip, stride, gap, ahead);
    } else {
      switch (std::min(most, p.recent_rows())) {
        case 0: solve_with_window<T, B, K, 0>(p, 0, all, strip, stride, gap, ahead); break;
        case 1: solve_with_window<T, B, K, 1>(p, 0, all, strip, stride, gap, ahead); break;
        case 2: solve_with_window<T, B, K, 2>(p, 0, all, strip, stride, gap, ahead); break;
        default: solve_with_window<T, B, K, 3>(p, 0, all, strip, stride, gap, ahead); break;
      }
    }
  });
}

// The blocks run_solve_program takes at once (K) on panels and slabs with B-byte vectors: two
// chains, except for real values with 32-byte vectors (AVX2) when the program favours one chain
// with the rows written last in registers (row_program::one_chain_pays): 16 vector registers
// hold a window of three rows or a second chain, not both. In cache on a Zen 3 (n = 256, ns per
// value and mode), two chains -> one chain with a window: double clamped p = 1, 3: 0.81 -> 0.67,
// 1.11 -> 0.80; float clamped p = 3: 0.37 -> 0.32. Complex values need registers for their
// permutes: with one chain and a window of 1 to 3 rows they ran up to 15 % slower.
template <class T, std::size_t B>
std::size_t solve_chains(const row_program<T>& p) {
  return B == 32 && !value_traits<T>::is_complex && p.one_chain_pays() ? 1 : 2;
}

// In place on `blocks` blocks of V columns (block j at base + j * gap, rows `stride` apart):
// solve_chains blocks at a time for the CPU's vectors, then the rest one by one.
template <class T>
void run_solve_blocks(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride, std::size_t gap,
                      prefetch_stream& ahead) {
  if constexpr (value_traits<T>::is_complex) {
    if (p.real_part) return run_solve_blocks(*p.real_part, as_reals(base), blocks, 2 * stride, 2 * gap, ahead);
  }
  std::size_t K = 2;
  bool done = false;
  with_native_vectors([&](auto bytes) {
    constexpr std::size_t B = decltype(bytes)::value;
    if constexpr (band_kernel<T, B, 1>) {
      if (p.runs_in_bands()) {  // one chain; across the blocks where their rows would evict each other
        solve_in_bands<T, B>(p, 0, p.ops.size(), base, blocks, stride, gap, band_rows_across<T>(blocks, stride, gap),
                             ahead);
        done = true;
        return;
      }
    }
    K = solve_chains<T, B>(p);
  });
  if (done) return;
  std::size_t j = 0;
  if (K == 2)
    for (; j + 2 <= blocks; j += 2) run_solve_program<T, 2>(p, base + j * gap, stride, gap, ahead);
  for (; j < blocks; ++j) run_solve_program<T, 1>(p, base + j * gap, stride, 0, ahead);
}

// Operations [first, last) of a solve program in place on whole rows: `blocks` blocks of V
// columns side by side from base, rows `stride` apart (a tensor's rows, row_sweep.hpp). Each
// operation runs across all blocks before the next, so the rows in flight are the few an
// operation touches, whatever the number of rows: a band program's runs with the band kernels
// across, everything else with the general kernel two blocks at a time. The arithmetic of every
// operation is the kernels' usual, so the results do not depend on how a program is cut.
template <class T>
void run_solve_rows(const row_program<T>& p, std::size_t first, std::size_t last, T* base, std::size_t blocks,
                    std::size_t stride, prefetch_stream& ahead) {
  if constexpr (value_traits<T>::is_complex) {
    if (p.real_part) return run_solve_rows(*p.real_part, first, last, as_reals(base), blocks, 2 * stride, ahead);
  }
  with_native_vectors([&](auto bytes) {
    constexpr std::size_t B = decltype(bytes)::value;
    if constexpr (band_kernel<T, B, 1>) {
      if (p.runs_in_bands())
        return solve_in_bands<T, B>(p, first, last, base, blocks, stride, strip_width<T>, true, ahead);
    }
    solve_ops_across<T, B>(p, first, last, base, blocks, stride, ahead);
  });
}

// Out of place on one strip: out = op(A) in, rows `stride` apart in both; two lines of `ahead`
// prefetched per row (a strip row is two lines, and each row is written once).
template <class T>
void run_apply_program(const row_program<T>& p, const T* const in_at, T* const out_at, const std::size_t row_stride,
                       prefetch_stream& ahead) {
  if constexpr (value_traits<T>::is_complex) {
    if (p.real_part) return run_apply_program(*p.real_part, as_reals(in_at), as_reals(out_at), 2 * row_stride, ahead);
  }
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
