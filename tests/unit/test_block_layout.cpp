// The distributed backend's layout arithmetic and exchange planner, as values (no MPI):
//  - block_range: the blocks of N points on P ranks partition [0, N) in rank order, their sizes
//    differ by at most 1 and the larger come first (10 on 3: 4, 3, 3), for N in 0..40, P in 1..8;
//  - block_layout::block on split and whole axes, with a grid dimension that splits no axis
//    (replicated), and text();
//  - intersect and copy_box against naive element loops, on random boxes in 1D to 4D; copy_box
//    with streaming stores against the plain copy, runs around the streaming threshold, into
//    destinations at every 8-byte offset within a cache line;
//  - plan_exchanges on every grid of 1 to 6 dimensions with at most 4 ranks, for every pattern of
//    modes that need locality, on regular and tiny (fewer points than ranks) shapes:
//      exchanges <= (split modes needing locality) + 1 (exactly that with a whole axis to spare,
//      exactly the split modes without), every such mode is solved exactly once, in a phase
//      whose layout has its axis whole, other modes never; scales run in phase 0 only; the last
//      layout is the input layout; every layout splits each axis over at most one grid dimension
//      and no grid dimension over two axes; each exchange moves only the grid dimensions it
//      exchanges over (listed in ascending order, as MPI_Cart_sub orders them), or for a local
//      copy only dimensions that replicated the data before, and every point of a rank's new
//      block is held before the exchange by a rank of its group (itself for a local copy); with a spare axis every chain exchange moves exactly one grid dimension onto
//      the axis freed just before; without one, each split mode is gathered and then copied back;
//  - the options that let plans run back to back (fast diagonalisation's transforms), on the same
//    grids and for every pair of patterns up to 4D: a plan with end_in_last keeps the chain's
//    last layout (m exchanges, none back), and a plan starting there returns to the input layout
//    in m exchanges when its modes are those of the first (2m in all, where returning made
//    2(m + 1)), with every law above, and for any other pattern still solves every mode once,
//    ends in the input layout and moves data only within its groups; invalid start layouts throw;
//  - one schedule printed in full (a golden, derived by hand below).
#include <kronex/backends/mpi/block_layout.hpp>
#include <kronex/backends/mpi/exchange_schedule.hpp>

#define BOOST_TEST_MODULE block_layout
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using kronex::shape_t;
using kronex::detail::block_layout;
using kronex::detail::block_range;
using kronex::detail::box;
using kronex::detail::exchange_options;
using kronex::detail::exchange_phase;
using kronex::detail::index_range;

std::mt19937_64& rng() {
  static std::mt19937_64 g(20240611);
  return g;
}
std::size_t uniform(std::size_t lo, std::size_t hi) {  // in [lo, hi]
  return std::uniform_int_distribution<std::size_t>(lo, hi)(rng());
}

std::string text(const std::vector<int>& v) {
  std::ostringstream os;
  os << "(";
  for (std::size_t k = 0; k < v.size(); ++k) os << (k ? "," : "") << v[k];
  os << ")";
  return os.str();
}
std::string text(const shape_t& v) { return text(std::vector<int>(v.begin(), v.end())); }

bool same(const box& a, const box& b) { return a.offset == b.offset && a.extent == b.extent; }
bool contains(const box& outer, const shape_t& point) {
  for (std::size_t k = 0; k < point.size(); ++k)
    if (point[k] < outer.offset[k] || point[k] >= outer.offset[k] + outer.extent[k]) return false;
  return true;
}

// Calls f(point) for every point of the global index space `shape` (C order).
template <class F>
void for_each_point(const shape_t& shape, F&& f) {
  if (kronex::detail::product(shape) == 0) return;
  shape_t p(shape.size(), 0);
  while (true) {
    f(p);
    std::size_t k = shape.size();
    while (k-- > 0) {
      if (++p[k] < shape[k]) break;
      p[k] = 0;
    }
    if (k == std::size_t(-1)) return;
  }
}

