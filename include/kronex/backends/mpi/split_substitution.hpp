#pragma once
// A substitution along a split axis run where its rows lie (no MPI here, so it is unit-testable):
// how one rank runs its share of a solve program (row_program.hpp) whose rows, the indices of the
// split axis, are cut into blocks over P ranks, without moving the blocks. The program's
// operations fall into segments by the rank that owns their target row; for a band that is not
// folded these take turns forward on ranks 0, 1, ..., P - 1 and backward on P - 1, ..., 0. The
// ranks run the segments in the program's order. Before a segment, its rank receives the rows of
// other ranks that the segment's operations read (a transfer: a band's few neighbouring rows),
// from the rank that last wrote them, as they are after that rank's last segment before this one.
// Within its segments a rank runs the operations that read only its own rows in place on its
// block, and those that read received rows on a strip: the received rows first, then the own
// rows the operations touch (gathered from the block before, put back after). Every operation
// keeps its entries in order (row_program::piece), so every row gets the serial program's bits.
// The lines can be cut into chunks and each segment run chunk by chunk (order()), so that the
// ranks work as a pipeline; the chunking is the caller's.
#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "../host/row_program.hpp"

namespace kronex::detail {

struct split_segment {
  std::size_t owner = 0, first = 0, last = 0;  // operations [first, last) of the program
};

// Rows of `sender` that segment `to` reads, as they are after the sender's segment `from` (the
// sender's last before `to`; -1: before any, the rows as they enter the substitution). They
// arrive in strip rows [at, at + rows.size()) of the receiving rank.
struct split_transfer {
  long from = -1;
  std::size_t to = 0, sender = 0;
  std::vector<index_t> rows;
  std::size_t at = 0;
};

// Operations of one segment run in place on the rank's block (rows relabelled to the block's:
// row g is block row g - first own row), or on the segment's strip.
template <class T>
struct split_run {
  row_program<T> program;
  bool on_strip = false;
  std::vector<index_t> own_rows, strip_rows;  // on a strip: the own rows it holds, and where
};

// One of this rank's segments: its runs, and the rows its strip holds.
template <class T>
struct split_part {
  std::size_t segment = 0, strip_rows = 0;
  std::vector<split_run<T>> runs;
};

template <class T>
struct split_substitution {
  std::vector<std::size_t> offsets;  // rank q owns rows [offsets[q], offsets[q + 1])
  std::size_t rank = 0;
  std::vector<split_segment> segments;
  std::vector<split_transfer> transfers;
  std::vector<split_part<T>> parts;  // this rank's segments, in order

  std::size_t ranks() const { return offsets.size() - 1; }
  std::size_t owner(index_t g) const {
    return std::size_t(std::upper_bound(offsets.begin() + 1, offsets.end() - 1, std::size_t(g)) - offsets.begin() - 1);
  }

