#pragma once
// gathered_tensor<T>: a C-order tensor whose values are read where they already lie, in pieces
// of other arrays, instead of from one array a copy would have filled. Along each axis the
// indices are cut into intervals; each cell of the grid the cuts make (one interval per axis) is
// a box of some C-order array (its base, its strides, and the array index of the cell's first
// value). A host plan's first step reads such a tensor as it reads a plain array
// (host_plan::run): a distributed exchange within a node then needs no copy of its own, the next
// phase's first step reading each value from the block of the rank that solved it.
//
// gathered_source<T> is the tensor seen from a flat offset on, as a pointer would be: the host
// kernels take either (read_values, distinct_memory, and read_stream in tiles.hpp), and a plain
// pointer costs nothing more than it did.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/shape.hpp"

namespace kronex::detail {

template <class T>
class gathered_tensor {
public:
  static constexpr std::size_t max_axes = 16;

  // cuts[k]: where the intervals of axis k start: 0 first, increasing, each below extent[k]. The
  // cells are numbered in C order over the grid of intervals; each must be set (set_cell) before
  // the tensor is read.
  gathered_tensor(const shape_t& extent, const std::vector<std::vector<std::size_t>>& cuts) : m_extent(extent) {
    const std::size_t d = extent.size();
    if (d == 0 || d > max_axes || cuts.size() != d)
      throw error(message("kronex: a gathered tensor takes 1 to ", max_axes, " axes and one list of cuts per axis"));
    m_interval.resize(d);
    m_end.resize(d);
    m_start = cuts;
    m_radix.assign(d, 1);
    for (std::size_t k = d; k-- > 0;) {
      const auto& c = cuts[k];
      if (c.empty() || c.front() != 0 || !std::is_sorted(c.begin(), c.end()) ||
          std::adjacent_find(c.begin(), c.end()) != c.end() || c.back() >= std::max<std::size_t>(extent[k], 1))
        throw error(message("kronex: the cuts of axis ", k, " of a gathered tensor must start at 0, increase and stay below ",
                            extent[k]));
      m_interval[k].resize(extent[k]);
      for (std::size_t v = 0; v < c.size(); ++v) {
        const std::size_t end = v + 1 < c.size() ? c[v + 1] : extent[k];
        m_end[k].push_back(end);
        for (std::size_t j = c[v]; j < end; ++j) m_interval[k][j] = std::uint32_t(v);
      }
      if (k + 1 < d) m_radix[k] = m_radix[k + 1] * cuts[k + 1].size();
    }
    m_cells.resize(m_radix.front() * cuts.front().size());
  }

  std::size_t cells() const noexcept { return m_cells.size(); }
  const shape_t& extent() const noexcept { return m_extent; }

  // The cell at these interval numbers (one per axis).
  std::size_t cell_index(const std::vector<std::size_t>& intervals) const {
    std::size_t c = 0;
    for (std::size_t k = 0; k < intervals.size(); ++k) c += intervals[k] * m_radix[k];
    return c;
  }

  // Cell c is read from `base`, an array with these strides (in values; the last one 1, as in C
  // order), whose index `first` holds the cell's first value.
  void set_cell(std::size_t c, const T* base, const std::vector<std::size_t>& strides, std::size_t first) {
    if (strides.size() != m_extent.size() || strides.back() != 1)
      throw error("kronex: a gathered tensor's cell needs one stride per axis, the last 1");
    cell& e = m_cells.at(c);
    e.base = base;
    std::ptrdiff_t shift = std::ptrdiff_t(first);
    std::size_t rest = c;
    for (std::size_t k = 0; k < m_extent.size(); ++k) {
      const std::size_t v = rest / m_radix[k];
      rest %= m_radix[k];
      e.strides[k] = std::ptrdiff_t(strides.at(k));
      shift -= std::ptrdiff_t(m_start[k][v]) * e.strides[k];  // the cell's first index along k is its cut
    }
    e.shift = shift;
  }
  // Only the array of cell c changes (the same strides and place in it).
  void set_base(std::size_t c, const T* base) { m_cells.at(c).base = base; }

  // The rows of the tensor (along its last axis), each cut into the intervals of that axis.
  // segment(r, v) is where interval v of row r (C order over the other axes) starts; it runs on
  // contiguously to the interval's end.
  std::size_t row_length() const noexcept { return m_extent.back(); }
  std::size_t row_intervals() const noexcept { return m_start.back().size(); }
  std::size_t interval_start(std::size_t v) const noexcept { return m_start.back()[v]; }
  std::size_t interval_end(std::size_t v) const noexcept { return m_end.back()[v]; }
  const T* segment(std::size_t row, std::size_t v) const {
    const std::size_t last = m_extent.size() - 1;
    std::size_t c = v;
    std::array<std::size_t, max_axes> idx{};
    for (std::size_t k = last; k-- > 0;) {
      idx[k] = row % m_extent[k];
      row /= m_extent[k];
      c += m_interval[k][idx[k]] * m_radix[k];
    }
    const cell& e = m_cells[c];
    std::ptrdiff_t off = e.shift + std::ptrdiff_t(m_start[last][v]);
    for (std::size_t k = 0; k < last; ++k) off += std::ptrdiff_t(idx[k]) * e.strides[k];
    return e.base + off;
  }

