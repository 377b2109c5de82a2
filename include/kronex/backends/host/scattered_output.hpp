#pragma once
// scattered_output<T>: where a host plan writes its result when the values do not all belong in
// one array: the mirror of gathered_tensor. The tensor's indices are cut into cells as there, and
// each cell is a box of some C-order array, written in place of `home`, a C-order array of the
// whole tensor that the plan may also work in before it writes the values (a fused pair's first
// step runs there). A distributed phase that ends with the return into x writes this rank's own
// part of the result straight into x this way, and the peers' parts into its block, from which
// they copy them: the own part is then not copied by the return at all.
//
// scattered_target<T> is the output seen from a flat offset on, as a pointer would be: the panel
// walks write either (write_values, tiles.hpp).
#include <cstddef>
#include <cstring>
#include <vector>

#include "gathered_tensor.hpp"
#include "streaming_stores.hpp"

namespace kronex::detail {

template <class T>
class scattered_output {
public:
  // As gathered_tensor's: cuts[k] lists where the intervals of axis k start.
  scattered_output(const shape_t& extent, const std::vector<std::vector<std::size_t>>& cuts) : m_cells(extent, cuts) {}

  std::size_t cells() const noexcept { return m_cells.cells(); }
  const shape_t& extent() const noexcept { return m_cells.extent(); }
  // Whether the last axis is not cut: each row of the tensor lies whole in one cell.
  bool whole_rows() const noexcept { return m_cells.row_intervals() == 1; }
  std::size_t cell_index(const std::vector<std::size_t>& intervals) const { return m_cells.cell_index(intervals); }

  // Cell c is written to `base`, an array with these strides (the last 1), whose index `first`
  // holds the cell's first value.
  void set_cell(std::size_t c, T* base, const std::vector<std::size_t>& strides, std::size_t first) {
    m_cells.set_cell(c, base, strides, first);
  }
  void set_base(std::size_t c, T* base) { m_cells.set_base(c, base); }
  void set_home(T* home) noexcept { m_home = home; }
  T* home() const noexcept { return m_home; }

  // Writes `count` values from `from` to the tensor's flat indices at, at + 1, ... (streaming
  // stores where asked, stream_copy with this `unit`: 64 leaves the partial cache lines at each
  // piece's ends to plain stores, 16 streams them too; the caller fences them).
  void write(std::size_t at, std::size_t count, const T* from, bool stream, std::size_t unit) const {
    m_cells.for_each_piece(at, count, [&](const T* piece, std::size_t k) {
      // Every cell was set from a writable array (set_cell takes T*); the layout, shared with
      // reading, hands it back const.
      T* to = const_cast<T*>(piece);
      if (stream) stream_copy(to, from, k * sizeof(T), unit);
      else std::memcpy(to, from, k * sizeof(T));
      from += k;
    });
  }

private:
  gathered_tensor<T> m_cells;  // where each value goes (read back only by write)
  T* m_home = nullptr;
};

// A scattered output from flat index `at` on: what a panel walk writes instead of `dst + at`.
template <class T>
struct scattered_target {
  const scattered_output<T>* output = nullptr;
  std::size_t at = 0;
  scattered_target operator+(std::size_t k) const { return {output, at + k}; }
  T* home() const { return output->home() + at; }
};

// `count` values from `from` to a destination's index `at` on, with streaming stores where
// asked (stream_copy's `unit`, as scattered_output::write).
template <class T>
void write_values(T* dst, std::size_t at, std::size_t count, const T* from, bool stream, std::size_t unit) {
  if (stream) stream_copy(dst + at, from, count * sizeof(T), unit);
  else std::memcpy(dst + at, from, count * sizeof(T));
}
template <class T>
void write_values(const scattered_target<T>& dst, std::size_t at, std::size_t count, const T* from, bool stream,
                  std::size_t unit) {
  dst.output->write(dst.at + at, count, from, stream, unit);
}

// The array a step may work in place in: the destination itself, or a scattered output's home.
template <class T>
T* home_of(T* dst) { return dst; }
template <class T>
T* home_of(const scattered_target<T>& dst) { return dst.home(); }

template <class T>
bool distinct_memory(const T*, const scattered_target<T>&) { return true; }
template <class T>
bool distinct_memory(const gathered_source<T>&, const scattered_target<T>&) { return true; }

} // namespace kronex::detail
