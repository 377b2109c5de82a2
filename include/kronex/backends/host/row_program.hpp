#pragma once
// A row program is the compiled form of one 1D operator acting on a panel of right-hand sides:
// n rows, each a short contiguous vector (one entry per line of the tensor along the mode).
// Every 1D solve and apply that the host backend runs is such a program; the kernels that run it
// know nothing about banded, periodic or dense factors, transposes or pivoting.
//
//   solve program (in place):  for each op in order:
//       swap:    row[a] <-> row[b]
//       update:  row[t] = scale * row[t] - sum_e coef[e] * row[src[e]]   (coef already scaled)
//   apply program (out of place): out[i] = sum_e coef[e] * in[src[e]] over row i's entries.
// A solve program also lists its band runs (band_run): stretches of operations that a kernel
// without per-operation bookkeeping can run, as each sweep of an unfolded narrow band is.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "../../core/op.hpp"
#include "../../core/value_traits.hpp"
#include "../../factors/factor_view.hpp"
#include "lu_factors.hpp"

namespace kronex::detail {

template <class T>
struct row_op {
  index_t target = 0;
  index_t other = 0;             // swap partner (swap ops only)
  index_t begin = 0, end = 0;    // entry range in src/coef
  T scale = T(1);
  bool swap = false;
  bool scaled = false;
  // How many of the last sources are the rows the operations just before wrote, newest last and
  // still current (at most max_recent_rows; no swap in between): the kernel holds those in
  // registers (row_kernels.hpp).
  std::uint8_t recent = 0;
};

inline constexpr std::size_t max_recent_rows = 3;

// A run of update operations that a band kernel runs with no per-operation bookkeeping
// (row_kernels.hpp). All have `width` sources and the same scaling (all scaled or none), their
// coefficients are contiguous, `width` per operation, and their rows lie one stride apart along
// one or two fronts. Three shapes:
//   lag 1, one front: every operation reads the `width` rows (1 to max_recent_rows) the `width`
//     operations just before it wrote (row_op::recent == width), and writes the row one `step`
//     after the last one's. Each sweep (L, then U) of an unfolded band without pivoting is one
//     after its first `width` operations.
//   lag 2, two fronts: two interleaved chains, operations first, first + 2, ... and first + 1,
//     first + 3, ...: each reads the `width` rows (1 to max_recent_rows) its own chain's `width`
//     operations before it wrote, and writes one step after its chain's last (`step` for the
//     first operation's chain, `other_step` for the other). The chains' rows are disjoint, so
//     each runs whole in turn with the same results. In a folded periodic band (rows 0, n-1,
//     1, n-2, ...: two fronts) most of each sweep is such a run: away from the corners the
//     factors couple each front only to itself (the coupling through the corners has decayed to
//     negligible entries, which the factorization drops).
//   lag 1, two fronts: every operation reads the rows the `width` operations just before it wrote
//     (both fronts), and the fronts alternate, each row one step after its front's last: a
//     folded periodic band near its corners (width 2p, even, up to 2 max_recent_rows).
struct band_run {
  std::size_t first = 0, last = 0;  // operations [first, last)
  std::size_t width = 0;
  std::size_t lag = 1, fronts = 1;
  long step = 0, other_step = 0;
  bool scaled = false;
};

// Shorter runs are left to the general kernel.
inline constexpr std::size_t min_band_run = 8;

// Operations [first, last) of a band run (first < last, both within it), as a band run of their
// own, for a caller that runs a program in pieces (row_sweep.hpp). Each operation keeps its rows
// and sources; with two fronts, the piece's first operation may be on the run's second front,
// whose step then comes first. Every operation reads rows of its own chain or front only through
// memory, so the band kernels run a piece as they run the whole (its first operations' sources
// are the rows the run's operations before it wrote).
inline band_run band_run_piece(const band_run& run, std::size_t first, std::size_t last) {
  band_run piece = run;
  piece.first = first;
  piece.last = last;
  if (run.fronts == 2 && (first - run.first) % 2 == 1) std::swap(piece.step, piece.other_step);
  return piece;
}

template <class T>
struct row_program {
  std::size_t n = 0;
  std::vector<row_op<T>> ops;      // solve programs
  std::vector<index_t> row_ptr;    // apply programs: row i's entries are [row_ptr[i], row_ptr[i+1])
  std::vector<index_t> src;
  std::vector<T> coef;
  std::vector<band_run> band_runs;  // solve programs, found by find_band_runs (in order)
  // Complex values only: this program with real coefficients, when all of them (and the scales)
  // are real, as for a real matrix and complex right-hand sides. A strip row of V complex values
  // is 2V real ones in memory, (re, im) pairs, so the real kernels run it there: half the
  // multiply-adds, no permutes, and the real band kernels (set by with_real_part).
  std::shared_ptr<const row_program<real_t<T>>> real_part;