// Every coordinate vector of a grid, in row-major order.
std::vector<std::vector<int>> all_coords(const std::vector<int>& grid) {
  std::vector<std::vector<int>> out;
  std::vector<int> c(grid.size(), 0);
  while (true) {
    out.push_back(c);
    std::size_t k = grid.size();
    while (k-- > 0) {
      if (++c[k] < grid[k]) break;
      c[k] = 0;
    }
    if (k == std::size_t(-1)) return out;
  }
}

// Every grid of D entries whose product is at most `ranks`.
std::vector<std::vector<int>> grids_up_to(std::size_t D, int ranks) {
  std::vector<std::vector<int>> out;
  std::vector<int> g(D, 1);
  while (true) {
    int p = 1;
    for (int v : g) p *= v;
    if (p <= ranks) out.push_back(g);
    std::size_t k = D;
    while (k-- > 0) {
      if (++g[k] <= ranks) break;
      g[k] = 1;
    }
    if (k == std::size_t(-1)) return out;
  }
}

// The axis grid dimension g splits in a layout, or -1.
int axis_of(const block_layout& l, int g) {
  for (std::size_t k = 0; k < l.split_by.size(); ++k)
    if (l.split_by[k] == g) return int(k);
  return -1;
}

} // namespace

// ---- block_range ---------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(block_range_partitions_in_order) {
  for (std::size_t N = 0; N <= 40; ++N) {
    for (std::size_t P = 1; P <= 8; ++P) {
      BOOST_TEST_CONTEXT("N=" << N << " P=" << P) {
        std::size_t next = 0, largest = 0, smallest = std::size_t(-1), previous = std::size_t(-1);
        for (std::size_t p = 0; p < P; ++p) {
          const index_range r = block_range(N, P, p);
          BOOST_TEST(r.begin == next);
          BOOST_TEST(r.end >= r.begin);
          BOOST_TEST(r.size() <= previous);  // larger blocks first
          next = r.end;
          previous = r.size();
          largest = std::max(largest, r.size());
          smallest = std::min(smallest, r.size());
        }
        BOOST_TEST(next == N);  // the blocks end at N: together they are [0, N)
        BOOST_TEST(largest - smallest <= 1u);
        BOOST_TEST(largest == (N + P - 1) / P);
      }
    }
  }
  // 10 on 3: 4, 3, 3.
  BOOST_TEST(block_range(10, 3, 0).begin == 0u);
  BOOST_TEST(block_range(10, 3, 0).end == 4u);
  BOOST_TEST(block_range(10, 3, 1).begin == 4u);
  BOOST_TEST(block_range(10, 3, 1).end == 7u);
  BOOST_TEST(block_range(10, 3, 2).begin == 7u);
  BOOST_TEST(block_range(10, 3, 2).end == 10u);
  // 2 on 4: 1, 1, 0, 0 (empty blocks at the end, at N).
  BOOST_TEST(block_range(2, 4, 1).end == 2u);
  BOOST_TEST(block_range(2, 4, 2).begin == 2u);
  BOOST_TEST(block_range(2, 4, 2).size() == 0u);
  BOOST_TEST(block_range(2, 4, 3).size() == 0u);
}

