#pragma once
// Walking a mode in cache-sized panels. The tensor is seen as (L, n, R) in C order: the mode has
// n entries, L lines before it and R after; line m = l*R + r holds the n values
// src[l*n*R + i*R + r], i < n. A panel gathers up to S*V consecutive lines into S strips of V
// lines (row i of a strip = entry i of its V lines), so the kernels run on cache-resident,
// compact memory whatever the tensor's strides: for R > 1 the panel is row-major (the strips
// side by side, so each row of the tensor is copied whole), for the last mode each strip is a
// contiguous n x V block (a transpose of V lines). Each step reads and writes the tensor once,
// and src may equal dst (in-place solves): a panel is scattered only after it was worked on.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../../core/target_clones.hpp"
#include "block_transpose.hpp"
#include "cache_aligned.hpp"
#include "gathered_tensor.hpp"
#include "scattered_output.hpp"
#include "streaming_stores.hpp"

namespace kronex::detail {

// The memory a later panel will read, fetched into the cache one 64-byte line at a time while
// the current panel is worked on: the kernels call next() once per row operation, which is about
// one line per operation (a strip row is 128 bytes, two lines, and each is written by about two
// operations), so one panel's work prefetches about the next panel. A step is otherwise
// latency-bound on memory: the gather waits for DRAM, then the kernel leaves the memory idle.
// The region is `rows` runs of `run_lines` lines, `stride` bytes apart; an empty stream does
// nothing. When the step writes elsewhere than it reads (a plan's first step, out of place), the
// same region of the output (write_base) is prefetched for writing too: otherwise each line the
// scatter writes is first read from memory on demand, which cost a 256^3 solve a third of its
// time. (A walk that scatters with streaming stores, panel_walk::stream, reads no output line
// and prefetches none.) Prefetches never fault and change no values.
// A stream may instead follow a list of rows (row_list: run k is row row_list[k], `stride` bytes
// per row), in any order, and take several lines per next() (lines_per_next): a substitution on
// whole tensor rows (row_sweep.hpp) fetches the rows its coming operations write, two lines per
// block of V values it works on. Or runs anywhere (row_starts: run k starts there), for reading
// a gathered tensor's pieces (gathered_tensor.hpp).
struct prefetch_stream {
  const char* base = nullptr;
  const char* write_base = nullptr;  // or null
  std::size_t rows = 0, run_lines = 0, stride = 0;
  std::size_t row = 0, line = 0;
  const std::uint32_t* row_list = nullptr;  // or null: run k is row k
  std::size_t lines_per_next = 1;
  const char* const* row_starts = nullptr;  // or null: run k starts at row_starts[k]; then
  std::size_t write_lines = 0, written = 0;  // write_base's first write_lines lines, one per line read