  // Calls piece(p, k) for the pieces of `count` values of the tensor from flat (C-order) index
  // `at` on, in order: k values contiguous at p, whole runs of the last axis that lie in one cell
  // at a time.
  template <class Piece>
  void for_each_piece(std::size_t at, std::size_t count, Piece&& piece) const {
    if (count > 0) pieces_from(unravel(at), count, piece);
  }

  // The axis with n indices whose index steps the flat index by `step` (a view (L, n, R) of the
  // tensor has its mode there, step R); none() when no axis has.
  static constexpr std::size_t none() { return max_axes; }
  std::size_t axis_of(std::size_t n, std::size_t step) const {
    for (std::size_t k = 0, after = product(m_extent); k < m_extent.size(); ++k) {
      after /= std::max<std::size_t>(m_extent[k], 1);
      if (m_extent[k] == n && after == step) return k;
    }
    return none();
  }

  // for_each_piece on `rows` ranges of `count` values, range i from at + i * step on, where
  // `axis` (axis_of(rows or more, step)) is the axis that steps by `step` and at's index on it
  // leaves room for `rows`: piece(i, p, k), range by range. One index computation for all (as a
  // panel's rows need: the same lines, one entry of the mode after the other).
  template <class Piece>
  void for_each_piece_on_rows(std::size_t at, std::size_t count, std::size_t axis, std::size_t rows,
                              Piece&& piece) const {
    if (count == 0) return;
    std::array<std::size_t, max_axes> idx = unravel(at);
    for (std::size_t i = 0; i < rows; ++i, ++idx[axis])
      pieces_from(idx, count, [&](const T* p, std::size_t k) { piece(i, p, k); });
  }

  // Copies `count` values of the tensor, from flat index `at` on, to `to`.
  void read(std::size_t at, std::size_t count, T* to) const {
    for_each_piece(at, count, [&](const T* p, std::size_t k) {
      std::memcpy(to, p, k * sizeof(T));
      to += k;
    });
  }

private:
  std::array<std::size_t, max_axes> unravel(std::size_t at) const {
    std::array<std::size_t, max_axes> idx{};
    for (std::size_t k = m_extent.size(); k-- > 0;) {
      idx[k] = at % m_extent[k];
      at /= m_extent[k];
    }
    return idx;
  }

  // The pieces of `count` values from multi-index idx on (for_each_piece).
  template <class Piece>
  void pieces_from(std::array<std::size_t, max_axes> idx, std::size_t count, Piece&& piece) const {
    const std::size_t last = m_extent.size() - 1;
    while (true) {
      std::size_t row_cell = 0;
      std::ptrdiff_t row_off = 0;
      for (std::size_t k = 0; k < last; ++k) row_cell += m_interval[k][idx[k]] * m_radix[k];
      std::size_t j = idx[last];
      while (count > 0 && j < m_extent[last]) {
        const std::uint32_t v = m_interval[last][j];
        const cell& e = m_cells[row_cell + v];
        const std::size_t run = std::min(count, m_end[last][v] - j);
        row_off = e.shift + std::ptrdiff_t(j);
        for (std::size_t k = 0; k < last; ++k) row_off += std::ptrdiff_t(idx[k]) * e.strides[k];
        piece(e.base + row_off, run);
        count -= run;
        j += run;
      }
      if (count == 0) return;
      idx[last] = 0;  // the next row of the last axis
      for (std::size_t k = last; k-- > 0;) {
        if (++idx[k] < m_extent[k]) break;
        idx[k] = 0;
      }
    }
  }

  struct cell {
    const T* base = nullptr;
    std::ptrdiff_t shift = 0;  // value (j_0, ..., j_{d-1}) is base[shift + sum j_k strides[k]]
    std::array<std::ptrdiff_t, max_axes> strides{};
  };
  shape_t m_extent;
  std::vector<std::vector<std::uint32_t>> m_interval;  // per axis, per index: its interval
  std::vector<std::vector<std::size_t>> m_start, m_end;  // per axis, per interval
  std::vector<std::size_t> m_radix;                      // per axis: cells per step of its interval
  std::vector<cell> m_cells;
};

// A gathered tensor from flat index `at` on: what a kernel reads instead of `src + at`.
template <class T>
struct gathered_source {
  const gathered_tensor<T>* tensor = nullptr;
  std::size_t at = 0;
  gathered_source operator+(std::size_t k) const { return {tensor, at + k}; }
};

// `count` values of a source from its index `at` on, copied to `to` (nothing when they are there
// already: an in-place step).
template <class T>
void read_values(const T* src, std::size_t at, std::size_t count, T* to) {
  if (src + at != to && count > 0) std::memcpy(to, src + at, count * sizeof(T));
}
template <class T>
void read_values(const gathered_source<T>& src, std::size_t at, std::size_t count, T* to) {
  src.tensor->read(src.at + at, count, to);
}

// Whether a step from src to dst writes elsewhere than it reads.
template <class T>
bool distinct_memory(const T* src, const T* dst) { return src != dst; }
template <class T>
bool distinct_memory(const gathered_source<T>&, const T*) { return true; }

} // namespace kronex::detail