// ---- block_layout --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(layout_blocks) {
  // Axis 0 split over grid dimension 1 (3 ranks), axis 1 whole, axis 2 over grid dimension 0
  // (2 ranks); grid dimension 2 (2 ranks) splits nothing: the data is replicated along it.
  const block_layout l{{10, 6, 5}, {1, -1, 0}};
  const std::vector<int> grid{2, 3, 2};
  BOOST_TEST(l.text() == "(g1,-,g0)");
  const box b = l.block(grid, {1, 2, 0});
  BOOST_TEST(text(b.offset) == "(7,0,3)");  // axis 0: 10 on 3 -> [7,10); axis 2: 5 on 2 -> [3,5)
  BOOST_TEST(text(b.extent) == "(3,6,2)");
  BOOST_TEST(b.size() == 36u);
  const box a = l.block(grid, {0, 0, 1});
  BOOST_TEST(text(a.offset) == "(0,0,0)");
  BOOST_TEST(text(a.extent) == "(4,6,3)");
  // Replicated along grid dimension 2: both ranks that differ only there hold the same block.
  for (const auto& c : all_coords(grid)) {
    std::vector<int> other = c;
    other[2] = 1 - other[2];
    BOOST_TEST(same(l.block(grid, c), l.block(grid, other)));
  }
  // Over the ranks of one replica (grid dimension 2 fixed), the blocks partition the tensor.
  std::vector<int> hits(10 * 6 * 5, 0);
  for (const auto& c : all_coords(grid)) {
    if (c[2] != 0) continue;
    const box blk = l.block(grid, c);
    for_each_point(l.global, [&](const shape_t& p) {
      if (contains(blk, p)) ++hits[(p[0] * 6 + p[1]) * 5 + p[2]];
    });
  }
  BOOST_TEST(std::count(hits.begin(), hits.end(), 1) == long(hits.size()));
  // A whole layout: every rank holds everything.
  const block_layout whole{{3, 4}, {-1, -1}};
  BOOST_TEST(whole.text() == "(-,-)");
  BOOST_TEST(text(whole.block({4}, {3}).extent) == "(3,4)");
  BOOST_TEST(text(whole.block({4}, {3}).offset) == "(0,0)");
  // Fewer points than ranks: the last ranks' blocks are empty, offset at the end.
  const block_layout tiny{{2, 3}, {0, -1}};
  BOOST_TEST(text(tiny.block({4}, {3}).offset) == "(2,0)");
  BOOST_TEST(tiny.block({4}, {3}).size() == 0u);
}

// ---- intersect and copy_box ----------------------------------------------------------------------

namespace {

box random_box(const shape_t& space, bool allow_empty) {
  box b;
  for (std::size_t n : space) {
    const std::size_t lo = uniform(0, n - 1);
    const std::size_t hi = uniform(allow_empty ? lo : lo + 1, n);
    b.offset.push_back(lo);
    b.extent.push_back(hi - lo);
  }
  return b;
}

// A random box inside `outer` (possibly empty along an axis when allow_empty).
box random_sub_box(const box& outer, bool allow_empty) {
  box b;
  for (std::size_t k = 0; k < outer.extent.size(); ++k) {
    const std::size_t lo = uniform(0, outer.extent[k] - 1);
    const std::size_t hi = uniform(allow_empty ? lo : lo + 1, outer.extent[k]);
    b.offset.push_back(outer.offset[k] + lo);
    b.extent.push_back(hi - lo);
  }
  return b;
}

// Index of global point p in the C-order storage of box b.
std::size_t index_in(const box& b, const shape_t& p) {
  std::size_t i = 0;
  for (std::size_t k = 0; k < p.size(); ++k) i = i * b.extent[k] + (p[k] - b.offset[k]);
  return i;
}

} // namespace

BOOST_AUTO_TEST_CASE(intersect_matches_element_sets) {
  // Fixed cases: disjoint (no underflow), touching, nested, partial overlap.
  const box a{{2, 0}, {3, 4}};  // rows 2..4, columns 0..3
  const box far{{6, 0}, {2, 4}}, touch{{5, 0}, {1, 4}}, inner{{3, 1}, {1, 2}}, part{{4, 2}, {3, 5}};
  BOOST_TEST(kronex::detail::intersect(a, far).size() == 0u);
  BOOST_TEST(text(kronex::detail::intersect(a, far).extent) == "(0,4)");
  BOOST_TEST(kronex::detail::intersect(a, touch).size() == 0u);
  BOOST_TEST(same(kronex::detail::intersect(a, inner), inner));
  BOOST_TEST(same(kronex::detail::intersect(inner, a), inner));
  const box ap = kronex::detail::intersect(a, part);
  BOOST_TEST(text(ap.offset) == "(4,2)");
  BOOST_TEST(text(ap.extent) == "(1,2)");
  // Random boxes in 1D to 4D: the points of the intersection are the points in both.
  for (std::size_t D = 1; D <= 4; ++D) {
    for (int trial = 0; trial < 200; ++trial) {
      shape_t space(D);
      for (auto& n : space) n = uniform(1, 6);
      const box x = random_box(space, true), y = random_box(space, true);
      const box z = kronex::detail::intersect(x, y);
      BOOST_TEST_REQUIRE(z.offset.size() == D);
      std::size_t both = 0;
      bool agree = true;
      for_each_point(space, [&](const shape_t& p) {
        const bool in_both = contains(x, p) && contains(y, p);
        both += in_both;
        agree = agree && in_both == contains(z, p);
      });
      BOOST_TEST(agree, "D=" << D << " x=" << text(x.offset) << text(x.extent) << " y=" << text(y.offset) << text(y.extent));
      BOOST_TEST(z.size() == both);
    }
  }
}