  void next() {
    for (std::size_t k = 0; k < lines_per_next; ++k) {
      if (row == rows) return;
      if (row_starts) {
        __builtin_prefetch(row_starts[row] + line * 64, 0, 3);
        if (written < write_lines) __builtin_prefetch(write_base + 64 * written++, 1, 3);
      } else {
        const std::size_t at = (row_list ? row_list[row] : row) * stride + line * 64;
        __builtin_prefetch(base + at, 0, 3);
        if (write_base) __builtin_prefetch(write_base + at, 1, 3);
      }
      if (++line == run_lines) line = 0, ++row;
    }
  }
};

// The stream over `values` contiguous values read at src, and written at dst when that is not src.
template <class T>
prefetch_stream contiguous_stream(const T* src, const T* dst, std::size_t values) {
  prefetch_stream p;
  p.base = reinterpret_cast<const char*>(src);
  if (dst != src) p.write_base = reinterpret_cast<const char*>(dst);
  p.rows = 1;
  p.run_lines = (values * sizeof(T) + 63) / 64;
  return p;
}

// The stream over the pieces that list(add) hands to add(p, values), one call per piece, each a
// run of its own (as many lines as the longest piece, and one more where it starts inside a
// line), listed in `starts` (which must outlive the stream).
template <class T, class List>
prefetch_stream listed_pieces_stream(std::vector<const char*>& starts, List&& list) {
  starts.clear();
  std::size_t longest = 0;
  list([&](const T* p, std::size_t values) {
    starts.push_back(reinterpret_cast<const char*>(p));
    longest = std::max(longest, values);
  });
  prefetch_stream p;
  p.row_starts = starts.data();
  p.rows = starts.size();
  p.run_lines = (longest * sizeof(T) + 63) / 64 + 1;
  return p;
}

// The stream over the pieces of `count` values of a gathered source from `at` on
// (listed_pieces_stream), followed by the output's lines at dst (none for a null dst).
template <class T>
prefetch_stream pieces_stream(const gathered_source<T>& src, std::size_t at, const T* dst, std::size_t count,
                              std::vector<const char*>& starts) {
  prefetch_stream p =
      listed_pieces_stream<T>(starts, [&](auto&& add) { src.tensor->for_each_piece(src.at + at, count, add); });
  p.write_base = reinterpret_cast<const char*>(dst);
  p.write_lines = dst ? (count * sizeof(T) + 63) / 64 : 0;
  return p;
}

// What to prefetch before reading `count` values of src from `at` on and writing them at dst. A
// gathered source's pieces are listed in a buffer of this thread's that the next call replaces
// (not panel_walk::source's: a row sweep passes this stream to the panel walk it runs): a fused
// pair after an exchange fetches the next group of slabs from the peers' blocks while it solves
// this one (2 ranks, 192^3, grid (1,1,2), modes 1 and 2 fused: 12.0 ms for the phase with only
// the output prefetched, which made reading the exchange lose to copying it first).
template <class T>
prefetch_stream read_stream(const T* src, std::size_t at, const T* dst, std::size_t count) {
  return contiguous_stream(src + at, dst, count);
}
template <class T>
prefetch_stream read_stream(const gathered_source<T>& src, std::size_t at, const T* dst, std::size_t count) {
  thread_local std::vector<const char*> starts;
  return pieces_stream(src, at, dst, count, starts);
}

// How many lines a strip holds: 128 bytes of each row (16 doubles).
template <class T>
inline constexpr std::size_t strip_width = 128 / sizeof(T);

// Strips per panel for a mode of n entries, `lines` lines and trailing size R: the panel stays
// in L2 (256 KB) where that is all it needs, and no more than the lines need. When R > 1 a
// panel's rows are gathered from the tensor as row segments of S * 128 bytes at a stride of R
// values, and DRAM serves long segments far better: a panel then takes up to 32 strips (4 KB
// segments, a page) while it stays within 1 MB, more than L2 holds. (On a Zen 3 with 512 KB of
// L2, the mode-0 pass of a 256^3 double solve took 56 ms with 1 KB segments, 48 ms with 4 KB,
// 52 ms with 8 KB; 1024^2 and 128^3 gained too.) The last mode's strips are gathered one by
// one, whatever the panel.
template <class T>
std::size_t strips_per_panel(std::size_t n, std::size_t lines, std::size_t R) {
  const std::size_t strip_bytes = n * strip_width<T> * sizeof(T);
  const std::size_t needed = (lines + strip_width<T> - 1) / strip_width<T>;
  std::size_t fit = (std::size_t(256) << 10) / strip_bytes;
  if (R > 1) fit = std::max(fit, std::min<std::size_t>(32, (std::size_t(1) << 20) / strip_bytes));
  return std::clamp<std::size_t>(fit, 1, std::min<std::size_t>(64, needed));
}

// Values from one row to the next of a row-major panel of `strips` strips (R > 1): the strips
// side by side, and when that is a multiple of 1 KB, one cache line more, so the rows are an odd
// number of lines apart. Rows a multiple of 1 KB apart fall into at most four groups of L1 sets
// (a page, 4 KB, apart: all in one), and the rows a substitution works on evict each other: in
// cache, at 4 KB (32 strips) the kernel took 1.2-1.5x as long for p = 3 (double, float, complex)
// and 1.5-1.9x for p = 7 on a Zen 3; at 2 KB, up to 1.1x for p = 7.
template <class T>
std::size_t panel_row_values(std::size_t strips) {
  const std::size_t values = strips * strip_width<T>;
  return values * sizeof(T) % 1024 == 0 ? values + cache_line_bytes / sizeof(T) : values;
}

// Values of one panel of `strips` strips for a mode of n entries and trailing size R.
template <class T>
std::size_t panel_values(std::size_t n, std::size_t R, std::size_t strips) {
  return R > 1 ? n * panel_row_values<T>(strips) : strips * n * strip_width<T>;
}

template <class T>
struct panel_walk {
  static constexpr std::size_t V = strip_width<T>;
  std::size_t L, n, R, S;  // tensor view (L, n, R); strips per panel
  // Scatter with streaming stores (streaming_stores.hpp) where a panel is row-major (R > 1), or
  // into a scattered output; only for an output that is not the input. run_panel fences them
  // after each panel.
  bool stream = false;

