#pragma once
// Which layout each mode is solved in, and the exchanges between layouts (no MPI here).
//
// Solves along different modes commute, so they can run in any order. Given the input layout
// (axis k split over grid dimension k when grid[k] > 1) and the modes that must be local (banded,
// dense, function factors; identities need nothing and diagonal scales run in any layout):
//  - phase 0 solves, in the input layout, every such mode that is not split, and all scales;
//  - with a whole axis f to spare, the split modes a_1..a_m are then made local one at a time, in
//    a chain: exchange i moves the grid dimension of a_i onto the axis freed just before (f,
//    then a_1, ..., a_{m-1}), inside the sub-communicator of that grid dimension; a_i is solved;
//  - one last exchange, over the grid dimensions that moved, restores the input layout.
//    That is m + 1 exchanges for m split modes (psydac: 2 per distributed mode).
//  - with no whole axis (every axis split, e.g. 1D on 2 ranks), each split mode is gathered
//    within its grid dimension (allgatherv), solved redundantly, and each rank keeps its own
//    part (a local copy): m exchanges, at the price of P times the memory for that mode.
#include <cstddef>
#include <vector>

#include "block_layout.hpp"

namespace kronex::detail {

struct exchange_phase {
  block_layout layout;            // the layout this phase works in
  std::vector<int> group_dims;    // grid dimensions exchanged to reach it (empty: local copy)
  bool gather = false;            // reached by gathering a split axis (replicated along a grid dim)
  std::vector<std::size_t> modes; // the modes solved in it
  bool scales = false;            // diagonal scales run in this phase (phase 0 only)
};

inline std::vector<exchange_phase> plan_exchanges(const shape_t& global, const std::vector<int>& grid,
                                                  const std::vector<bool>& needs_local) {
  const std::size_t D = global.size();
  block_layout input{global, std::vector<int>(D, -1)};
  for (std::size_t k = 0; k < D; ++k)
    if (grid[k] > 1) input.split_by[k] = int(k);

  std::vector<exchange_phase> phases;
  exchange_phase first{input, {}, false, {}, true};
  std::vector<std::size_t> split_modes;
  for (std::size_t k = 0; k < D; ++k) {
    if (!needs_local[k]) continue;
    (input.split_by[k] < 0 ? first.modes : split_modes).push_back(k);
  }
  phases.push_back(first);
  if (split_modes.empty()) return phases;

  long spare = -1;
  for (std::size_t k = 0; k < D; ++k)
    if (input.split_by[k] < 0) { spare = long(k); break; }

  if (spare >= 0) {
    block_layout current = input;
    std::size_t hole = std::size_t(spare);
    std::vector<int> moved;
    for (std::size_t a : split_modes) {
      const int g = current.split_by[a];
      current.split_by[hole] = g;
      current.split_by[a] = -1;
      phases.push_back({current, {g}, false, {a}, false});
      moved.push_back(g);
      hole = a;
    }
    phases.push_back({input, moved, false, {}, false});  // back to the input layout
  } else {
    for (std::size_t a : split_modes) {
      block_layout gathered = input;
      gathered.split_by[a] = -1;
      phases.push_back({gathered, {input.split_by[a]}, true, {a}, false});
      phases.push_back({input, {}, false, {}, false});  // keep this rank's part: a local copy
    }
  }
  return phases;
}

// Exchanges (communicating phase changes) in a schedule.
inline std::size_t exchange_count(const std::vector<exchange_phase>& phases) {
  std::size_t n = 0;
  for (const auto& p : phases) n += p.group_dims.empty() ? 0 : 1;
  return n;
}

} // namespace kronex::detail