BOOST_AUTO_TEST_CASE(copy_box_matches_element_loop) {
  for (std::size_t D = 1; D <= 4; ++D) {
    for (int trial = 0; trial < 300; ++trial) {
      shape_t space(D);
      for (auto& n : space) n = uniform(1, 7);
      const box from = random_box(space, false), to = random_box(space, false);
      box overlap = kronex::detail::intersect(from, to);
      // Mostly overlapping boxes (so there is something to copy); now and then an empty part.
      if (overlap.size() == 0 && trial % 8 != 0) {
        --trial;
        continue;
      }
      const box part = overlap.size() == 0 ? overlap : random_sub_box(overlap, trial % 5 == 0);
      std::vector<long> src(from.size()), dst(to.size(), -1);
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = long(i) * 7 + 3;
      kronex::detail::copy_box(part, from, src.data(), to, dst.data());
      // Every element of dst: copied from the same global point of src if in `part`, else untouched.
      std::vector<long> expected(to.size(), -1);
      for_each_point(space, [&](const shape_t& p) {
        if (contains(part, p)) expected[index_in(to, p)] = src[index_in(from, p)];
      });
      BOOST_TEST(dst == expected, "D=" << D << " part " << text(part.offset) << text(part.extent) << " from "
                                       << text(from.offset) << text(from.extent) << " to " << text(to.offset)
                                       << text(to.extent));
    }
  }
  // An empty part touches nothing, even with null pointers.
  const box empty{{1, 0}, {0, 3}};
  kronex::detail::copy_box<double>(empty, empty, nullptr, empty, nullptr);
}

// Streaming stores write each run's whole cache lines non-temporally and the partial lines at its
// ends with plain stores: the result must be the plain copy's, for runs just under, at and over
// the streaming threshold, into destinations at every offset within a cache line (a wrong head
// or tail length drops or duplicates values at the run's ends), and the values around the part
// untouched.
BOOST_AUTO_TEST_CASE(copy_box_streaming_matches_plain_copy) {
  const std::size_t threshold = kronex::detail::copy_box_streaming_min_run / sizeof(double);
  for (std::size_t shift = 0; shift < 8; ++shift) {
    for (int trial = 0; trial < 12; ++trial) {
      // 3D blocks whose last axis gives runs around the threshold; the part may cut the last axis
      // (runs of its extent) or span it whole (runs merged over the middle axis).
      const shape_t space{uniform(1, 4), uniform(1, 3), uniform(threshold - 3, threshold + 40)};
      const box from{{0, 0, 0}, space};
      box to = random_sub_box(from, false);
      if (trial % 2 == 0) to.offset[2] = 0, to.extent[2] = space[2];  // rows whole in the destination
      box part = random_sub_box(to, false);
      if (trial % 3 != 2) part.offset[2] = to.offset[2], part.extent[2] = to.extent[2];  // ... and in the part
      std::vector<double> src(from.size());
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = double(i) + 0.5;
      std::vector<double> plain(to.size() + 16, -1.0), streamed(to.size() + 16, -1.0);
      kronex::detail::copy_box(part, from, src.data(), to, plain.data() + shift, false);
      kronex::detail::copy_box(part, from, src.data(), to, streamed.data() + shift, true);
      BOOST_TEST(streamed == plain, "shift " << shift << " part " << text(part.offset) << text(part.extent) << " to "
                                             << text(to.offset) << text(to.extent));
    }
  }
}

