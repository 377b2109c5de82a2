#pragma once
// Walking a mode in cache-sized panels. The tensor is seen as (L, n, R) in C order: the mode has
// n entries, L lines before it and R after; line m = l*R + r holds the n values
// src[l*n*R + i*R + r], i < n. A panel gathers up to S*V consecutive lines into S strips; strip s
// is a contiguous n x V block (row i = entry i of V lines), so the kernels run on L1-resident,
// conflict-free memory whatever the tensor's strides. Each step reads and writes the tensor once,
// and src may equal dst (in-place solves): a panel is scattered only after it was worked on.
#include <algorithm>
#include <cstddef>
#include <cstring>

#include "../../core/target_clones.hpp"

namespace kronex::detail {

// How many lines a strip holds: 128 bytes of each row (16 doubles).
template <class T>
inline constexpr std::size_t strip_width = 128 / sizeof(T);

// Strips per panel for a mode of n entries and `lines` lines: enough that each gathered row
// segment is long (prefetch-friendly), few enough that the panel stays in L2 (~256 KB), and no
// more than the lines need.
template <class T>
std::size_t strips_per_panel(std::size_t n, std::size_t lines) {
  const std::size_t strip_bytes = n * strip_width<T> * sizeof(T);
  const std::size_t needed = (lines + strip_width<T> - 1) / strip_width<T>;
  return std::clamp<std::size_t>((std::size_t(256) << 10) / strip_bytes, 1, std::min<std::size_t>(64, needed));
}

template <class T>
struct panel_walk {
  static constexpr std::size_t V = strip_width<T>;
  std::size_t L, n, R, S;  // tensor view (L, n, R); strips per panel

  std::size_t lines() const { return L * R; }

  // Copy lines [m, m+w) (w <= V) of the last mode (R == 1) into a strip, or back out of it
  // (to_strip = false): lines are contiguous, so this is a transpose of a w x n block. The loop
  // runs along the tensor's memory (sequential in L3/DRAM) and strides through the strip, which
  // is in L1.
  template <bool to_strip>
  KRONEX_TARGET_CLONES void move_strip(std::size_t m, std::size_t w, const T* src, T* dst, T* strip) const {
    const std::size_t base = m * n;
    for (std::size_t c = 0; c < w; ++c) {
      if constexpr (to_strip) {
        const T* line = src + base + c * n;
        for (std::size_t i = 0; i < n; ++i) strip[i * V + c] = line[i];
      } else {
        T* line = dst + base + c * n;
        for (std::size_t i = 0; i < n; ++i) line[i] = strip[i * V + c];
      }
    }
    if constexpr (to_strip)
      for (std::size_t i = 0; i < n; ++i) std::fill(strip + i * V + w, strip + (i + 1) * V, T(0));
  }

  // Copy the panel of `strips` strips starting at line m0 when R > 1: for each row i of the mode,
  // the panel's lines that share l are consecutive values r of the tensor's row (l, i, r), so
  // they are copied as runs (cut where a strip ends), whatever R is: no per-value gather. Rows
  // outermost, so the tensor is read (written) row by row.
  template <bool to_panel>
  void move_panel_rows(std::size_t m0, std::size_t strips, const T* src, T* dst, T* panel) const {
    const std::size_t end = std::min(m0 + strips * V, lines());
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t l = m0 / R, r = m0 % R;  // line m = l R + r, walked without dividing
      for (std::size_t k = 0; k < end - m0;) {
        const std::size_t c = k % V, run = std::min({end - m0 - k, R - r, V - c});
        T* row = panel + ((k / V) * n + i) * V + c;
        const std::size_t at = (l * n + i) * R + r;
        // A whole strip row (the usual case) is a fixed-size copy the compiler inlines.
        if (run == V) {
          if constexpr (to_panel) std::memcpy(row, src + at, V * sizeof(T));
          else std::memcpy(dst + at, row, V * sizeof(T));
        } else {
          if constexpr (to_panel) std::memcpy(row, src + at, run * sizeof(T));
          else std::memcpy(dst + at, row, run * sizeof(T));
        }
        k += run;
        r += run;
        if (r == R) r = 0, ++l;
      }
    }
    if constexpr (to_panel) {
      // The last strip's lines past the tensor's end are zeros (the kernels run on whole strips).
      const std::size_t w = (end - m0) % V;
      if (w != 0) {
        T* last = panel + ((end - m0) / V) * n * V;
        for (std::size_t i = 0; i < n; ++i) std::fill(last + i * V + w, last + (i + 1) * V, T(0));
      }
    }
  }

  // Gather (to_panel) or scatter the `strips` strips of the panel that starts at line m0.
  template <bool to_panel>
  void move_panel(std::size_t m0, std::size_t strips, const T* src, T* dst, T* panel) const {
    if (R > 1) {
      move_panel_rows<to_panel>(m0, strips, src, dst, panel);
      return;
    }
    const std::size_t total = lines();
    for (std::size_t s = 0; s < strips; ++s) {
      const std::size_t m = m0 + s * V;
      move_strip<to_panel>(m, std::min(V, total - m), src, dst, panel + s * n * V);
    }
  }

  // Panels of the walk: each covers S*V lines (the last fewer), independent of the others.
  std::size_t panels() const { return (lines() + S * V - 1) / (S * V); }

  // Panel k: work(panel, strips) runs the kernel in place on the gathered strips and returns the
  // panel to scatter from (the same panel, or an output panel of the same shape).
  template <class Work>
  void run_panel(std::size_t k, const T* src, T* dst, T* panel, Work&& work) const {
    const std::size_t total = lines(), m0 = k * S * V;
    const std::size_t strips = std::min(S, (total - m0 + V - 1) / V);
    move_panel<true>(m0, strips, src, nullptr, panel);
    T* out = work(panel, strips);
    move_panel<false>(m0, strips, nullptr, dst, out);
  }
};

} // namespace kronex::detail
