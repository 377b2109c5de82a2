#pragma once
// split_solve<T>: a distributed plan's solve along its one split axis, run where the rows lie: no
// block is exchanged. This rank's share of the mode's row program (split_substitution.hpp) runs
// in place on its block of x, the ranks taking turns in the program's order, and before its turn
// a rank receives the few rows of its neighbours that its operations read (a band's halo),
// rank to rank (MPI_Isend, MPI_Recv). The lines are cut into chunks (slabs of the axes before the
// split one, or, where there are too few, columns of those after it) and each turn runs chunk by
// chunk, each chunk's rows sent on as soon as they are final: the ranks work as a pipeline,
// forward on ranks 0, 1, ... and backward on ..., 1, 0. Every operation keeps its entries in
// order, and runs on the host plans' kernels (host_plan::solve_rows), so the result is the serial
// host's to the bit.
//
// Where the split axis is not the last one, its rows are whole rows of the block, R values apart
// (R: the product of the extents after it), which the kernels take V = strip_width<T> columns at
// a time; columns beyond a multiple of V go through a strip of V columns. Where it is the last
// one, its lines are contiguous, as in the host plans' last-mode steps, and are solved as those
// are: V lines at a time transposed into a strip of the chunk's panel (on the rank's first turn
// on the chunk), solved there two strips at a time while in L1 (host_plan::solve_blocks), and
// transposed back after the rank's last turn; between turns the strips wait in the panel.
// Operations that read received rows run on a strip holding those rows and the own rows they
// touch, whose rows are each chunk's values in slab order, each slab's columns padded to a
// multiple of V (on the last axis: the chunk's lines, padded to a multiple of V).
//
// On the last axis, the mode of the axis before it (solved before it) can run chunk by chunk too
// (attach()): on each chunk's slabs, in place and in cache, right before the rank's first turn on
// them (host_plan::solve_slab, as the host's fused pairs run it), so that the chunk is read from
// memory once for both. A chunk is then a range of the index over the axes before `cut` (that
// mode's axis).

#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../core/error.hpp"
#include "../host/cache_aligned.hpp"
#include "../host/host_plan.hpp"
#include "../host/tiles.hpp"  // panel_walk::move_strip
#include "mpi_support.hpp"
#include "split_substitution.hpp"

namespace kronex::detail {

template <class T>
class split_solve {
  static constexpr std::size_t V = strip_width<T>;

public:
  // Lines of the block: units [l0, l1) of the index over the axes before `cut` (slabs of the
  // axes before the split one where cut is the split axis), columns [c0, c1) of the axes after
  // the split one. A strip holds each of its rows as `width()` values: per slab, the columns
  // padded to a multiple of V; on the last axis, the chunk's lines padded to a multiple of V.
  struct chunk {
    std::size_t l0 = 0, l1 = 0, c0 = 0, c1 = 0, w = 0;
    std::size_t padded() const { return (c1 - c0 + V - 1) / V * V; }
    std::size_t width() const { return w; }
  };

  // The solve of `program` (rows: the indices of axis `axis`) on this rank's block `extent` of a
  // tensor whose axis is cut into blocks at `offsets` (rank q holds rows [offsets[q], offsets[q + 1])),
  // in at most `chunks` chunks: ranges of the index over the axes before `cut` (the split axis,
  // or on the last one the axis before it) where there are that many, else columns (never on the
  // last axis); nothing where it would not
  // pipeline (make_split_substitution), where a rank holds no row, where a message would exceed
  // MPI's int counts, or, on the last axis, where a rank would send rows before its first turn.
  // The same answer on every rank (the program, the offsets and the extents of the other axes
  // are). Without `buffers`, for printing only: nothing is allocated, and it must not run.
  static std::optional<split_solve> make(std::shared_ptr<const row_program<T>> program,
                                         const std::vector<std::size_t>& offsets, std::size_t rank,
                                         const shape_t& extent, std::size_t axis, std::size_t chunks,
                                         bool buffers = true, std::size_t cut = std::size_t(-1)) {
    for (std::size_t q = 0; q + 1 < offsets.size(); ++q)
      if (offsets[q + 1] <= offsets[q]) return std::nullopt;
    auto share = make_split_substitution(*program, offsets, rank);
    if (!share) return std::nullopt;
    split_solve s;
    s.m_last = axis + 1 == extent.size();
    s.m_cut = s.m_last ? std::min(cut, axis) : axis;
    if (s.m_last && s.m_cut == 0) return std::nullopt;
    if (s.m_last)
      for (const split_transfer& t : share->transfers)
        if (t.from < 0) return std::nullopt;
    s.m_program = std::move(program);
    s.m_share = std::move(*share);
    s.m_rows = extent[axis];
    for (std::size_t k = 0; k < axis; ++k) s.m_slabs *= extent[k];
    for (std::size_t k = axis + 1; k < extent.size(); ++k) s.m_columns *= extent[k];
    for (std::size_t k = 0; k < s.m_cut; ++k) s.m_units *= extent[k];
    s.m_unit_lines = s.m_slabs / std::max<std::size_t>(1, s.m_units);
    s.cut(std::max<std::size_t>(1, chunks));
    if (!s.count_sends()) return std::nullopt;
    s.allocate(buffers);
    return s;
  }