  std::size_t lines() const { return L * R; }

  // Copy lines [m, m+w) (w <= V) of the last mode (R == 1) into a strip, or back out of it
  // (to_strip = false): lines are contiguous, so this is a transpose of a w x n block. It runs in
  // blocks of 256 bytes of each line (32 doubles): the block's strip rows (4 KB) stay in L1 while
  // all w lines are copied in or out, where a whole line at a time would bring each strip row
  // back from L2 w times once the strip outgrows L1 (long lines: about half the time of a pass).
  // Within a block, W x W sub-blocks are transposed in registers (block_transpose.hpp), the edges
  // value by value. Lines of a page (4 KB) or more are w streams far apart at once, across pages
  // (which hardware prefetchers do not follow): each block first prefetches the next block of
  // its lines, for reading (into the strip) or for writing (out of it). On a Zen 5 EPYC that made
  // 2048^2 solves 2-8 % faster (float and double, clamped and periodic, in two A/B runs); for
  // the short lines of 3D solves (1-2 KB, from the slab of a fused pair in cache) it was 0-4 %
  // slower, so they do without.
  template <bool to_strip>
  KRONEX_TARGET_CLONES void move_strip(std::size_t m, std::size_t w, const T* src, T* dst, T* strip) const {
    constexpr std::size_t block = 256 / sizeof(T);
    const std::size_t base = m * n;
    const bool prefetch = n * sizeof(T) >= 4096;
    for (std::size_t i0 = 0; i0 < n; i0 += block) {
      const std::size_t i1 = std::min(n, i0 + block);
      if (const std::size_t ahead = i0 + block; prefetch && ahead < n) {
        const std::size_t values = std::min(block, n - ahead);
        for (std::size_t c = 0; c < w; ++c)
          for (std::size_t k = 0; k < values; k += cache_line_bytes / sizeof(T)) {
            if constexpr (to_strip) __builtin_prefetch(src + base + c * n + ahead + k, 0, 3);
            else __builtin_prefetch(dst + base + c * n + ahead + k, 1, 3);
          }
      }
      std::size_t cb = 0, ib = i0;  // lines [0, cb) x entries [i0, ib) go through register blocks
      if constexpr (has_block_transpose<T>) {
        using B = block_transpose<T>;
        ib = i0 + (i1 - i0) / B::W * B::W;
        for (; cb + B::W <= w; cb += B::W)
          for (std::size_t i = i0; i < ib; i += B::W) {
            if constexpr (to_strip) B::run(src + base + cb * n + i, n, strip + i * V + cb, V);
            else B::run(strip + i * V + cb, V, dst + base + cb * n + i, n);
          }
      }
      for (std::size_t c = 0; c < w; ++c) {
        const std::size_t from = c < cb ? ib : i0;
        if constexpr (to_strip) {
          const T* line = src + base + c * n;
          for (std::size_t i = from; i < i1; ++i) strip[i * V + c] = line[i];
        } else {
          T* line = dst + base + c * n;
          for (std::size_t i = from; i < i1; ++i) line[i] = strip[i * V + c];
        }
      }
    }
    if constexpr (to_strip)
      for (std::size_t i = 0; i < n; ++i) std::fill(strip + i * V + w, strip + (i + 1) * V, T(0));
  }

