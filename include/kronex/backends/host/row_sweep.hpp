#pragma once
// A row sweep: the substitution along the first mode (L = 1) of a tensor whose rows, the R
// values of one index of that mode, are short enough that the few an operation touches stay in
// cache, run on the tensor's rows in place (row_kernels.hpp: run_solve_rows), with the
// substitution along the last mode interleaved. A panel walk of the first mode would gather
// segments of rows far apart (R values apart) and scatter them back; on whole rows the
// operations stream through memory instead. The last mode is solved block of rows by block of
// rows (its usual panel walk on those rows' lines) just before the first operation that touches
// the block: the forward sweep then finds its rows in cache, so the tensor is read and written
// once by the last mode and the forward sweep together, and once by the backward sweep. The two
// commute (they act on different modes), so the result is the two steps' in either order.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#if __has_include(<unistd.h>)
#include <unistd.h>
#endif

#include "row_program.hpp"

namespace kronex::detail {

// One core's level-2 cache in bytes, as the system reports it (512 KiB where it does not).
inline std::size_t level2_cache_bytes() {
  static const std::size_t bytes = [] {
#if defined(_SC_LEVEL2_CACHE_SIZE)
    const long b = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (b > 0) return std::size_t(b);
#endif
    return std::size_t(512) << 10;
  }();
  return bytes;
}

// Rows of at most this many bytes are swept: an operation of a band of half-width p touches
// p + 1 rows and the sweep prefetches two more, which then stay in L2 when a row is an eighth of
// it. At least 64 KiB, the limit measured on machines of 512 KiB; on an Intel Xeon VM of 2 MiB,
// rows of 147 KB swept took modes 0 and 2 of (192,96,192) doubles from 12.3-12.7 ms to 9.4-9.8
// (docs/performance.md, "Row sweeps of rows up to an eighth of L2"). At most 256 KiB, the
// longest rows measured: a sweep whose rows miss the cache reads each from memory p + 1 times,
// and a system may report a cache shared by several cores as one core's.
inline std::size_t row_sweep_max_row_bytes() {
  return std::clamp(level2_cache_bytes() / 8, std::size_t(64) << 10, std::size_t(256) << 10);
}

// Tensors of fewer bytes keep the panel walks, which were as fast or faster for tensors that a
// last-level cache can hold: on an AMD EPYC with AVX-512 (one thread, p = 3, clamped and periodic,
// both plans in one process), the sweep took 0.71-0.90x the time of the walks for 2048^2 values
// (float, double, complex<double>), 0.72-0.95x for 1024^2 double and complex<double>,
// 0.94-1.06x for 1024^2 float (4 MiB), and 1.02-1.27x for 512^2.
inline constexpr std::size_t row_sweep_min_bytes = std::size_t(8) << 20;

// The rows ahead of the current operation whose lines a sweep prefetches: at 2, the rows of the
// backward sweep (from memory) arrived in time on the same machine; without, that sweep took
// 1.6-2x as long (2048^2 double).
inline constexpr std::size_t row_sweep_prefetch_rows = 2;

// The order of a row sweep over a program of n rows, in blocks of `block_rows` rows: piece k
// first solves the blocks block_order[block_end[k-1] .. block_end[k]) along the last mode (those
// its operations are the first to touch), then runs operations [op_end[k-1], op_end[k]). Blocks
// no operation touches come last, with an empty piece.
struct row_sweep_schedule {
  std::size_t block_rows = 1;
  std::vector<std::size_t> block_order, block_end, op_end;
  std::vector<std::uint32_t> targets;  // each operation's target row (the prefetch's row list)

  std::size_t pieces() const { return op_end.size(); }
};

template <class T>
row_sweep_schedule make_row_sweep_schedule(const row_program<T>& p, std::size_t block_rows) {
  static_assert(std::is_same_v<index_t, std::uint32_t>, "row lists are row_program indices");
  row_sweep_schedule s;
  s.block_rows = block_rows;
  const std::size_t blocks = (p.n + block_rows - 1) / block_rows;
  std::vector<char> solved(blocks, 0);
  std::size_t ops_done = 0;  // operations before the open piece
  const auto touch = [&](index_t row, std::size_t k) {
    const std::size_t b = row / block_rows;
    if (solved[b]) return;
    if (k > ops_done) {  // the open piece's operations come before this block is solved
      s.block_end.push_back(s.block_order.size());
      s.op_end.push_back(k);
      ops_done = k;
    }
    solved[b] = 1;
    s.block_order.push_back(b);
  };
  for (std::size_t k = 0; k < p.ops.size(); ++k) {
    const row_op<T>& o = p.ops[k];
    touch(o.target, k);
    if (o.swap) touch(o.other, k);
    else
      for (index_t e = o.begin; e < o.end; ++e) touch(p.src[e], k);
    s.targets.push_back(o.target);
  }
  for (std::size_t b = 0; b < blocks; ++b)
    if (!solved[b]) s.block_order.push_back(b);
  s.block_end.push_back(s.block_order.size());
  s.op_end.push_back(p.ops.size());
  return s;
}

} // namespace kronex::detail