// ---- plan_exchanges ------------------------------------------------------------------------------

namespace {

// Checks every law of the schedule plan_exchanges makes for (global, grid, needs, options);
// returns it. The count and the shape of the schedule are checked for the default options.
std::vector<exchange_phase> check_schedule(const shape_t& global, const std::vector<int>& grid,
                                           const std::vector<bool>& needs, const exchange_options& options = {}) {
  const std::size_t D = global.size();
  const auto phases = kronex::detail::plan_exchanges(global, grid, needs, options);
  const bool other_start = !options.start.empty();
  const auto coords = all_coords(grid);
  BOOST_TEST_REQUIRE(!phases.empty());

  block_layout input{global, std::vector<int>(D, -1)};
  for (std::size_t k = 0; k < D; ++k)
    if (grid[k] > 1) input.split_by[k] = int(k);
  std::size_t m = 0;  // split modes that need locality
  bool spare = false;
  for (std::size_t k = 0; k < D; ++k) {
    m += needs[k] && grid[k] > 1;
    spare = spare || grid[k] == 1;
  }

  // Phase 0 is the start layout (the input layout by default), reached without an exchange, and
  // runs the scales; the last is the input layout unless the plan ends in its last phase's.
  BOOST_TEST(phases[0].layout.split_by == (other_start ? options.start : input.split_by));
  BOOST_TEST(phases[0].group_dims.empty());
  BOOST_TEST(phases[0].scales);
  if (!options.end_in_last) BOOST_TEST(phases.back().layout.split_by == input.split_by);
  for (const auto& ph : phases) BOOST_TEST(ph.layout.global == global);
  for (std::size_t i = 1; i < phases.size(); ++i) BOOST_TEST(!phases[i].scales);

  // The exchange count and its bound.
  const std::size_t n = kronex::detail::exchange_count(phases);
  if (!other_start) {
    BOOST_TEST(n <= m + 1);
    BOOST_TEST(n == (m == 0 ? 0 : spare && !options.end_in_last ? m + 1 : m));
    if (m == 0) BOOST_TEST(phases.size() == 1u);
  }

  // Every mode that needs locality is solved exactly once, with its axis whole; the others never.
  std::vector<int> solved(D, 0);
  for (const auto& ph : phases) {
    for (std::size_t a : ph.modes) {
      BOOST_TEST_REQUIRE(a < D);
      ++solved[a];
      BOOST_TEST(ph.layout.split_by[a] == -1, "mode " << a << " solved in layout " << ph.layout.text());
    }
  }
  for (std::size_t k = 0; k < D; ++k) BOOST_TEST(solved[k] == (needs[k] ? 1 : 0), "mode " << k);

  // Layouts: each axis split over a grid dimension of more than one rank, no dimension twice.
  for (const auto& ph : phases) {
    std::set<int> used;
    for (int g : ph.layout.split_by) {
      if (g < 0) continue;
      BOOST_TEST_REQUIRE(std::size_t(g) < grid.size());
      BOOST_TEST(grid[std::size_t(g)] > 1);
      BOOST_TEST(used.insert(g).second, "grid dim " << g << " splits two axes in " << ph.layout.text());
    }
  }

  // Each change of layout: only the exchanged grid dimensions move, and every point of a rank's
  // new block is held before by a rank of its group (differing only in those dimensions).
  for (std::size_t i = 1; i < phases.size(); ++i) {
    const block_layout &from = phases[i - 1].layout, &to = phases[i].layout;
    const std::vector<int>& group = phases[i].group_dims;
    BOOST_TEST(std::is_sorted(group.begin(), group.end()));
    BOOST_TEST((std::adjacent_find(group.begin(), group.end()) == group.end()));
    std::vector<int> moved;
    for (int g = 0; g < int(grid.size()); ++g)
      if (axis_of(from, g) != axis_of(to, g)) moved.push_back(g);
    if (group.empty()) {  // a local copy may only split what every rank of a group holds whole
      for (int g : moved) BOOST_TEST(axis_of(from, g) == -1, "phase " << i << ": local copy moves grid dim " << g);
    } else {
      BOOST_TEST(moved == group, "phase " << i << ": moved " << text(moved) << ", exchanged " << text(group));
      for (int g : group) BOOST_TEST(axis_of(from, g) >= 0);  // each group dim holds distinct data
    }
    for (const auto& c : coords) {
      const box mine = to.block(grid, c);
      if (group.empty()) {  // a local copy: the new block is inside the old one
        BOOST_TEST(kronex::detail::intersect(mine, from.block(grid, c)).size() == mine.size());
        continue;
      }
      std::size_t covered = 0;  // the old blocks of the group are disjoint: sizes add up
      for (const auto& q : coords) {
        bool peer = true;
        for (std::size_t g = 0; g < grid.size(); ++g)
          if (q[g] != c[g] && std::find(group.begin(), group.end(), int(g)) == group.end()) peer = false;
        if (peer) covered += kronex::detail::intersect(from.block(grid, q), mine).size();
      }
      BOOST_TEST(covered == mine.size(), "phase " << i << " rank " << text(c));
    }
  }

  // The shape of the schedule.
  if (m == 0 || other_start || options.end_in_last) return phases;
  if (spare) {
    BOOST_TEST_REQUIRE(phases.size() == m + 2);
    long hole = -1;  // the first whole axis, then each solved mode in turn
    for (std::size_t k = 0; k < D && hole < 0; ++k)
      if (grid[k] == 1) hole = long(k);
    for (std::size_t i = 1; i <= m; ++i) {
      const exchange_phase& ph = phases[i];
      BOOST_TEST(!ph.gather);
      BOOST_TEST_REQUIRE(ph.group_dims.size() == 1u);
      BOOST_TEST_REQUIRE(ph.modes.size() == 1u);
      const int g = ph.group_dims[0];
      BOOST_TEST(axis_of(phases[i - 1].layout, g) == int(ph.modes[0]));  // off the mode solved
      BOOST_TEST(axis_of(ph.layout, g) == int(hole));                  // onto the freed axis
      hole = long(ph.modes[0]);
    }
    BOOST_TEST(phases.back().modes.empty());
    BOOST_TEST(!phases.back().gather);
  } else {
    // Gather fallback: every axis is split; per split mode, a gather then a local copy back.
    BOOST_TEST_REQUIRE(phases.size() == 1 + 2 * m);
    for (std::size_t i = 1; i < phases.size(); i += 2) {
      const exchange_phase &g = phases[i], &back = phases[i + 1];
      BOOST_TEST(g.gather);
      BOOST_TEST_REQUIRE(g.modes.size() == 1u);
      BOOST_TEST_REQUIRE(g.group_dims.size() == 1u);
      BOOST_TEST(g.group_dims[0] == input.split_by[g.modes[0]]);
      block_layout expected = input;
      expected.split_by[g.modes[0]] = -1;
      BOOST_TEST(g.layout.split_by == expected.split_by);
      BOOST_TEST(back.group_dims.empty());
      BOOST_TEST(!back.gather);
      BOOST_TEST(back.modes.empty());
      BOOST_TEST(back.layout.split_by == input.split_by);
    }
  }
  return phases;
}

} // namespace