  // Copy the panel of `strips` strips starting at line m0 when R > 1. Such a panel is row-major:
  // row i of the mode holds the panel's lines side by side (strips * V values), which for lines
  // that share l are consecutive values r of the tensor's row (l, i, r): each row is one copy
  // per l touched (one in the usual case, R >= the panel's lines), whatever R is. Rows
  // outermost, so the tensor is read (written) row by row and the panel sequentially. (Panels
  // of separate strips, n x V each, made these copies land 4 KB apart and conflict in L1.)
  // dst: a pointer, or a scattered output (scattered_target). Streamed rows stream their partial
  // cache lines too: the rest of such a line is written a panel later, out of cache by then,
  // and a plain store would first read it from memory (a mode-0 pass over 192x96x192 doubles into
  // a scattered output of one cell: 7.0-7.5 ms with plain stores there, 5.0-5.2 ms streamed,
  // against 5.1-5.6 ms into an array; docs/performance.md).
  template <bool to_panel, class Src, class Dst>
  KRONEX_TARGET_CLONES void move_panel_rows(std::size_t m0, std::size_t strips, const Src& src, const Dst& dst,
                                            T* panel) const {
    const std::size_t count = std::min(m0 + strips * V, lines()) - m0, width = strips * V;
    const std::size_t stride = panel_row_values<T>(strips);
    if constexpr (to_panel && std::is_same_v<Src, gathered_source<T>>) {
      if (gather_panel_rows(m0, count, width, stride, src, panel)) return;
    }
    for (std::size_t i = 0; i < n; ++i) {
      T* row = panel + i * stride;
      std::size_t l = m0 / R, r = m0 % R;  // line m = l R + r, walked without dividing
      for (std::size_t k = 0; k < count;) {
        const std::size_t run = std::min(count - k, R - r);
        const std::size_t at = (l * n + i) * R + r;
        if constexpr (to_panel) read_values(src, at, run, row + k);
        else write_values(dst, at, run, row + k, stream, 16);
        k += run;
        r = 0;
        ++l;
      }
      // Lines past the tensor's end are zeros: the kernels run on whole strips, and stale values
      // there could be subnormal, which costs a hundred cycles per operation.
      if constexpr (to_panel) std::fill(row + count, row + width, T(0));
    }
  }

  // move_panel_rows' gather from a gathered tensor whose axis at the mode steps by R (else
  // false: the plain walk reads it piece by piece): per index l of the lines, all n rows at once
  // (gathered_tensor::for_each_piece_on_rows), so the tensor's index is worked out once per l.
  bool gather_panel_rows(std::size_t m0, std::size_t count, std::size_t width, std::size_t stride,
                         const gathered_source<T>& src, T* panel) const {
    const std::size_t axis = src.tensor->axis_of(n, R);
    if (axis == gathered_tensor<T>::none()) return false;
    std::size_t l = m0 / R, r = m0 % R;
    for (std::size_t k = 0; k < count;) {
      const std::size_t run = std::min(count - k, R - r);
      std::size_t row = n;
      T* to = nullptr;
      src.tensor->for_each_piece_on_rows(src.at + l * n * R + r, run, axis, n, [&](std::size_t i, const T* p, std::size_t c) {
        if (i != row) row = i, to = panel + i * stride + k;
        std::memcpy(to, p, c * sizeof(T));
        to += c;
      });
      k += run;
      r = 0;
      ++l;
    }
    for (std::size_t i = 0; i < n; ++i) std::fill(panel + i * stride + count, panel + i * stride + width, T(0));
    return true;
  }

  // Where strip j of a panel of `strips` strips starts (j * gap) and how far apart its rows are
  // (stride): row-major panels when R > 1 (move_panel_rows, panel_row_values), separate n x V
  // strips for the last mode (move_strip).
  struct panel_layout {
    std::size_t stride, gap;
  };
  panel_layout layout(std::size_t strips) const {
    return R > 1 ? panel_layout{panel_row_values<T>(strips), V} : panel_layout{V, n * V};
  }

