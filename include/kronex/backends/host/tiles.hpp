#pragma once
// Walking a mode in cache-sized panels. The tensor is seen as (L, n, R) in C order: the mode has
// n entries, L lines before it and R after. A panel gathers W lines (their n values each) into a
// contiguous n x W buffer, the kernel works there in cache, and the panel is scattered to the
// output. So every step reads and writes the tensor exactly once, whatever the mode, and src may
// equal dst (in-place solves). Strided rows are never worked on in place, which would make power-
// of-two strides collide in the cache.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

namespace kronex::detail {

template <std::size_t W, class T, class Work>
void for_each_panel(std::size_t L, std::size_t n, std::size_t R, const T* src, T* dst, T* panel,
                    std::size_t* offsets, Work&& work) {
  if (R >= W) {
    // Lines that share l are contiguous runs of R: copy row segments.
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t r0 = 0; r0 < R; r0 += W) {
        const std::size_t w = std::min(W, R - r0), base = l * n * R + r0;
        for (std::size_t i = 0; i < n; ++i) {
          std::memcpy(panel + i * W, src + base + i * R, w * sizeof(T));
          if (w < W) std::fill(panel + i * W + w, panel + (i + 1) * W, T(0));
        }
        const T* out = work(panel);
        for (std::size_t i = 0; i < n; ++i) std::memcpy(dst + base + i * R, out + i * W, w * sizeof(T));
      }
    }
    return;
  }
  // Few lines per l (the last modes): take W consecutive lines m = l*R + r, a gather per row.
  const std::size_t lines = L * R;
  for (std::size_t m0 = 0; m0 < lines; m0 += W) {
    const std::size_t w = std::min(W, lines - m0);
    for (std::size_t c = 0; c < w; ++c) {
      const std::size_t m = m0 + c;
      offsets[c] = (m / R) * n * R + m % R;
    }
    for (std::size_t i = 0; i < n; ++i) {
      T* row = panel + i * W;
      const T* s = src + i * R;
      for (std::size_t c = 0; c < w; ++c) row[c] = s[offsets[c]];
      if (w < W) std::fill(row + w, row + W, T(0));
    }
    const T* out = work(panel);
    for (std::size_t i = 0; i < n; ++i) {
      const T* row = out + i * W;
      T* d = dst + i * R;
      for (std::size_t c = 0; c < w; ++c) d[offsets[c]] = row[c];
    }
  }
}

// A diagonal factor needs no panel: each hyperplane i of the mode is scaled by s[i].
template <class T>
void scale_mode(std::size_t L, std::size_t n, std::size_t R, const T* s, const T* src, T* dst) {
  for (std::size_t l = 0; l < L; ++l) {
    for (std::size_t i = 0; i < n; ++i) {
      const T f = s[i];
      const T* in = src + (l * n + i) * R;
      T* out = dst + (l * n + i) * R;
      for (std::size_t r = 0; r < R; ++r) out[r] = f * in[r];
    }
  }
}

} // namespace kronex::detail