BOOST_AUTO_TEST_CASE(plan_exchanges_laws_every_grid) {
  const std::size_t regular[6] = {5, 4, 7, 3, 6, 4};  // uneven on 2, 3 and 4 ranks, here and there
  std::size_t cases = 0;
  for (std::size_t D = 1; D <= 6; ++D) {
    for (const auto& grid : grids_up_to(D, 4)) {
      // A regular shape and a tiny one (2 points on the first axis, 1 elsewhere: empty blocks).
      for (int tiny = 0; tiny < 2; ++tiny) {
        shape_t global(D);
        for (std::size_t k = 0; k < D; ++k) global[k] = tiny ? (k == 0 ? 2 : 1) : regular[k];
        for (unsigned pattern = 0; pattern < (1u << D); ++pattern) {
          std::vector<bool> needs(D);
          for (std::size_t k = 0; k < D; ++k) needs[k] = (pattern >> k) & 1u;
          BOOST_TEST_CONTEXT("global " << text(global) << " grid " << text(grid) << " needs_local mask " << pattern) {
            check_schedule(global, grid, needs);
          }
          ++cases;
        }
      }
    }
  }
  BOOST_TEST(cases > 3000u);  // every grid of 1..6 dims with <= 4 ranks, every pattern, 2 shapes
}