  // move_strip's gather (lines [m, m+w) into a strip) from a gathered tensor whose rows are this
  // walk's lines: interval by interval of the rows, each line's piece is contiguous, and W x W
  // blocks are transposed from the W pieces wherever they lie; the edges value by value. Lines
  // that are not the tensor's rows (a view whose trailing axes of one index the tensor splits
  // otherwise) are read into a staging strip first and transposed from there.
  KRONEX_TARGET_CLONES void gather_strip(std::size_t m, std::size_t w, const gathered_source<T>& src, T* strip) const {
    const gathered_tensor<T>& g = *src.tensor;
    if (g.row_length() != n || src.at % n != 0) {
      thread_local cache_aligned_vector<T> staging;  // grows once per thread, to its largest strip
      if (staging.size() < w * n) staging.resize(w * n);
      read_values(src, m * n, w * n, staging.data());
      move_strip<true>(0, w, staging.data(), nullptr, strip);
      return;
    }
    const std::size_t row0 = src.at / n + m;
    const T* rows[V];
    for (std::size_t v = 0; v < g.row_intervals(); ++v) {
      const std::size_t first = g.interval_start(v), end = g.interval_end(v);
      for (std::size_t c = 0; c < w; ++c) rows[c] = g.segment(row0 + c, v);
      std::size_t cb = 0, ib = first;  // lines [0, cb) x entries [first, ib) go through register blocks
      if constexpr (has_block_transpose<T>) {
        using B = block_transpose<T>;
        ib = first + (end - first) / B::W * B::W;
        for (; cb + B::W <= w; cb += B::W)
          for (std::size_t i = first; i < ib; i += B::W) B::run_rows(rows + cb, i - first, strip + i * V + cb, V);
      }
      for (std::size_t c = 0; c < w; ++c)
        for (std::size_t i = c < cb ? ib : first; i < end; ++i) strip[i * V + c] = rows[c][i - first];
    }
    for (std::size_t i = 0; i < n; ++i) std::fill(strip + i * V + w, strip + (i + 1) * V, T(0));
  }

  // move_strip's scatter (a strip out to lines [m, m+w)) into a scattered output: the lines are
  // transposed into a staging block first, then written piece by piece (with streaming stores
  // where the walk streams). Where the output's rows are whole in their cells, the strip's
  // lines are one run there, and the partial cache lines at its ends take plain stores: the next
  // strip writes the rest of them while they are in cache. Where rows are cut, each piece is
  // part of a row, and its partial lines are streamed too (the fused pair of a 2-rank phase at
  // 192^3, last axis cut: 7.5-7.8 ms so, 9.3-9.8 ms with plain stores there; rows whole:
  // 7.1-7.7 ms with plain stores there, 7.9-8.4 ms streamed).
  void scatter_strip(std::size_t m, std::size_t w, const scattered_target<T>& dst, T* strip) const {
    thread_local cache_aligned_vector<T> staging;  // grows once per thread, to its largest strip
    if (staging.size() < w * n) staging.resize(w * n);
    move_strip<false>(0, w, nullptr, staging.data(), strip);
    write_values(dst, m * n, w * n, staging.data(), stream, dst.output->whole_rows() ? 64 : 16);
  }

  // Gather (to_panel) or scatter the `strips` strips of the panel that starts at line m0.
  template <bool to_panel, class Src, class Dst>
  void move_panel(std::size_t m0, std::size_t strips, const Src& src, const Dst& dst, T* panel) const {
    if (R > 1) {
      move_panel_rows<to_panel>(m0, strips, src, dst, panel);
      return;
    }
    const std::size_t total = lines();
    for (std::size_t s = 0; s < strips; ++s) {
      const std::size_t m = m0 + s * V, w = std::min(V, total - m);
      if constexpr (std::is_same_v<Src, gathered_source<T>>) {
        gather_strip(m, w, src, panel + s * n * V);
      } else if constexpr (std::is_same_v<Dst, scattered_target<T>>) {
        scatter_strip(m, w, dst, panel + s * n * V);
      } else {
        move_strip<to_panel>(m, w, src, dst, panel + s * n * V);
      }
    }
  }

  // Panels of the walk: each covers S*V lines (the last fewer), independent of the others.
  std::size_t panels() const { return (lines() + S * V - 1) / (S * V); }