  // The mode of the axis before the split one, run chunk by chunk before the rank's first turn
  // on each chunk (made with that axis as `cut`): `program` (its substitution, as the host would
  // run it on the whole block; the caller's choice, so that the result is the serial host's in
  // the printed order of modes) on each slab of the chunk, whose rows are that axis's indices.
  void attach(std::shared_ptr<const row_program<T>> program) {
    m_attached = std::move(program);
    m_tail.assign(m_unit_lines * V, T(0));
    m_workspace_bytes += double(m_tail.size() * sizeof(T));
  }

  // The ranks along the axis, ranked by their index on it (collective creation is the caller's).
  void connect(MPI_Comm comm) { m_comm = comm; }

  // x = the program applied along the axis, in place on this rank's block (C order). Collective
  // over the axis's ranks; nothing here throws but MPI.
  void run(T* x) {
    m_requests.clear();
    m_sent = {0, 0.0};
    for (std::size_t c = 0; c < m_chunks.size(); ++c) send(-1, c, x);
    for (const auto& [i, c] : m_order) {
      const split_part<T>& part = m_share.parts[i];
      T* strip = m_strips[i].data();
      const chunk& ch = m_chunks[c];
      const std::size_t w = ch.width();
      if (i == 0 && m_attached)
        for (std::size_t l = ch.l0; l < ch.l1; ++l)
          host_plan<T>::solve_slab(*m_attached, x + l * m_unit_lines * m_rows, m_unit_lines, m_rows, m_tail.data());
      if (i == 0 && m_last) m_ahead = next_chunk_stream(c, x);
      for (std::size_t t = 0; t < m_share.transfers.size(); ++t) {
        const split_transfer& tr = m_share.transfers[t];
        if (tr.to != part.segment) continue;
        const std::size_t values = tr.rows.size() * w, k = pieces(values);
        for (std::size_t j = 0; j < k; ++j)
          check_mpi(MPI_Recv(strip + tr.at * w + values * j / k, int((values * (j + 1) / k - values * j / k) * sizeof(T)),
                             MPI_BYTE, int(tr.sender), tag(t, c), m_comm, MPI_STATUS_IGNORE),
                    "MPI_Recv");
      }
      if (m_last) {
        run_strips(part, c, x, strip, i == 0, i + 1 == m_share.parts.size());
      } else for (const split_run<T>& r : part.runs) {
        if (r.on_strip) {
          for (std::size_t k = 0; k < r.own_rows.size(); ++k) move_row(x, r.own_rows[k], c, strip + r.strip_rows[k] * w, true);
          host_plan<T>::solve_rows(r.program, strip, w / V, w);
          for (std::size_t k = 0; k < r.own_rows.size(); ++k) move_row(x, r.own_rows[k], c, strip + r.strip_rows[k] * w, false);
        } else {
          for (std::size_t l = ch.l0; l < ch.l1; ++l) in_place(r.program, x + l * m_rows * m_columns, ch);
        }
      }
      send(long(part.segment), c, x);
    }
    check_mpi(MPI_Waitall(int(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  const std::vector<chunk>& chunks() const noexcept { return m_chunks; }
  // What the last run handed MPI: this rank's messages and bytes (counted as they went).
  std::pair<std::size_t, double> last_sent() const noexcept { return m_sent; }
  // What one run hands MPI, predicted: the most messages and bytes of any rank.
  std::size_t most_messages() const noexcept { return m_most_messages; }
  double most_sent_bytes() const noexcept { return m_most_sent_bytes; }
  // Buffers of this rank: the strips, the tail strip (on the last axis, the attached mode's), the
  // panels and the messages sent (bytes).
  double workspace_bytes() const noexcept { return m_workspace_bytes; }
  // Memory traffic of the copies around the kernels: rows gathered into strips and put back, and
  // rows copied into messages (read and write).
  double copy_bytes() const noexcept { return m_copy_bytes; }

private:
  split_solve() = default;

  // The chunks: up to `count` ranges of units (on the last axis always: ranges of slabs, or of
  // whole strips of V lines where a unit is a line, so that few lines are padding); where there
  // are fewer units, ranges of the columns in blocks of V (the last one ending at the last
  // column).
  void cut(std::size_t count) {
    // Message tags are transfer * chunks + chunk: within the smallest MPI_TAG_UB MPI allows.
    count = std::max<std::size_t>(1, std::min(count, 32767 / std::max<std::size_t>(1, m_share.transfers.size())));
    if (m_last) {
      const std::size_t step = m_unit_lines == 1 ? V : 1, blocks = (m_units + step - 1) / step, k = std::min(count, blocks);
      for (std::size_t c = 0; c < k; ++c) {
        chunk ch{blocks * c / k * step, std::min(m_units, blocks * (c + 1) / k * step), 0, 1, 0};
        ch.w = ((ch.l1 - ch.l0) * m_unit_lines + V - 1) / V * V;
        m_chunks.push_back(ch);
      }
    } else if (m_units >= count) {
      for (std::size_t c = 0; c < count; ++c) {
        chunk ch{m_units * c / count, m_units * (c + 1) / count, 0, m_columns, 0};
        ch.w = (ch.l1 - ch.l0) * ch.padded();
        m_chunks.push_back(ch);
      }
    } else {
      const std::size_t blocks = (m_columns + V - 1) / V, k = std::min(count, blocks);
      for (std::size_t c = 0; c < k; ++c) {
        chunk ch{0, m_units, blocks * c / k * V, std::min(m_columns, blocks * (c + 1) / k * V), 0};
        ch.w = m_slabs * ch.padded();
        m_chunks.push_back(ch);
      }
    }
    m_order = m_share.order(m_chunks.size());
  }

  // The most messages and bytes any rank sends per run (the transfers are the same list on every
  // rank, and so are the chunks); false where one message would exceed an int count of bytes.
  bool count_sends() {
    std::vector<std::size_t> messages(m_share.ranks(), 0);
    std::vector<double> bytes(m_share.ranks(), 0.0);
    for (const split_transfer& t : m_share.transfers)
      for (const chunk& c : m_chunks) {
        const double b = double(t.rows.size() * c.width() * sizeof(T));
        if (b > double(INT_MAX)) return false;
        messages[t.sender] += pieces(t.rows.size() * c.width());
        bytes[t.sender] += b;
      }
    m_most_messages = *std::max_element(messages.begin(), messages.end());
    m_most_sent_bytes = *std::max_element(bytes.begin(), bytes.end());
    return true;
  }

  void allocate(bool buffers) {
    std::size_t widest = 0;
    for (const chunk& c : m_chunks) widest = std::max(widest, c.width());
    double copied = 0, values = 0;  // rows copied per run; the buffers' values (allocated or not)
    const auto buffer = [&](cache_aligned_vector<T>& b, std::size_t size) {
      values += double(size);
      if (buffers) b.assign(size, T(0));
    };
    m_strips.resize(m_share.parts.size());
    for (std::size_t i = 0; i < m_share.parts.size(); ++i) {
      buffer(m_strips[i], m_share.parts[i].strip_rows * widest);
      for (const split_run<T>& r : m_share.parts[i].runs) copied += 2.0 * double(r.own_rows.size());  // gathered and put back
    }
    m_outbox.resize(m_share.transfers.size() * m_chunks.size());
    for (std::size_t t = 0; t < m_share.transfers.size(); ++t) {
      if (m_share.transfers[t].sender != m_share.rank) continue;
      copied += double(m_share.transfers[t].rows.size());
      for (std::size_t c = 0; c < m_chunks.size(); ++c)
        buffer(m_outbox[t * m_chunks.size() + c], m_share.transfers[t].rows.size() * m_chunks[c].width());
    }
    buffer(m_tail, m_last ? 0 : m_rows * V);
    if (m_last && !m_share.parts.empty()) {  // a panel per chunk between the rank's first and last turn on it
      m_panels.resize(m_share.parts.back().segment - m_share.parts.front().segment + 1);
      for (cache_aligned_vector<T>& p : m_panels) buffer(p, m_rows * widest);
    }
    m_copy_bytes = 2.0 * copied * double(m_slabs * m_columns * sizeof(T));
    m_workspace_bytes = values * sizeof(T);
  }

  // The messages a transfer of `values` values goes in. Open MPI sends a message of up to 4 KB
  // at once (its shared-memory transport's default eager limit, header included); a larger one
  // waits for a rendezvous, a handshake that a sender busy with its next chunk answers late
  // (measured, performance.md). A transfer of up to twice that goes as two messages of
  // consecutive values under one tag (MPI keeps their order); a larger one, whole (four pieces
  // of a 12 kB transfer measured no faster).
  static std::size_t pieces(std::size_t values) {
    constexpr std::size_t eager_bytes = 4000, most = 2;
    const std::size_t k = (values * sizeof(T) + eager_bytes - 1) / eager_bytes;
    return k >= 1 && k <= most ? k : 1;
  }

  int tag(std::size_t transfer, std::size_t c) const { return int(transfer * m_chunks.size() + c); }

  // Row g (a global index on the axis, this rank's) of chunk c: gathered into a strip's row, or
  // put back from it; on the last axis, from or into the chunk's panel.
  void move_row(T* x, index_t g, std::size_t chunk_index, T* strip_row, bool gather) const {
    const chunk& c = m_chunks[chunk_index];
    const std::size_t w = c.c1 - c.c0, first = m_share.offsets[m_share.rank];
    if (m_last) {
      move_panel_row(panel_of(chunk_index), std::size_t(g) - first, 0, c.width() / V, strip_row, gather);
      return;
    }
    for (std::size_t l = c.l0; l < c.l1; ++l) {
      T* row = x + (l * m_rows + (std::size_t(g) - first)) * m_columns + c.c0;
      T* s = strip_row + (l - c.l0) * c.padded();
      if (gather) std::copy_n(row, w, s);
      else std::copy_n(s, w, row);
    }
  }

  // The transfers this rank sends after its segment `from` (-1: before any), for chunk c.
  void send(long from, std::size_t c, T* x) {
    for (std::size_t t = 0; t < m_share.transfers.size(); ++t) {
      const split_transfer& tr = m_share.transfers[t];
      if (tr.sender != m_share.rank || tr.from != from) continue;
      cache_aligned_vector<T>& box = m_outbox[t * m_chunks.size() + c];
      const std::size_t w = m_chunks[c].width();
      for (std::size_t i = 0; i < tr.rows.size(); ++i) move_row(x, tr.rows[i], c, box.data() + i * w, true);
      const std::size_t values = box.size(), k = pieces(values);
      for (std::size_t j = 0; j < k; ++j) {
        const std::size_t bytes = (values * (j + 1) / k - values * j / k) * sizeof(T);
        m_requests.emplace_back();
        check_mpi(MPI_Isend(box.data() + values * j / k, int(bytes), MPI_BYTE, int(m_share.segments[tr.to].owner),
                            tag(t, c), m_comm, &m_requests.back()),
                  "MPI_Isend");
        ++m_sent.first;
        m_sent.second += double(bytes);
      }
    }
  }

  // A run of operations on the block's own rows, on the columns of chunk c of one slab (its rows
  // m_columns apart from `slab`): V columns at a time, the rest through the tail strip.
  void in_place(const row_program<T>& p, T* slab, const chunk& c) {
    const std::size_t blocks = (c.c1 - c.c0) / V, rest = c.c0 + blocks * V;
    if (blocks > 0) host_plan<T>::solve_rows(p, slab + c.c0, blocks, m_columns);
    if (rest == c.c1) return;
    const std::size_t w = c.c1 - rest;
    for (std::size_t i = 0; i < m_rows; ++i) std::copy_n(slab + i * m_columns + rest, w, m_tail.data() + i * V);
    host_plan<T>::solve_rows(p, m_tail.data(), 1, V);
    for (std::size_t i = 0; i < m_rows; ++i) std::copy_n(m_tail.data() + i * V, w, slab + i * m_columns + rest);
  }

  // Row i of a chunk's panel, its strips [j0, j1) (V values each), gathered into a strip row
  // (strip j's values at strip_row + j * V) or put back from it.
  void move_panel_row(T* panel, std::size_t i, std::size_t j0, std::size_t j1, T* strip_row, bool gather) const {
    for (std::size_t j = j0; j < j1; ++j) {
      T* row = panel + (j * m_rows + i) * V;
      if (gather) std::copy_n(row, V, strip_row + j * V);
      else std::copy_n(strip_row + j * V, V, row);
    }
  }

  // On the last axis, the lines of the chunk after c in x (contiguous), prefetched by the strip
  // kernels' operations during the rank's turns until its first turn on that chunk: they run in
  // L1, bound by the latency of their chains, while the next chunk's first pass (the attached
  // mode, or the transposes) would otherwise wait for memory. Measured, performance.md.
  prefetch_stream next_chunk_stream(std::size_t c, const T* x) const {
    if (c + 1 >= m_chunks.size()) return {};
    const chunk& n = m_chunks[c + 1];
    const T* at = x + n.l0 * m_unit_lines * m_rows;
    return contiguous_stream(at, at, (n.l1 - n.l0) * m_unit_lines * m_rows);
  }

  T* panel_of(std::size_t c) const { return const_cast<T*>(m_panels[c % m_panels.size()].data()); }

  // A turn on the last axis, two strips (2V lines) at a time, in L1 through their transposes and
  // runs: on the rank's first turn on the chunk they are transposed in from x first, on its last
  // one out into x after; between turns they wait in the chunk's panel.
  void run_strips(const split_part<T>& part, std::size_t c, T* x, T* strip, bool first_turn, bool last_turn) {
    const chunk& ch = m_chunks[c];
    const std::size_t w = ch.width(), first = m_share.offsets[m_share.rank];
    const std::size_t line0 = ch.l0 * m_unit_lines, lines = (ch.l1 - ch.l0) * m_unit_lines;
    const std::size_t strips = w / V;
    const panel_walk<T> walk{1, m_rows, 1, 1};
    T* panel = panel_of(c);
    for (std::size_t j = 0; j < strips; j += 2) {
      const std::size_t k = std::min<std::size_t>(2, strips - j);
      T* s = panel + j * m_rows * V;
      if (first_turn)
        for (std::size_t q = 0; q < k; ++q)
          walk.template move_strip<true>(line0 + (j + q) * V, std::min(V, lines - (j + q) * V), x, nullptr, s + q * m_rows * V);
      for (const split_run<T>& r : part.runs) {
        if (!r.on_strip) {
          host_plan<T>::solve_blocks(r.program, s, k, V, m_rows * V, &m_ahead);
          continue;
        }
        for (std::size_t i = 0; i < r.own_rows.size(); ++i)
          move_panel_row(panel, std::size_t(r.own_rows[i]) - first, j, j + k, strip + r.strip_rows[i] * w, true);
        host_plan<T>::solve_rows(r.program, strip + j * V, k, w);
        for (std::size_t i = 0; i < r.own_rows.size(); ++i)
          move_panel_row(panel, std::size_t(r.own_rows[i]) - first, j, j + k, strip + r.strip_rows[i] * w, false);
      }
      if (last_turn)
        for (std::size_t q = 0; q < k; ++q)
          walk.template move_strip<false>(line0 + (j + q) * V, std::min(V, lines - (j + q) * V), nullptr, x, s + q * m_rows * V);
    }
  }

  std::shared_ptr<const row_program<T>> m_program;  // keeps what the pieces were cut from
  split_substitution<T> m_share;
  bool m_last = false;
  std::size_t m_cut = 0, m_units = 1;  // chunks are ranges of the m_units indices over the axes before m_cut
  std::size_t m_unit_lines = 1;       // lines of the axes before the split one per unit
  std::size_t m_rows = 0, m_slabs = 1, m_columns = 1;
  std::vector<chunk> m_chunks;
  std::vector<std::pair<std::size_t, std::size_t>> m_order;
  // On cache lines, as the host plans' work buffers (cache_aligned.hpp says why).
  std::vector<cache_aligned_vector<T>> m_strips, m_outbox;
  cache_aligned_vector<T> m_tail;  // a strip of V columns: those beyond the blocks (the attached mode's: also before)
  std::vector<cache_aligned_vector<T>> m_panels;  // last axis: a ring of chunks' panels
  std::shared_ptr<const row_program<T>> m_attached;  // the attached mode's substitution
  prefetch_stream m_ahead;  // last axis: the next chunk's lines, fetched while the strips are solved
  std::vector<MPI_Request> m_requests;
  MPI_Comm m_comm = MPI_COMM_NULL;
  std::size_t m_most_messages = 0;
  std::pair<std::size_t, double> m_sent{0, 0.0};
  double m_most_sent_bytes = 0, m_workspace_bytes = 0, m_copy_bytes = 0;
};

} // namespace kronex::detail