// Plans back to back: the first ends in its last layout, the second starts there and ends in the
// input layout. With the same modes (fast diagonalisation's two transforms) that is 2m exchanges.
BOOST_AUTO_TEST_CASE(plan_exchanges_back_to_back_every_grid) {
  const std::size_t regular[4] = {5, 4, 7, 3};
  std::size_t cases = 0;
  for (std::size_t D = 1; D <= 4; ++D) {
    for (const auto& grid : grids_up_to(D, 4)) {
      shape_t global(regular, regular + D);
      std::size_t any_first = 0;
      for (unsigned first = 0; first < (1u << D); ++first) {
        std::vector<bool> needs(D);
        std::size_t m = 0;
        for (std::size_t k = 0; k < D; ++k) {
          needs[k] = (first >> k) & 1u;
          m += needs[k] && grid[k] > 1;
        }
        BOOST_TEST_CONTEXT("global " << text(global) << " grid " << text(grid) << " first mask " << first) {
          exchange_options to_last;
          to_last.end_in_last = true;
          const auto forward = check_schedule(global, grid, needs, to_last);
          exchange_options from_last;
          from_last.start = forward.back().layout.split_by;
          for (unsigned second = 0; second < (1u << D); ++second) {
            std::vector<bool> needs2(D);
            for (std::size_t k = 0; k < D; ++k) needs2[k] = (second >> k) & 1u;
            BOOST_TEST_CONTEXT("second mask " << second) {
              const auto backward = check_schedule(global, grid, needs2, from_last);
              if (second == first) {
                BOOST_TEST(kronex::detail::exchange_count(forward) == m);
                BOOST_TEST(kronex::detail::exchange_count(backward) == m);
              }
            }
            ++cases;
          }
          any_first += forward.back().layout.split_by != forward.front().layout.split_by;
        }
      }
      if (D >= 2 && grid[0] > 1 && grid[D - 1] == 1)
        BOOST_TEST(any_first > 0u, "no plan ended away from the input layout on grid " << text(grid));
    }
  }
  BOOST_TEST(cases > 5000u);  // every grid of 1..4 dims with <= 4 ranks, every pair of patterns
}

// A start layout must use each grid dimension of more than one rank exactly once.
BOOST_AUTO_TEST_CASE(plan_exchanges_invalid_start) {
  const shape_t global{6, 5};
  for (const std::vector<int>& start : {std::vector<int>{0, 0}, std::vector<int>{-1, -1}, std::vector<int>{0},
                                        std::vector<int>{1, -1}, std::vector<int>{2, -1}}) {
    exchange_options o;
    o.start = start;
    BOOST_CHECK_THROW(kronex::detail::plan_exchanges(global, {2, 1}, {true, true}, o), kronex::error);
  }
  exchange_options o;
  o.start = {-1, 0};
  BOOST_TEST(kronex::detail::exchange_count(kronex::detail::plan_exchanges(global, {2, 1}, {true, true}, o)) == 1u);
}

