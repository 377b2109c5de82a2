#pragma once
// Block layouts of a distributed tensor, as values (no MPI here, so they are unit-testable).
// A process grid has G dimensions; each tensor axis is either split over one grid dimension or
// whole on every rank. A grid dimension that splits no axis replicates the data along it.
// Splits are uneven when they must be: N points on P ranks give the first N % P ranks one more
// (10 on 3: 4, 3, 3).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/shape.hpp"
#include "../host/streaming_stores.hpp"

namespace kronex::detail {

struct index_range {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

// Rank p's block of N points split over P ranks.
inline index_range block_range(std::size_t N, std::size_t P, std::size_t p) {
  const std::size_t base = N / P, extra = N % P;
  const std::size_t begin = p * base + (p < extra ? p : extra);
  return {begin, begin + base + (p < extra ? 1 : 0)};
}

// A box of the global index space: offset and extent per axis.
struct box {
  shape_t offset, extent;
  std::size_t size() const { return product(extent); }
};

inline box intersect(const box& a, const box& b) {
  box r;
  for (std::size_t k = 0; k < a.offset.size(); ++k) {
    const std::size_t lo = std::max(a.offset[k], b.offset[k]);
    const std::size_t hi = std::min(a.offset[k] + a.extent[k], b.offset[k] + b.extent[k]);
    r.offset.push_back(lo);
    r.extent.push_back(hi > lo ? hi - lo : 0);
  }
  return r;
}

struct block_layout {
  shape_t global;             // the tensor's global shape
  std::vector<int> split_by;  // per axis: the grid dimension splitting it, or -1 (whole)

  // The block of the rank at grid coordinates `coords` (grid: sizes of the grid dimensions).
  box block(const std::vector<int>& grid, const std::vector<int>& coords) const {
    box b;
    for (std::size_t k = 0; k < global.size(); ++k) {
      const int g = split_by[k];
      const index_range r = g < 0 ? index_range{0, global[k]}
                                  : block_range(global[k], std::size_t(grid[std::size_t(g)]), std::size_t(coords[std::size_t(g)]));
      b.offset.push_back(r.begin);
      b.extent.push_back(r.size());
    }
    return b;
  }

  // "(0,-,1)": the grid dimension splitting each axis, '-' for whole axes.
  std::string text() const {
    std::string s = "(";
    for (std::size_t k = 0; k < split_by.size(); ++k)
      s += (k ? "," : "") + (split_by[k] < 0 ? std::string("-") : "g" + std::to_string(split_by[k]));
    return s + ")";
  }
};

// Copies the part `part` (global indices) of a block stored in C order at `src` (its box `from`)
// into a block stored at `dst` (its box `to`). Both boxes contain `part`. The copy runs over
// contiguous runs: the last axis, merged with the axes before it while the part spans them whole
// in both blocks; the run starts advance by strides, not recomputed per run.
//
// `streaming` asks for non-temporal stores (streaming_stores.hpp; fenced before returning, so dst
// is ready like after plain stores), for a destination too large to stay in the cache, whose
// lines plain stores would first read from memory. They are used for runs of at least
// copy_box_streaming_min_run bytes, writing each run's whole cache lines: on the development VM
// (docs/performance.md) streaming the 768-byte runs of a return on grid (1,1,2) at 192^3, whose
// source is read every other half-line, was slower in 7 of 8 runs, and the long runs of the other
// grids faster in every one.
inline constexpr std::size_t copy_box_streaming_min_run = 8192;

template <class T>
void copy_box(const box& part, const box& from, const T* src, const box& to, T* dst, bool streaming = false) {
  const std::size_t D = part.extent.size();
  if (part.size() == 0) return;
  const shape_t src_strides = c_strides(from.extent), dst_strides = c_strides(to.extent);
  std::size_t j = D - 1, run = part.extent[D - 1];  // runs cover axes j.. (j partial, the rest whole)
  while (j > 0 && part.extent[j] == from.extent[j] && part.extent[j] == to.extent[j]) run *= part.extent[--j];
  streaming = streaming && run * sizeof(T) >= copy_box_streaming_min_run;
  std::size_t s = 0, d = 0;
  for (std::size_t k = 0; k < D; ++k) {
    s += (part.offset[k] - from.offset[k]) * src_strides[k];
    d += (part.offset[k] - to.offset[k]) * dst_strides[k];
  }
  shape_t idx(j, 0);  // position within `part` on the axes before j
  while (true) {
    if (streaming) stream_copy(dst + d, src + s, run * sizeof(T), 64);
    else std::copy_n(src + s, run, dst + d);
    std::size_t k = j;
    while (k-- > 0) {
      if (++idx[k] < part.extent[k]) {
        s += src_strides[k];
        d += dst_strides[k];
        break;
      }
      idx[k] = 0;
      s -= (part.extent[k] - 1) * src_strides[k];
      d -= (part.extent[k] - 1) * dst_strides[k];
    }
    if (k == std::size_t(-1)) break;
  }
  if (streaming) streaming_stores_done();
}

} // namespace kronex::detail