  // The tensor memory panel k (< panels()) reads from src, and writes to dst when that is not
  // src. When the panel's lines share one index l (R >= its lines, the usual case for R > 1),
  // that is one run per row of the mode; otherwise the whole slabs it touches, which are
  // contiguous, as one run.
  prefetch_stream source(std::size_t k, const T* src, const T* dst) const {
    if (stream) dst = src;  // no output line is read: none is prefetched
    const std::size_t m0 = k * S * V, m1 = std::min(m0 + S * V, lines());
    const std::size_t l0 = m0 / R, l1 = (m1 - 1) / R;
    if (R == 1 || l0 != l1) return contiguous_stream(src + l0 * n * R, dst + l0 * n * R, (l1 + 1 - l0) * n * R);
    prefetch_stream p = contiguous_stream(src + l0 * n * R + m0 % R, dst + l0 * n * R + m0 % R, m1 - m0);
    p.rows = n;
    p.stride = R * sizeof(T);
    return p;
  }

  // A gathered tensor: the panel's pieces, each a run of its own (as many lines as the longest
  // piece, and one more where it starts inside a line), listed in a buffer of this thread's that
  // the next call replaces; for the last mode (R == 1), also the panel's output (contiguous).
  // Panels of rows (R > 1) list their pieces row by row, and only in walks that stream (an
  // output of host_streaming_min_bytes() or more: a tensor out of cache). In cache, listing them
  // cost more than fetching them early saved (a mode-1 pass over 64x128x128 doubles in two
  // pieces: 1.22 ms with the list, 1.10 ms without, against 0.94 ms from one array); out of
  // cache the rows wait for DRAM without it (a mode-0 pass over 192x96x192 doubles in two
  // pieces: 7.5-7.7 ms without, 6.3-6.8 ms with, against 5.1-5.6 ms from one array).
  prefetch_stream source(std::size_t k, const gathered_source<T>& src, const T* dst) const {
    thread_local std::vector<const char*> starts;
    const std::size_t m0 = k * S * V, m1 = std::min(m0 + S * V, lines());
    if (R == 1) return pieces_stream(src, m0 * n, dst ? dst + m0 * n : nullptr, (m1 - m0) * n, starts);
    const std::size_t l0 = m0 / R, axis = src.tensor->axis_of(n, R);
    if (!stream || l0 != (m1 - 1) / R || axis == gathered_tensor<T>::none()) return {};
    return listed_pieces_stream<T>(starts, [&](auto&& add) {
      src.tensor->for_each_piece_on_rows(src.at + l0 * n * R + m0 % R, m1 - m0, axis, n,
                                         [&](std::size_t, const T* p, std::size_t values) { add(p, values); });
    });
  }

  // A scattered output: the source alone (no output line is prefetched).
  prefetch_stream source(std::size_t k, const T* src, const scattered_target<T>&) const { return source(k, src, src); }
  prefetch_stream source(std::size_t k, const gathered_source<T>& src, const scattered_target<T>&) const {
    return source(k, src, static_cast<const T*>(nullptr));
  }

  // Panel k: work(panel, strips, ahead) runs the kernel in place on the gathered strips (laid out
  // as layout(strips) says), calling
  // ahead.next() as it goes, and returns the panel to scatter from (the same panel, or an output
  // panel of the same shape). `ahead` is the next panel's source, or, when the caller gives a
  // stream (src is in cache already and it knows what comes next), that one, continued from
  // panel to panel.
  // src: a pointer, or a gathered tensor (gathered_source); dst: a pointer, or a scattered
  // output (scattered_target).
  template <class Src, class Dst, class Work>
  void run_panel(std::size_t k, const Src& src, const Dst& dst, T* panel, Work&& work,
                 prefetch_stream* given = nullptr) const {
    const std::size_t total = lines(), m0 = k * S * V;
    const std::size_t strips = std::min(S, (total - m0 + V - 1) / V);
    move_panel<true>(m0, strips, src, static_cast<T*>(nullptr), panel);
    prefetch_stream next = k + 1 < panels() ? source(k + 1, src, dst) : prefetch_stream{};
    T* out = work(panel, strips, given ? *given : next);
    move_panel<false>(m0, strips, static_cast<const T*>(nullptr), dst, out);
    if (stream) streaming_stores_done();
  }
};

} // namespace kronex::detail