// The golden schedule below, split into two plans that run back to back.
BOOST_AUTO_TEST_CASE(plan_exchanges_back_to_back_golden) {
  // 3D (10,9,7) on grid (2,2,1), every mode banded. Forward, ending in its last layout: phase 0
  // solves mode 2, then the chain as in plan_exchanges_golden without the return: (g1,-,g0).
  exchange_options to_last;
  to_last.end_in_last = true;
  const auto forward = kronex::detail::plan_exchanges({10, 9, 7}, {2, 2, 1}, {true, true, true}, to_last);
  // Backward from (g1,-,g0): phase 0 solves mode 1 (whole there); exchange 1 over g1 moves g1
  // from axis 0 back onto axis 1: (-,g1,g0), mode 0 solved; exchange 2 over g0 moves g0 from
  // axis 2 back onto axis 0: (g0,g1,-), the input layout, mode 2 solved. 2 + 2 exchanges.
  exchange_options from_last;
  from_last.start = forward.back().layout.split_by;
  const auto backward = kronex::detail::plan_exchanges({10, 9, 7}, {2, 2, 1}, {true, true, true}, from_last);
  std::ostringstream os;
  for (const auto* phases : {&forward, &backward}) {
    for (std::size_t i = 0; i < phases->size(); ++i) {
      const auto& ph = (*phases)[i];
      os << i << " " << ph.layout.text() << " via " << text(ph.group_dims) << " modes "
         << text(std::vector<int>(ph.modes.begin(), ph.modes.end())) << (ph.scales ? " scales" : "") << "\n";
    }
    os << "--\n";
  }
  BOOST_TEST(os.str() ==
             "0 (g0,g1,-) via () modes (2) scales\n"
             "1 (-,g1,g0) via (0) modes (0)\n"
             "2 (g1,-,g0) via (1) modes (1)\n"
             "--\n"
             "0 (g1,-,g0) via () modes (1) scales\n"
             "1 (-,g1,g0) via (1) modes (0)\n"
             "2 (g0,g1,-) via (0) modes (2)\n"
             "--\n");
}

// Without a whole axis: 1D on 2 ranks, 2D on a (2,2) grid.
BOOST_AUTO_TEST_CASE(plan_exchanges_gather_fallback) {
  const auto one = kronex::detail::plan_exchanges({11}, {2}, {true});
  BOOST_TEST_REQUIRE(one.size() == 3u);
  BOOST_TEST(one[1].gather);
  BOOST_TEST(one[1].layout.text() == "(-)");
  BOOST_TEST(one[2].layout.text() == "(g0)");
  BOOST_TEST(one[2].group_dims.empty());
  BOOST_TEST(kronex::detail::exchange_count(one) == 1u);
  const auto two = kronex::detail::plan_exchanges({4, 6}, {2, 2}, {true, true});
  BOOST_TEST(kronex::detail::exchange_count(two) == 2u);
  BOOST_TEST_REQUIRE(two.size() == 5u);
  BOOST_TEST(two[1].layout.text() == "(-,g1)");
  BOOST_TEST(two[3].layout.text() == "(g0,-)");
  // Only mode 1 needs locality: one gather.
  BOOST_TEST(kronex::detail::exchange_count(kronex::detail::plan_exchanges({4, 6}, {2, 2}, {false, true})) == 1u);
}

// One schedule in full. 3D (10,9,7) on grid (2,2,1), every mode banded: phase 0 solves mode 2
// (whole) in the input layout (g0,g1,-); the spare axis is 2. Exchange 1 over g0 moves g0 from
// axis 0 onto axis 2: (-,g1,g0), mode 0 solved; exchange 2 over g1 moves g1 from axis 1 onto
// axis 0 (freed just before): (g1,-,g0), mode 1 solved; exchange 3 over {g0,g1} restores
// (g0,g1,-). 3 exchanges = 2 split modes + 1.
BOOST_AUTO_TEST_CASE(plan_exchanges_golden) {
  const auto phases = kronex::detail::plan_exchanges({10, 9, 7}, {2, 2, 1}, {true, true, true});
  std::ostringstream os;
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const auto& ph = phases[i];
    os << i << " " << ph.layout.text() << " via " << text(ph.group_dims) << (ph.gather ? " gather" : "")
       << " modes " << text(std::vector<int>(ph.modes.begin(), ph.modes.end())) << (ph.scales ? " scales" : "") << "\n";
  }
  BOOST_TEST(os.str() ==
             "0 (g0,g1,-) via () modes (2) scales\n"
             "1 (-,g1,g0) via (0) modes (0)\n"
             "2 (g1,-,g0) via (1) modes (1)\n"
             "3 (g0,g1,-) via (0,1) modes ()\n");
  BOOST_TEST(kronex::detail::exchange_count(phases) == 3u);
}
