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
// Two options serve plans that run back to back (fast diagonalisation's transforms, whose
// scaling runs in any layout):
//  - end_in_last: the chain's last layout is kept (no return): m exchanges (the gather fallback
//    ends in the input layout anyway, its last step a local copy);
//  - start: the plan starts in another layout, such as a chain's last one. Phase 0 solves there
//    the modes it holds whole; the chain is then run backwards, towards the input layout, one
//    grid dimension at a time (each exchange moves the grid dimension the input layout puts on
//    the axis just made whole back onto it), solving each mode as it becomes whole. From a
//    chain's last layout that is m exchanges back, so a forward chain and its backward run make 2m.
#include <cstddef>
#include <vector>

#include "../../core/error.hpp"

#include "block_layout.hpp"

namespace kronex::detail {

struct exchange_phase {
  block_layout layout;            // the layout this phase works in
  std::vector<int> group_dims;    // grid dimensions exchanged to reach it (empty: local copy)
  bool gather = false;            // reached by gathering a split axis (replicated along a grid dim)
  std::vector<std::size_t> modes; // the modes solved in it
  bool scales = false;            // diagonal scales run in this phase (phase 0 only)
};

// Where a plan starts and ends (see above); the default: the input layout, both.
struct exchange_options {
  std::vector<int> start;    // per axis, the grid dimension splitting it (-1: whole); empty: the input layout
  bool end_in_last = false;  // end in the last phase's layout instead of the input layout
};

// The layout of the operand: axis k split over grid dimension k when grid[k] > 1.
inline block_layout input_layout(const shape_t& global, const std::vector<int>& grid) {
  block_layout input{global, std::vector<int>(global.size(), -1)};
  for (std::size_t k = 0; k < global.size(); ++k)
    if (grid[k] > 1) input.split_by[k] = int(k);
  return input;
}

// The axis grid dimension g splits in `l`, or l.global.size() when none.
inline std::size_t axis_split_by(const block_layout& l, int g) {
  std::size_t k = 0;
  while (k < l.split_by.size() && l.split_by[k] != g) ++k;
  return k;
}

// A start layout must split each axis by at most one grid dimension and use every grid
// dimension of more than one rank exactly once (no replicated data).
inline block_layout start_layout(const shape_t& global, const std::vector<int>& grid, const std::vector<int>& start) {
  bool valid = start.size() == global.size();
  std::vector<int> uses(grid.size(), 0);
  for (std::size_t k = 0; valid && k < start.size(); ++k) {
    const int g = start[k];
    if (g < 0) continue;
    valid = std::size_t(g) < grid.size() && grid[std::size_t(g)] > 1 && ++uses[std::size_t(g)] == 1;
  }
  for (std::size_t g = 0; valid && g < grid.size(); ++g) valid = grid[g] == 1 || uses[g] == 1;
  if (!valid)
    throw error("kronex: a distributed plan's start layout must split each axis over at most one grid dimension "
                "and use every grid dimension of more than one rank once");
  return {global, start};
}

inline std::vector<exchange_phase> plan_exchanges(const shape_t& global, const std::vector<int>& grid,
                                                  const std::vector<bool>& needs_local,
                                                  const exchange_options& options = {}) {
  const std::size_t D = global.size();
  const block_layout input = input_layout(global, grid);
  block_layout current = options.start.empty() ? input : start_layout(global, grid, options.start);
  // Each phase solves the modes that need locality, are whole in its layout and are not solved yet.
  std::vector<bool> solved(D, false);
  auto whole_modes = [&](const block_layout& l) {
    std::vector<std::size_t> modes;
    for (std::size_t k = 0; k < D; ++k) {
      if (!needs_local[k] || solved[k] || l.split_by[k] >= 0) continue;
      modes.push_back(k);
      solved[k] = true;
    }
    return modes;
  };

  std::vector<exchange_phase> phases;
  phases.push_back({current, {}, false, whole_modes(current), true});
  // From another start: backwards along a chain, each exchange moving the grid dimension the input
  // layout puts on a whole axis back onto it; then, if the layouts still differ, one exchange over
  // the grid dimensions still misplaced. Each exchange places one more axis as in the input layout.
  while (current.split_by != input.split_by) {
    std::size_t hole = 0;
    while (hole < D && !(current.split_by[hole] < 0 && input.split_by[hole] >= 0)) ++hole;
    if (hole == D) {
      std::vector<int> misplaced;
      for (std::size_t g = 0; g < grid.size(); ++g)
        if (grid[g] > 1 && axis_split_by(current, int(g)) != axis_split_by(input, int(g))) misplaced.push_back(int(g));
      phases.push_back({input, misplaced, false, whole_modes(input), false});
      break;
    }
    const int g = input.split_by[hole];
    current.split_by[axis_split_by(current, g)] = -1;
    current.split_by[hole] = g;
    phases.push_back({current, {g}, false, whole_modes(current), false});
  }

  // The modes left are split in the input layout.
  std::vector<std::size_t> split_modes;
  for (std::size_t k = 0; k < D; ++k)
    if (needs_local[k] && !solved[k]) split_modes.push_back(k);
  if (split_modes.empty()) return phases;

  long spare = -1;
  for (std::size_t k = 0; k < D; ++k)
    if (input.split_by[k] < 0) { spare = long(k); break; }

  if (spare >= 0) {
    current = input;
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
    if (!options.end_in_last) phases.push_back({input, moved, false, {}, false});  // back to the input layout
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