  // Per line: multiply-adds and plain multiplies (row scalings), for flop counts in plans.
  std::size_t madds() const { return coef.size(); }
  std::size_t multiplies() const {
    std::size_t s = 0;
    for (const auto& o : ops) s += o.scaled ? 1 : 0;
    return s;
  }
  std::size_t bytes() const {
    return ops.size() * sizeof(row_op<T>) + row_ptr.size() * sizeof(index_t) + src.size() * sizeof(index_t) +
           coef.size() * sizeof(T) + (real_part ? real_part->bytes() : 0);
  }

  // The most rows written just before an update that it reads (row_op::recent, at most
  // max_recent_rows): the register window a solve kernel needs for this program (row_kernels.hpp).
  // A band of half-width p reads min(p, 3) such rows; a wider window would only cost moves.
  std::size_t recent_rows() const { return m_recent_rows; }

  // Whether a solve runs faster as one chain that holds the rows written last in registers than
  // as two chains that hold none (where registers allow only one of the two: solve_chains in
  // row_kernels.hpp): when at least 3/4 of the updates read the row the update before wrote, and
  // they have at most 8 sources on average. Unfolded bands up to p = 8 qualify (every update
  // reads the rows above); folded periodic bands do not: in the fold's order the row before is a
  // source of 21-46 % of the updates for p <= 3, and above that they have about 2p sources. In
  // cache one chain was faster for those too, but not in whole solves (256^3 double, one chain
  // against two: periodic p = 3 13 % slower, p = 7 2-9 %; clamped p = 5 and 7 0-5 % faster).
  bool one_chain_pays() const {
    return m_updates > 0 && 4 * m_reading_last >= 3 * m_updates && coef.size() <= 8 * m_updates;
  }

  // Whether most operations (3/4) lie in band runs: the kernels then run the runs as bands and
  // the rest with the general kernel.
  bool runs_in_bands() const {
    std::size_t in_runs = 0;
    for (const auto& r : band_runs) in_runs += r.last - r.first;
    return in_runs > 0 && 4 * in_runs >= 3 * ops.size();
  }

  // Fills band_runs: the maximal runs of at least min_band_run operations (band_run says which).
  void find_band_runs() {
    band_runs.clear();
    for (std::size_t k = 0; k < ops.size();) {
      band_run run;
      if (band_run_at(k, 1, 1, run) || band_run_at(k, 2, 2, run) || band_run_at(k, 1, 2, run)) {
        band_runs.push_back(run);
        k = run.last;
      } else {
        ++k;
      }
    }
  }
  // Appends row[t] = scale * (row[t] - sum_e c_e row[j_e]), stored as
  // row[t] = scale * row[t] - sum_e (scale * c_e) row[j_e]: the scaling then happens off the
  // dependency chain. Entries are ordered so the row written most recently comes last: each
  // update waits only for its final multiply-add, not the whole sum (substitution is a chain of
  // dependent row updates, so latency, not throughput, bounds the kernel).
  void add_update(index_t target, const sparse_row<T>& entries, bool conj, bool scaled, T scale) {
    if (entries.empty() && !scaled) return;
    if (m_last_write.size() < n) m_last_write.assign(n, 0);
    sparse_row<T> sorted(entries);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [&](const auto& a, const auto& b) { return m_last_write[a.first] < m_last_write[b.first]; });
    const std::size_t begin = coef.size();
    for (const auto& [j, v] : sorted) {
      src.push_back(j);
      const T c = conj ? conj_if_complex(v) : v;
      coef.push_back(scaled ? scale * c : c);
    }
    push_update(target, begin, scaled, scale);
  }
  void add_swap(index_t a, index_t b) {
    if (m_last_write.size() < n) m_last_write.assign(n, 0);
    row_op<T> o;
    o.swap = true;
    o.target = a;
    o.other = b;
    ops.push_back(o);
    m_last_write[a] = m_last_write[b] = ops.size();
  }

