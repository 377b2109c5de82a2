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
// The split axis must not be the last one: its rows are then whole rows of the block, R values
// apart (R: the product of the extents after it), which the kernels take V = strip_width<T>
// columns at a time; columns beyond a multiple of V go through a strip of V columns. Operations
// that read received rows run on a strip holding those rows and the own rows they touch, whose
// rows are each chunk's values in slab order, each slab's columns padded to a multiple of V.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../core/error.hpp"
#include "../host/host_plan.hpp"
#include "mpi_support.hpp"
#include "split_substitution.hpp"

namespace kronex::detail {

template <class T>
class split_solve {
  static constexpr std::size_t V = strip_width<T>;

public:
  // Lines of the block: slabs [l0, l1) of the axes before the split one, columns [c0, c1) of the
  // axes after it. A strip holds each of its rows as `width()` values: per slab, the columns
  // padded to a multiple of V.
  struct chunk {
    std::size_t l0 = 0, l1 = 0, c0 = 0, c1 = 0;
    std::size_t padded() const { return (c1 - c0 + V - 1) / V * V; }
    std::size_t width() const { return (l1 - l0) * padded(); }
  };

  // The solve of `program` (rows: the indices of axis `axis`) on this rank's block `extent` of a
  // tensor whose axis is cut into blocks at `offsets` (rank q holds rows [offsets[q], offsets[q + 1])),
  // in at most `chunks` chunks; nothing where it would not pipeline (make_split_substitution), where
  // a rank holds no row, or where a message would exceed MPI's int counts. The same answer on
  // every rank (the program, the offsets and the extents of the other axes are). Without
  // `buffers`, for printing only: nothing is allocated, and it must not run.
  static std::optional<split_solve> make(std::shared_ptr<const row_program<T>> program,
                                         const std::vector<std::size_t>& offsets, std::size_t rank,
                                         const shape_t& extent, std::size_t axis, std::size_t chunks,
                                         bool buffers = true) {
    for (std::size_t q = 0; q + 1 < offsets.size(); ++q)
      if (offsets[q + 1] <= offsets[q]) return std::nullopt;
    auto share = make_split_substitution(*program, offsets, rank);
    if (!share) return std::nullopt;
    split_solve s;
    s.m_program = std::move(program);
    s.m_share = std::move(*share);
    s.m_rows = extent[axis];
    for (std::size_t k = 0; k < axis; ++k) s.m_slabs *= extent[k];
    for (std::size_t k = axis + 1; k < extent.size(); ++k) s.m_columns *= extent[k];
    s.cut(std::max<std::size_t>(1, chunks));
    if (!s.count_sends()) return std::nullopt;
    s.allocate(buffers);
    return s;
  }

  // The ranks along the axis, ranked by their index on it (collective creation is the caller's).
  void connect(MPI_Comm comm) { m_comm = comm; }