  // The order rank `rank` runs its (part, chunk) items in, with `chunks` chunks: by wave c + j
  // (segment j of the program), the later segment first on a tie. A rank waits only for items of
  // earlier waves (a segment reads the rows of earlier segments), so no order of waiting can
  // deadlock; and a rank with two segments (forward, then backward) comes back to a chunk two
  // waves after it left it, while its rows are likely still in cache.
  std::vector<std::pair<std::size_t, std::size_t>> order(std::size_t chunks) const {
    std::vector<std::pair<std::size_t, std::size_t>> items;
    for (std::size_t i = 0; i < parts.size(); ++i)
      for (std::size_t c = 0; c < chunks; ++c) items.emplace_back(i, c);
    std::sort(items.begin(), items.end(), [&](const auto& a, const auto& b) {
      const std::size_t ja = parts[a.first].segment, jb = parts[b.first].segment;
      return a.second + ja != b.second + jb ? a.second + ja < b.second + jb : ja > jb;
    });
    return items;
  }
};

// The substitution of program p on rank `rank` of the blocks `offsets` (P + 1 increasing row
// offsets, from 0 to p.n), or nothing where it would not pipeline: a swap between two ranks'
// rows, or segments more than forward and backward (2P - 1; a folded periodic band alternates
// between the ends of the axis at every operation).
template <class T>
std::optional<split_substitution<T>> make_split_substitution(const row_program<T>& p,
                                                             const std::vector<std::size_t>& offsets,
                                                             std::size_t rank) {
  constexpr index_t unmapped = ~index_t(0);
  split_substitution<T> s;
  s.offsets = offsets;
  s.rank = rank;
  const std::size_t P = s.ranks();
  for (std::size_t k = 0; k < p.ops.size(); ++k) {
    const row_op<T>& o = p.ops[k];
    const std::size_t q = s.owner(o.target);
    if (o.swap && s.owner(o.other) != q) return std::nullopt;
    if (s.segments.empty() || s.segments.back().owner != q) s.segments.push_back({q, k, k + 1});
    else s.segments.back().last = k + 1;
  }
  if (s.segments.size() > 2 * P - 1) return std::nullopt;

  for (std::size_t j = 0; j < s.segments.size(); ++j) {
    const split_segment& seg = s.segments[j];
    std::map<std::pair<long, std::size_t>, std::set<index_t>> reads;  // (from, sender) -> rows
    for (std::size_t k = seg.first; k < seg.last; ++k)
      for (index_t e = p.ops[k].begin; e < p.ops[k].end; ++e) {
        const std::size_t q = s.owner(p.src[e]);
        if (q == seg.owner) continue;
        long from = -1;
        for (std::size_t i = 0; i < j; ++i)
          if (s.segments[i].owner == q) from = long(i);
        reads[{from, q}].insert(p.src[e]);
      }
    std::size_t at = 0;
    for (const auto& [key, rows] : reads) {
      s.transfers.push_back({key.first, j, key.second, std::vector<index_t>(rows.begin(), rows.end()), at});
      at += rows.size();
    }
  }

  const std::size_t first_row = offsets[rank], own_rows = offsets[rank + 1] - first_row;
  std::vector<index_t> in_block(p.n, unmapped);
  for (std::size_t g = first_row; g < first_row + own_rows; ++g) in_block[g] = index_t(g - first_row);
  const auto reads_others = [&](std::size_t k) {
    for (index_t e = p.ops[k].begin; e < p.ops[k].end; ++e)
      if (s.owner(p.src[e]) != rank) return true;
    return false;
  };
  for (std::size_t j = 0; j < s.segments.size(); ++j) {
    const split_segment& seg = s.segments[j];
    if (seg.owner != rank) continue;
    split_part<T> part;
    part.segment = j;
    std::vector<index_t> on_strip(p.n, unmapped);
    for (const split_transfer& t : s.transfers)
      if (t.to == j)
        for (std::size_t i = 0; i < t.rows.size(); ++i) on_strip[t.rows[i]] = index_t(t.at + i), ++part.strip_rows;
    for (std::size_t k = seg.first; k < seg.last;) {
      split_run<T> run;
      run.on_strip = reads_others(k);
      std::size_t e = k;
      while (e < seg.last && reads_others(e) == run.on_strip) ++e;
      if (run.on_strip) {
        const auto touch = [&](index_t g) {
          if (s.owner(g) != rank) return;
          if (on_strip[g] == unmapped) on_strip[g] = index_t(part.strip_rows++);
          if (std::find(run.own_rows.begin(), run.own_rows.end(), g) != run.own_rows.end()) return;
          run.own_rows.push_back(g);
          run.strip_rows.push_back(on_strip[g]);
        };
        for (std::size_t i = k; i < e; ++i) {
          touch(p.ops[i].target);
          if (p.ops[i].swap) touch(p.ops[i].other);
          for (index_t q = p.ops[i].begin; q < p.ops[i].end; ++q) touch(p.src[q]);
        }
        run.program = p.piece(k, e, on_strip, part.strip_rows);
      } else {
        run.program = p.piece(k, e, in_block, own_rows);
      }
      part.runs.push_back(std::move(run));
      k = e;
    }
    s.parts.push_back(std::move(part));
  }
  return s;
}

} // namespace kronex::detail