  // Operations [first, last) as a program of its own on `rows` rows: row r here is row
  // relabel[r] there (every row the operations touch must be mapped to one below `rows`). For a
  // caller whose rows lie in more than one place, such as a distributed solve that runs the
  // operations on its own rows in place and those that read a neighbour's rows on a strip. Each
  // operation keeps its entries in their order, so it computes the same values bit for bit;
  // register windows (row_op::recent) and band runs are found anew for the piece.
  row_program piece(std::size_t first, std::size_t last, const std::vector<index_t>& relabel, std::size_t rows) const {
    row_program q;
    q.n = rows;
    q.m_last_write.assign(rows, 0);
    for (std::size_t k = first; k < last; ++k) {
      const row_op<T>& o = ops[k];
      if (o.swap) {
        q.add_swap(relabel[o.target], relabel[o.other]);
        continue;
      }
      const std::size_t begin = q.coef.size();
      for (index_t e = o.begin; e < o.end; ++e) {
        q.src.push_back(relabel[src[e]]);
        q.coef.push_back(coef[e]);
      }
      q.push_update(relabel[o.target], begin, o.scaled, o.scale);
    }
    q.find_band_runs();
    q.with_real_part();
    return q;
  }

  // Sets real_part when the program is complex and every coefficient and scale is real.
  void with_real_part() {
    if constexpr (value_traits<T>::is_complex) {
      using R = real_t<T>;
      const auto real = [](const T& v) { return v.imag() == R(0); };
      if (!std::all_of(coef.begin(), coef.end(), real) ||
          !std::all_of(ops.begin(), ops.end(), [&](const row_op<T>& o) { return real(o.scale); }))
        return;
      row_program<R> r;
      r.n = n;
      r.ops.reserve(ops.size());
      for (const row_op<T>& o : ops)
        r.ops.push_back({o.target, o.other, o.begin, o.end, o.scale.real(), o.swap, o.scaled, o.recent});
      r.row_ptr = row_ptr;
      r.src = src;
      r.coef.reserve(coef.size());
      for (const T& c : coef) r.coef.push_back(c.real());
      r.band_runs = band_runs;
      r.m_updates = m_updates;
      r.m_reading_last = m_reading_last;
      r.m_recent_rows = m_recent_rows;
      real_part = std::make_shared<const row_program<R>>(std::move(r));
    }
  }

private:
  template <class>
  friend struct row_program;

  // Appends the update of `target` whose entries, coefficients already scaled, are the last in
  // src/coef from `begin` on, the row written most recently last.
  void push_update(index_t target, std::size_t begin, bool scaled, T scale) {
    row_op<T> o;
    o.target = target;
    o.begin = index_t(begin);
    o.end = index_t(coef.size());
    const std::size_t width = coef.size() - begin;
    // Source end-1-j is recent if operation ops.size()-1-j, not a swap, wrote it last.
    for (std::size_t j = 0; j < max_recent_rows && j < width && j < ops.size(); ++j) {
      const std::size_t before = ops.size() - 1 - j;
      const index_t row = src[o.end - 1 - j];
      if (ops[before].swap || ops[before].target != row || m_last_write[row] != before + 1) break;
      o.recent = std::uint8_t(j + 1);
    }
    o.scaled = scaled;
    o.scale = scale;
    ops.push_back(o);
    m_last_write[target] = ops.size();
    ++m_updates;
    if (o.recent > 0) ++m_reading_last;
    m_recent_rows = std::max<std::size_t>(m_recent_rows, o.recent);
  }