  // x = the program applied along the axis, in place on this rank's block (C order). Collective
  // over the axis's ranks; nothing here throws but MPI.
  void run(T* x) {
    m_requests.clear();
    for (std::size_t c = 0; c < m_chunks.size(); ++c) send(-1, c, x);
    for (const auto& [i, c] : m_order) {
      const split_part<T>& part = m_share.parts[i];
      T* strip = m_strips[i].data();
      const chunk& ch = m_chunks[c];
      const std::size_t w = ch.width();
      for (std::size_t t = 0; t < m_share.transfers.size(); ++t) {
        const split_transfer& tr = m_share.transfers[t];
        if (tr.to != part.segment) continue;
        check_mpi(MPI_Recv(strip + tr.at * w, int(tr.rows.size() * w * sizeof(T)), MPI_BYTE, int(tr.sender), tag(t, c),
                           m_comm, MPI_STATUS_IGNORE),
                  "MPI_Recv");
      }
      for (const split_run<T>& r : part.runs) {
        if (r.on_strip) {
          for (std::size_t k = 0; k < r.own_rows.size(); ++k) move_row(x, r.own_rows[k], ch, strip + r.strip_rows[k] * w, true);
          host_plan<T>::solve_rows(r.program, strip, w / V, w);
          for (std::size_t k = 0; k < r.own_rows.size(); ++k) move_row(x, r.own_rows[k], ch, strip + r.strip_rows[k] * w, false);
        } else {
          for (std::size_t l = ch.l0; l < ch.l1; ++l) in_place(r.program, x + l * m_rows * m_columns, ch);
        }
      }
      send(long(part.segment), c, x);
    }
    check_mpi(MPI_Waitall(int(m_requests.size()), m_requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  const std::vector<chunk>& chunks() const noexcept { return m_chunks; }
  // What one run hands MPI: this rank's messages and bytes, and the most of any rank's.
  std::size_t messages() const noexcept { return m_messages; }
  double sent_bytes() const noexcept { return m_sent_bytes; }
  std::size_t most_messages() const noexcept { return m_most_messages; }
  double most_sent_bytes() const noexcept { return m_most_sent_bytes; }
  // Buffers of this rank: the strips, the tail strip and the messages sent (bytes).
  double workspace_bytes() const noexcept { return m_workspace_bytes; }
  // Memory traffic of the copies around the kernels: rows gathered into strips and put back, and
  // rows copied into messages (read and write).
  double copy_bytes() const noexcept { return m_copy_bytes; }

private:
  split_solve() = default;

  // The chunks: up to `count` ranges of slabs; where there are fewer slabs, ranges of the columns
  // in blocks of V (the last one ending at the last column).
  void cut(std::size_t count) {
    // Message tags are transfer * chunks + chunk: within the smallest MPI_TAG_UB MPI allows.
    count = std::max<std::size_t>(1, std::min(count, 32767 / std::max<std::size_t>(1, m_share.transfers.size())));
    if (m_slabs >= count) {
      for (std::size_t c = 0; c < count; ++c) m_chunks.push_back({m_slabs * c / count, m_slabs * (c + 1) / count, 0, m_columns});
    } else {
      const std::size_t blocks = (m_columns + V - 1) / V, k = std::min(count, blocks);
      for (std::size_t c = 0; c < k; ++c)
        m_chunks.push_back({0, m_slabs, blocks * c / k * V, std::min(m_columns, blocks * (c + 1) / k * V)});
    }
    m_order = m_share.order(m_chunks.size());
  }

  // Every rank's messages and bytes per run (the transfers are the same list on every rank, and
  // so are the chunks); false where one message would exceed an int count of bytes.
  bool count_sends() {
    std::vector<std::size_t> messages(m_share.ranks(), 0);
    std::vector<double> bytes(m_share.ranks(), 0.0);
    for (const split_transfer& t : m_share.transfers)
      for (const chunk& c : m_chunks) {
        const double b = double(t.rows.size() * c.width() * sizeof(T));
        if (b > double(INT_MAX)) return false;
        ++messages[t.sender];
        bytes[t.sender] += b;
      }
    m_messages = messages[m_share.rank];
    m_sent_bytes = bytes[m_share.rank];
    m_most_messages = *std::max_element(messages.begin(), messages.end());
    m_most_sent_bytes = *std::max_element(bytes.begin(), bytes.end());
    return true;
  }

  void allocate(bool buffers) {
    std::size_t widest = 0;
    for (const chunk& c : m_chunks) widest = std::max(widest, c.width());
    double copied = 0, values = 0;  // rows copied per run; the buffers' values (allocated or not)
    const auto buffer = [&](std::vector<T>& b, std::size_t size) {
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
    buffer(m_tail, m_rows * V);
    m_copy_bytes = 2.0 * copied * double(m_slabs * m_columns * sizeof(T));
    m_workspace_bytes = values * sizeof(T);
  }

  int tag(std::size_t transfer, std::size_t c) const { return int(transfer * m_chunks.size() + c); }

  // Row g (a global index on the axis, this rank's) of chunk c: gathered into a strip's row, or
  // put back from it.
  void move_row(T* x, index_t g, const chunk& c, T* strip_row, bool gather) const {
    const std::size_t w = c.c1 - c.c0, first = m_share.offsets[m_share.rank];
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
      std::vector<T>& box = m_outbox[t * m_chunks.size() + c];
      const std::size_t w = m_chunks[c].width();
      for (std::size_t i = 0; i < tr.rows.size(); ++i) move_row(x, tr.rows[i], m_chunks[c], box.data() + i * w, true);
      m_requests.emplace_back();
      check_mpi(MPI_Isend(box.data(), int(box.size() * sizeof(T)), MPI_BYTE, int(m_share.segments[tr.to].owner), tag(t, c),
                          m_comm, &m_requests.back()),
                "MPI_Isend");
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

  std::shared_ptr<const row_program<T>> m_program;  // keeps what the pieces were cut from
  split_substitution<T> m_share;
  std::size_t m_rows = 0, m_slabs = 1, m_columns = 1;
  std::vector<chunk> m_chunks;
  std::vector<std::pair<std::size_t, std::size_t>> m_order;
  std::vector<std::vector<T>> m_strips, m_outbox;
  std::vector<T> m_tail;
  std::vector<MPI_Request> m_requests;
  MPI_Comm m_comm = MPI_COMM_NULL;
  std::size_t m_messages = 0, m_most_messages = 0;
  double m_sent_bytes = 0, m_most_sent_bytes = 0, m_workspace_bytes = 0, m_copy_bytes = 0;
};

} // namespace kronex::detail