  std::size_t width_of(const row_op<T>& o) const { return std::size_t(o.end - o.begin); }

  // Whether operation k reads exactly the rows that operations k - lag width, ..., k - lag wrote
  // (oldest first), none of them a swap, and the rows of operations k - lag width to k are
  // distinct (so those rows are still current, and k writes none of its sources).
  bool reads_lagged(std::size_t k, std::size_t width, std::size_t lag) const {
    const row_op<T>& o = ops[k];
    if (o.swap || width_of(o) != width || width == 0 || k < lag * width) return false;
    for (std::size_t q = 0; q < width; ++q) {
      const row_op<T>& before = ops[k - lag * (width - q)];
      if (before.swap || src[o.begin + q] != before.target) return false;
    }
    for (std::size_t a = k - lag * width; a < k; ++a) {
      if (ops[a].swap) return false;
      for (std::size_t b = a + 1; b <= k; ++b)
        if (ops[a].target == ops[b].target) return false;
    }
    return true;
  }

  // The maximal band run of the given lag and fronts that starts at operation k, if it has at
  // least min_band_run operations. A two-front run with lag 1 computes its sources' rows from
  // the fronts' steps, so the fronts must step evenly back to its first operation's oldest source.
  bool band_run_at(std::size_t k, std::size_t lag, std::size_t fronts, band_run& run) const {
    const row_op<T>& o = ops[k];
    const std::size_t width = width_of(o);
    const bool one_front = fronts == 1;
    const bool fits = one_front ? width <= max_recent_rows && o.recent == width
                      : lag == 2  ? width <= max_recent_rows
                                  : width % 2 == 0 && width <= 2 * max_recent_rows;
    if (!fits || width == 0 || k + 2 * fronts > ops.size()) return false;
    const auto step_at = [&](std::size_t a) { return long(ops[a].target) - long(ops[a - fronts].target); };
    const long steps[2] = {step_at(k + fronts), one_front ? 0 : step_at(k + 3)};
    for (std::size_t f = 0; f < fronts; ++f)
      if (steps[f] != 1 && steps[f] != -1) return false;
    // Operation a (a >= fronts) steps evenly: one step after its front's last row.
    const auto even = [&](std::size_t a) { return step_at(a) == steps[(a + fronts - k % fronts) % fronts]; };
    if (!one_front && lag == 1)
      for (std::size_t a = k + 2 - std::min(k + 2, width); a < k + fronts; ++a)
        if (a < fronts || !even(a)) return false;
    std::size_t e = k;
    while (e < ops.size() && reads_lagged(e, width, lag) && ops[e].scaled == o.scaled &&
           (!one_front || ops[e].recent == width) && (e < k + fronts || even(e)))
      ++e;
    if (e - k < std::max(min_band_run, 2 * fronts)) return false;
    if (lag == 2 && !chains_apart(k, e, width)) return false;
    // The kernels across blocks find a chain's sources one step apart back from its row
    // (solve_band_chain_across), so the rows its first operation reads must lie so: they do in a
    // whole program, not always in a piece whose rows were relabelled (piece()). (A two-front run
    // with lag 1 was checked above.)
    if (one_front || lag == 2)
      for (std::size_t c = 0; c < fronts; ++c)
        for (std::size_t q = 1; q <= width; ++q)
          if (long(ops[k + c - lag * q].target) != long(ops[k + c].target) - long(q) * steps[c]) return false;
    run.first = k;
    run.last = e;
    run.width = width;
    run.lag = lag;
    run.fronts = fronts;
    run.step = steps[0];
    run.other_step = steps[1];
    run.scaled = o.scaled;
    return true;
  }

  // Whether the two chains of a lag-2 run over operations [k, e) touch disjoint rows, counting the
  // rows each reads before its first write: then each chain can run whole before the other.
  bool chains_apart(std::size_t k, std::size_t e, std::size_t width) const {
    index_t lo[2], hi[2];
    for (std::size_t c = 0; c < 2; ++c) {
      lo[c] = hi[c] = ops[k + c - 2 * width].target;
      for (std::size_t a = k + c - 2 * width; a < e; a += 2) {
        lo[c] = std::min(lo[c], ops[a].target);
        hi[c] = std::max(hi[c], ops[a].target);
      }
    }
    return hi[0] < lo[1] || hi[1] < lo[0];
  }

  std::vector<std::size_t> m_last_write;  // per row: 1 + index of the op that last wrote it
  std::size_t m_updates = 0;              // update ops (not swaps)
  std::size_t m_reading_last = 0;         // update ops whose last source the op before wrote
  std::size_t m_recent_rows = 0;          // the largest row_op::recent
};

// Columns of a row-stored triangle, so transposed solves can run as row updates too.
template <class T>
std::vector<sparse_row<T>> transpose_rows(const std::vector<sparse_row<T>>& rows) {
  std::vector<sparse_row<T>> cols(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (const auto& [j, v] : rows[i]) cols[j].emplace_back(index_t(i), v);
  return cols;
}

// x = op(A)^{-1} b from A = P L U.  N (R): x = U^{-1} L^{-1} P^{-1} b with (conjugated) factors;
// T (C): x = P L^{-T} U^{-T} b (L^{-H}, U^{-H}). Factors of a folded band (lu.order) are those of
// B = Q A Q^T: position k is row order[k] of the panel, so the same updates, addressed through
// the order, solve with A and leave x in A's order.
template <class T>
row_program<T> solve_program(const lu_factors<T>& lu, op o) {
  row_program<T> p;
  p.n = lu.n;
  const index_t n = index_t(lu.n);
  const bool conj = is_conjugated(o);
  const bool ordered = !lu.order.empty();
  auto row = [&](index_t k) { return ordered ? lu.order[k] : k; };
  sparse_row<T> relabelled;  // add_update copies its entries, so one scratch row serves every call
  auto rows_of = [&](const sparse_row<T>& r) -> const sparse_row<T>& {
    if (!ordered) return r;
    relabelled = r;
    for (auto& e : relabelled) e.first = lu.order[e.first];
    return relabelled;
  };
  if (!is_transposed(o)) {
    for (const auto& [a, b] : lu.swaps) p.add_swap(row(a), row(b));
    for (index_t i = 1; i < n; ++i) p.add_update(row(i), rows_of(lu.lower[i]), conj, false, T(1));
    for (index_t i = n; i-- > 0;) {
      const T d = conj ? conj_if_complex(lu.diag[i]) : lu.diag[i];
      p.add_update(row(i), rows_of(lu.upper[i]), conj, true, T(1) / d);
    }
    p.find_band_runs();
    p.with_real_part();
    return p;
  }
  const auto ut = transpose_rows(lu.upper);  // row i of U^T: entries U(j, i), j < i
  const auto lt = transpose_rows(lu.lower);  // row i of L^T: entries L(j, i), j > i
  for (index_t i = 0; i < n; ++i) {
    const T d = conj ? conj_if_complex(lu.diag[i]) : lu.diag[i];
    p.add_update(row(i), rows_of(ut[i]), conj, true, T(1) / d);
  }
  for (index_t i = n; i-- > 0;) p.add_update(row(i), rows_of(lt[i]), conj, false, T(1));
  for (auto it = lu.swaps.rbegin(); it != lu.swaps.rend(); ++it) p.add_swap(row(it->first), row(it->second));
  p.find_band_runs();
  p.with_real_part();
  return p;
}

// f(i, j, A(i, j)) for every entry of a banded or dense factor that may be nonzero: the band
// (wrapped for a periodic one), or all n^2 entries of a dense one.
template <class T, class F>
void for_each_entry(const factor_view<T>& f, F&& fn) {
  for (std::size_t i = 0; i < f.n; ++i) {
    if (f.kind == factor_kind::banded) {
      for (long d = -long(f.kl); d <= long(f.ku); ++d) {
        long j = long(i) + d;
        if (f.bc == boundary::periodic) j = (j + long(f.n)) % long(f.n);
        if (j >= 0 && j < long(f.n)) fn(i, std::size_t(j), f(i, std::size_t(j)));
      }
    } else {
      for (std::size_t j = 0; j < f.n; ++j) fn(i, j, f(i, j));
    }
  }
}

// y = op(A) x, entries of A in row-compressed form, exact zeros dropped.
template <class T>
row_program<T> apply_program(const factor_view<T>& f, op o) {
  row_program<T> p;
  p.n = f.n;
  std::vector<sparse_row<T>> rows(f.n);
  const bool conj = is_conjugated(o);
  for_each_entry(f, [&](std::size_t i, std::size_t j, T v) {
    if (v == T(0)) return;
    if (conj) v = conj_if_complex(v);
    if (is_transposed(o)) rows[j].emplace_back(index_t(i), v);
    else rows[i].emplace_back(index_t(j), v);
  });
  p.row_ptr.push_back(0);
  for (auto& r : rows) {
    for (const auto& [j, v] : r) {
      p.src.push_back(j);
      p.coef.push_back(v);
    }
    p.row_ptr.push_back(index_t(p.coef.size()));
  }
  p.with_real_part();
  return p;
}

// Whether a banded or dense factor's entries are all real (always, for a real T): its solve and
// apply programs then have real coefficients (row_program::real_part). A dense matrix computed
// only when the plan is instantiated counts as complex.
template <class T>
bool real_entries(const factor_view<T>& f) {
  if constexpr (!value_traits<T>::is_complex) {
    return true;
  } else {
    if (f.kind == factor_kind::dense && f.data == nullptr) return false;
    bool real = true;
    for_each_entry(f, [&](std::size_t, std::size_t, const T& v) { real = real && v.imag() == real_t<T>(0); });
    return real;
  }
}

// What a row program costs per line, and its size, known before it is built.
struct program_size {
  std::size_t madds = 0, multiplies = 0, bytes = 0;
};

// An apply program's size, exact: it only reads A's entries (no allocation).
template <class T>
program_size apply_program_size(const factor_view<T>& f) {
  std::size_t nnz = 0;
  if (f.kind == factor_kind::dense && f.data == nullptr) {
    // A dense matrix computed when the plan is instantiated (fast diagonalisation's
    // eigenvectors): explain counts it as full.
    nnz = f.n * f.n;
    return {nnz, 0, (f.n + 1) * sizeof(index_t) + nnz * (sizeof(index_t) + sizeof(T))};
  }
  for_each_entry(f, [&](std::size_t, std::size_t, const T& v) { nnz += v != T(0) ? 1 : 0; });
  const auto bytes = [&](std::size_t value_bytes) {
    return (f.n + 1) * sizeof(index_t) + nnz * (sizeof(index_t) + value_bytes);
  };
  // A complex program with real coefficients holds its real form too (row_program::real_part).
  const bool twin = value_traits<T>::is_complex && real_entries(f);
  return {nnz, 0, bytes(sizeof(T)) + (twin ? bytes(sizeof(real_t<T>)) : 0)};
}

// A solve program's size from estimate_lu (no swaps): the L updates of nonempty rows (columns
// when transposed) and one scaled U update per row. A complex program with real coefficients
// (real_coefficients) holds its real form too.
template <class T>
program_size solve_program_size(const lu_estimate& e, std::size_t n, op o, bool real_coefficients) {
  const std::size_t coefs = e.nnz_lower + e.nnz_upper - n;
  const std::size_t ops = n + (is_transposed(o) ? e.lower_cols : e.lower_rows);
  std::size_t bytes = ops * sizeof(row_op<T>) + coefs * (sizeof(index_t) + sizeof(T));
  if constexpr (value_traits<T>::is_complex)
    if (real_coefficients) bytes += solve_program_size<real_t<T>>(e, n, o, false).bytes;
  return {coefs, n, bytes};
}

} // namespace kronex::detail
