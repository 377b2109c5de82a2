#pragma once
// distributed_plan<T, Ranks>: a compiled plan for a tensor distributed over a process grid. The
// phases come from plan_exchanges (exchange_schedule.hpp); each phase's local work is a plan of
// the modes solved in it on this rank's block, run unchanged: a host plan (host_ranks) or a
// device plan (device_ranks, distributed_device_tensor.hpp). Between phases a pairwise exchange
// (or an allgatherv) within the sub-communicator of the grid dimensions involved moves the data to
// the next layout: MPI messages, or, where the sub-communicators lie within one node, copies
// between the ranks' blocks in shared memory (node_segments.hpp).
// On a grid that splits one axis (not the last) whose factor is a band solved by substitution, the
// plan instead solves that mode where its rows lie, after the other modes (split_solve.hpp;
// compile_options::split_solves_in_place): one phase of local work, then the solve across ranks
// with its halo exchange.
// The result ends in the input layout, or, with exchange_options, the plan starts in another
// layout and/or ends in its last phase's layout (start_block() and end_block() say where).
//
// Compiling is collective: local errors (shapes, singular factors) are raised on every rank
// before any other collective call (see collective()).
#include <algorithm>
#include <atomic>
#include <climits>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "../../core/value_traits.hpp"
#include "../../plan/factor_store.hpp"
#include "../../plan/operator_desc.hpp"
#include "../../plan/plan.hpp"
#include "../host/cache_aligned.hpp"
#include "../host/host_plan.hpp"
#include "exchange_schedule.hpp"
#include "mpi_support.hpp"
#include "node_segments.hpp"
#include "split_solve.hpp"

namespace kronex {

// One timed piece of a distributed run (distributed_operator::time_steps): the printed steps
// plan().steps[first, first + count) that ran together (an exchange, or a phase's local work)
// and the seconds they took on this rank; for an exchange, the messages and bytes this rank
// handed to MPI (its own part is never among them).
struct timed_steps {
  std::size_t first = 0, count = 0;
  double seconds = 0;
  std::size_t messages = 0;
  double sent_bytes = 0;
};

} // namespace kronex

namespace kronex::detail {

// The host side of a rank: host plans and buffers in main memory.
template <class T>
struct host_ranks {
  using local_plan = host_plan<T>;
  using buffer = cache_aligned_vector<T>;  // the local plans' kernels run in it (cache_aligned.hpp says why)
  static constexpr const char* name = "host";
  static constexpr bool counts_transfers = false;
  bool staged = false;  // exchanges never need staging on the host
  static constexpr bool packs_by_default = false;  // MPI reads and writes the blocks (subarray types)
  static constexpr bool pipelines = true;          // local work chunk by chunk with the exchange after it
  static constexpr bool shares_memory = true;      // exchanges within a node copy between the blocks directly
  void decide() {}
  void init() {}

  void allocate(buffer& b, std::size_t n) { b.assign(n, T(0)); }
  T* data(buffer& b) { return b.data(); }
  void copy(const box& part, const box& from, const T* src, const box& to, T* dst) { copy_box(part, from, src, to, dst); }
  void synchronize() {}
  std::string memory_text() const { return ""; }
  void download(T* dst, const T* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }  // never staged
  void upload(T* dst, const T* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
};

template <class T, class Ranks = host_ranks<T>>
class distributed_plan {
  static constexpr std::size_t npos = std::size_t(-1);
  // One message of an exchange: the part of one chunk of the sender's block (the whole block
  // unless the sender's local work is pipelined) that the receiver's next block holds, as a
  // subarray type over the block, or at an offset (in values) of the packed buffers.
  struct part {
    int rank = 0;  // the other rank, in the sub-communicator
    int tag = 0;   // the sender's chunk
    box where;     // global indices
    mpi_datatype type;
    std::size_t at = 0;
    int node = -1;  // shared memory: the other rank in the node communicator, and its block that
    box block;      // holds the part (a receive: its solved block; a send: its next block)
    // A part of a pull: where the sender's phase laid it out on its own, in the part's C order, in
    // its buffer (values; build_target), or npos: at its place in the sender's block.
    std::size_t packed_at = npos;
  };
  // How an exchange uses the memory the ranks of a node share (choose_sharing); read: as pull,
  // but the next phase's first step reads the peers' blocks itself (no copy of its own).
  enum class sharing { none, pull, push, read };
  struct phase_work {
    box block;                            // this rank's block in the phase's layout
    bool has_local = false;               // local solves or scales on this rank in this phase
    bool work = false;                    // ... on some rank (the same on every rank)
    operator_desc<T> local_desc;          // ... as an operator on the block (until instantiated)
    // The local work, compiled: one plan on the block, or, pipelined, one per distinct extent of
    // the chunks (empty: nothing to do here).
    std::vector<std::unique_ptr<typename Ranks::local_plan>> plans;
    std::vector<box> chunks;              // the block in chunks along axis 0 (pipelined), else the block
    std::vector<std::size_t> chunk_plan;  // per chunk: its plan
    bool pipelined = false;               // the next exchange runs chunk by chunk with this work
    // The exchange into this phase (comm null: a local copy, or none).
    MPI_Comm comm = MPI_COMM_NULL;
    sharing shared = sharing::none;
    std::vector<std::vector<part>> sends;  // per chunk of the previous block: its parts for the other ranks
    std::vector<box> own;                  // per chunk of the previous block: this rank's own part (copied)
    std::vector<part> recvs;               // the parts the other ranks send this rank
    std::vector<MPI_Request> requests;     // receives, then sends in chunk order
    std::vector<box> gathered;                  // allgatherv: each rank's block, by sub-communicator rank
    std::vector<int> recv_counts, recv_displs;  // ... and where it lands, in bytes
    bool gather = false;                  // MPI_Allgatherv of this rank's block
    // sharing::read: the next block as it lies in the previous blocks (own and peers'), and per
    // cell of it, whose block holds it (a node rank; -1: this rank's).
    std::unique_ptr<gathered_tensor<T>> source;
    std::vector<std::pair<std::size_t, int>> source_cells;
    // The phase before a shared-memory return into x, where its local plan can write a scattered
    // output (writes_own_part): the result as this phase's block in its buffer (the home), with
    // the part this rank keeps in x (cell own_cell) written into x instead.
    std::unique_ptr<scattered_output<T>> target;
    std::size_t own_cell = 0;
  };
  // The steps of one phase's local work, as printed (timed together: one local plan).
  struct step_range {
    std::size_t first = 0, count = 0;
  };

public:
  using value_type = T;

  // Check, plan and instantiate; collective over comm.
  distributed_plan(const operator_desc<T>& d, const std::shared_ptr<cart_comm>& comm, const shape_t& global,
                   Ranks ranks = Ranks())
      : distributed_plan(d, comm, global, exchange_options{}, std::move(ranks)) {}
  // Starting and ending where `layouts` says (exchange_schedule.hpp).
  distributed_plan(const operator_desc<T>& d, const std::shared_ptr<cart_comm>& comm, const shape_t& global,
                   const exchange_options& layouts, Ranks ranks = Ranks())
      : m_ranks(std::move(ranks)), m_comm(comm), m_global(global), m_layouts(layouts) {
    const std::vector<int>& grid = comm->grid();
    collective(comm->get(), [&] {
      m_ranks.init();  // device ranks: a device must be visible (checked on every rank together)
      m_streaming_min_bytes = host_streaming_min_bytes();
      prepare(d, grid);
      instantiate_local();
    });
    connect(grid);
    m_desc.instantiated = true;
  }

  // Check and plan only (collective: errors are raised on every rank): the description explain()
  // prints. Nothing is factored, allocated or uploaded, and no communicator is created.
  static plan_description explain(const operator_desc<T>& d, const std::shared_ptr<cart_comm>& comm,
                                  const shape_t& global, Ranks ranks = Ranks()) {
    return explain(d, comm, global, exchange_options{}, std::move(ranks));
  }
  static plan_description explain(const operator_desc<T>& d, const std::shared_ptr<cart_comm>& comm,
                                  const shape_t& global, const exchange_options& layouts, Ranks ranks = Ranks()) {
    distributed_plan p(std::move(ranks), comm, global, layouts);
    p.m_explaining = true;
    collective(comm->get(), [&] {
      p.m_ranks.decide();
      p.prepare(d, comm->grid());
      std::vector<plan_description> local(p.m_work.size());
      for (std::size_t i = 0; i < p.m_work.size(); ++i) {
        const phase_work& w = p.m_work[i];
        if (!w.has_local) continue;
        local[i] = Ranks::local_plan::explain(w.local_desc, w.block.extent);
        if (!w.pipelined) continue;
        local[i].workspace_bytes = 0;
        for (const shape_t& e : chunk_extents(w).first)
          local[i].workspace_bytes += Ranks::local_plan::explain(chunk_desc(w, e), e).workspace_bytes;
      }
      p.compose(local);
    });
    return p.m_desc;
  }

  // The layout a plan of `d` with these options ends in (check and plan only; collective: errors
  // are raised on every rank).
  static block_layout end_layout(const operator_desc<T>& d, const std::shared_ptr<cart_comm>& comm, const shape_t& global,
                                 const exchange_options& layouts) {
    block_layout end;
    collective(comm->get(), [&] {
      check_operand_shape(d, global, d.inverse ? "right-hand side" : "operand");
      end = plan_exchanges(global, comm->grid(), needs_local(d), layouts).back().layout;
    });
    return end;
  }

  // "mpi host, 4 ranks, grid (2,2)": the backend as plans on this grid print it.
  static std::string backend_name(const cart_comm& comm) {
    int size = 1;
    for (int g : comm.grid()) size *= g;
    return message("mpi ", Ranks::name, ", ", size, " ranks, grid ", format_grid(comm.grid()));
  }

  const plan_description& description() const noexcept { return m_desc; }
  const shape_t& global_shape() const noexcept { return m_global; }
  const shape_t& shape() const noexcept { return m_global; }
  const shape_t& local_shape() const noexcept { return m_work.front().block.extent; }
  // This rank's block (global offset and extent) of the operand, and of the result: the input
  // layout's unless the exchange_options say otherwise. run() reads and writes C-order arrays of
  // their sizes.
  const box& start_block() const noexcept { return m_work.front().block; }
  const box& end_block() const noexcept { return m_work.back().block; }
  const block_layout& end_layout() const noexcept { return m_phases.back().layout; }
  std::size_t exchanges() const noexcept { return exchange_count(m_phases) + (m_split ? 1 : 0); }

  // x = plan(b) on this rank's blocks (start_block() and end_block(), C order); x may equal b
  // when they are the same size. Collective.
  // Local work that throws on some ranks only (a function_solver's function, a device error)
  // must not leave the others waiting in the next exchange: a rank whose local work failed skips
  // the rest of it but still takes part in every exchange, and the ranks agree at the end of the
  // run (one MPI_Allreduce), so every rank throws (deferred_failure). x is then unspecified.
  void run(const T* b, T* x) { run_phases(b, x, nullptr); }

  // Runs as run() does, timing each exchange and each phase's local work on this rank (MPI_Wtime;
  // device work synchronized first): seconds per piece, with the printed steps it covers.
  std::vector<timed_steps> time_steps(const T* b, T* x) {
    std::vector<timed_steps> times;
    run_phases(b, x, &times);
    return times;
  }

private:
  void run_phases(const T* b, T* x, std::vector<timed_steps>* times) {
    const std::size_t last = m_work.size() - 1;
    const T* cur = b;
    std::size_t next_buffer = 0;
    bool arrived = false;  // the exchange into this phase ran already, pipelined with the phase before
    deferred_failure failure;
    double t0 = times ? MPI_Wtime() : 0;
    auto timed = [&](std::size_t first, std::size_t count, bool exchanged = false) {
      if (!times) return;
      failure.run([&] { m_ranks.synchronize(); });
      const double t = MPI_Wtime();
      times->push_back({first, count, t - t0, exchanged ? m_sent_messages : 0, exchanged ? m_sent_bytes : 0.0});
      t0 = t;
    };
    for (std::size_t i = 0; i <= last; ++i) {
      phase_work& w = m_work[i];
      T* dst = i == last ? x : buffer(next_buffer);
      if (i > 0 && !arrived) {
        const box& from = m_work[i - 1].block;
        m_sent_messages = 0;
        m_sent_bytes = 0;
        if (w.comm == MPI_COMM_NULL) {
          m_ranks.copy(intersect(from, w.block), from, cur, w.block, dst);
        } else if (w.shared == sharing::pull) {
          pull(w, from, cur, dst, 1 - next_buffer, m_own_written[i]);  // cur: the buffer phase i - 1 wrote
        } else if (w.shared == sharing::push) {
          push(w, from, cur, dst, next_buffer);  // the peers' buffers that phase i works in
        } else if (w.shared == sharing::read) {
          point_source(w, cur, 1 - next_buffer);  // the local work below reads the blocks
          node_barrier(w.comm);                   // once every peer's is solved
          count_sends(w);
        } else {
          exchange(w, from, cur, dst);
        }
        timed(m_exchange_step_index[i], 1, true);
      }
      if (i > 0) cur = dst;  // the local work runs in place
      arrived = false;
      if (w.pipelined) {
        T* next = i + 1 == last ? x : buffer(1 - next_buffer);
        run_pipelined(w, m_work[i + 1], cur, dst, next, failure);
        timed(m_local_steps[i].first, m_local_steps[i].count + 1, true);
        arrived = true;
      } else if (i == 0 && !w.work && i != last && (last > 1 || static_cast<const T*>(x) != b)) {
        // No local work (on any rank: every rank's buffers stay in step, as shared memory needs):
        // the first exchange reads b itself, unless it would write x = b.
        continue;
      } else if (w.shared == sharing::read) {
        failure.run([&] {
          if constexpr (Ranks::shares_memory) {
            if (w.target) w.plans.front()->run(*w.source, aim(w, dst, x));
            else if (!w.plans.empty()) w.plans.front()->run(*w.source, dst);
          }
        });
        node_barrier(w.comm);  // every rank has read its parts: the peers' blocks are free again
        timed(m_local_steps[i].first, m_local_steps[i].count);
      } else if (!w.plans.empty() || (i == 0 && cur != dst)) {
        failure.run([&] {
          if constexpr (Ranks::shares_memory)
            if (w.target) {
              w.plans.front()->run(cur, aim(w, dst, x));
              return;
            }
          if (!w.plans.empty()) w.plans.front()->run(cur, dst);
          else m_ranks.copy(w.block, w.block, cur, w.block, dst);
        });
        timed(m_local_steps[i].first, m_local_steps[i].count);
      }
      if (i != last) {
        cur = dst;
        next_buffer = 1 - next_buffer;
      }
    }
    if (m_split) {  // every rank takes part, whatever failed before (x is then unspecified anyway)
      m_split->run(x);
      std::tie(m_sent_messages, m_sent_bytes) = m_split->last_sent();
      timed(m_split_step_index, 2 + m_split_before.size(), true);
    }
    failure.run([&] { m_ranks.synchronize(); });
    failure.agree(m_comm->get());
  }

  // A phase's local work (src -> dst, on this rank's block) chunk by chunk, each chunk's parts
  // sent as soon as it is solved (the own part copied into `next`), MPI progressed between
  // chunks. The receives are posted first, unless they would land in src before it is read
  // (x = b with this exchange the last): then the work runs first and the same messages follow.
  void run_pipelined(phase_work& w, phase_work& into, const T* src, T* dst, T* next, deferred_failure& failure) {
    m_sent_messages = 0;
    m_sent_bytes = 0;
    const bool early = static_cast<const T*>(next) != src;
    if (early) post_receives(into, next);
    const std::size_t row = w.block.size() / std::max<std::size_t>(w.block.extent[0], 1);  // values per index of axis 0
    for (std::size_t c = 0; c < w.chunks.size(); ++c) {
      const std::size_t at = (w.chunks[c].offset[0] - w.block.offset[0]) * row;
      if (!w.plans.empty()) failure.run([&] { w.plans[w.chunk_plan[c]]->run(src + at, dst + at); });
      if (!early) continue;
      failure.run([&] { m_ranks.synchronize(); });  // MPI reads what the device wrote
      send_chunk(into, c, w.block, dst, next);
      int done = 0;
      check_mpi(MPI_Testall(int(into.requests.size()), into.requests.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
    }
    if (!early) {
      failure.run([&] { m_ranks.synchronize(); });
      post_receives(into, next);
      for (std::size_t c = 0; c < w.chunks.size(); ++c) send_chunk(into, c, w.block, dst, next);
    }
    finish_exchange(into, next);
  }

  // An exchange within a node, pulling: this rank copies its own part, then, once every peer's
  // block is solved (a barrier), each peer's part straight from the buffer `k` the peer wrote;
  // a second barrier tells the peers that their buffers are free again. No MPI message, no
  // intermediate copy: every value of the next block is read where it was solved and written
  // once, with streaming stores when the block is large (streams()).
  // own_done: the phase before wrote this rank's own part into dst itself (phase_work::target).
  void pull(phase_work& w, const box& from, const T* src, T* dst, std::size_t k, bool own_done) {
    const bool stream = streams(w.block);
    if (!own_done) copy_box(w.own.front(), from, src, w.block, dst, stream);
    node_barrier(w.comm);
    for (const part& g : w.recvs) {
      if (g.packed_at != npos) copy_box(g.where, g.where, peer_buffer(g.node, k) + g.packed_at, w.block, dst, stream);
      else copy_box(g.where, g.block, peer_buffer(g.node, k), w.block, dst, stream);
    }
    node_barrier(w.comm);
    count_sends(w);
  }

  // An exchange within a node, pushing (its source is b, which the peers cannot see): this rank
  // writes its own part and each peer's part straight into the buffers `k` of the next phase;
  // the barrier tells the peers that their blocks are complete. Nothing reads those buffers
  // before (the run before ended with every rank agreeing, deferred_failure::agree).
  void push(phase_work& w, const box& from, const T* src, T* dst, std::size_t k) {
    const bool stream = streams(w.block);  // every rank's next block is about its size
    copy_box(w.own.front(), from, src, w.block, dst, stream);
    for (const part& s : w.sends.front()) copy_box(s.where, from, src, s.block, peer_buffer(s.node, k), stream);
    node_barrier(w.comm);
    count_sends(w);
  }

  // Phase w's scattered output for this run: the block in `home` (its buffer), the own part in x.
  scattered_output<T>& aim(phase_work& w, T* home, T* x) {
    for (std::size_t c = 0; c < w.target->cells(); ++c) w.target->set_base(c, c == w.own_cell ? x : home);
    w.target->set_home(home);
    return *w.target;
  }

  // Whether the phase before exchange i writes this rank's own part of x itself: exchange i is
  // the return into x (the last phase, no local work here), copied in shared memory (pull), and
  // the phase before it reads a buffer (not b, which may be x) with one local plan (not
  // pipelined) whose last step runs in panels (host_plan::scatters_output). Decided per rank
  // (the own part is no other rank's business), from the printed local plans.
  bool writes_own_part(std::size_t i, const std::vector<plan_description>& local) const {
    if constexpr (!Ranks::shares_memory) {
      return false;
    } else {
      if (i < 2 || i + 1 != m_phases.size() || m_sharing[i] != sharing::pull) return false;
      const phase_work& before = m_work[i - 1];
      if (m_work[i].has_local || !before.has_local || before.pipelined) return false;
      return m_exchange_steps[i].own_bytes > 0 && Ranks::local_plan::scatters_output(local[i - 1]);
    }
  }

  // Whether the phase before the return i (which writes its own part: writes_own_part) may lay
  // the peers' parts out on their own in its buffer: its local plan reads the peers' blocks
  // (sharing::read, so nothing of its buffer) and writes the output in one piece (a step or a
  // fused pair: host_plan::scatters_in_one_piece), so its buffer holds nothing it still reads.
  bool packs_parts(std::size_t i, const plan_description& local) const {
    if constexpr (!Ranks::shares_memory) {
      return false;
    } else {
      return m_work[i - 1].shared == sharing::read && Ranks::local_plan::scatters_in_one_piece(local);
    }
  }

  // The scattered output of the phase before the return i (writes_own_part): the parts of the
  // phase's block (writes_own_part: not pipelined, so one chunk), each one cell: this rank's own
  // at its place in x's block, each peer's in the phase's own buffer. There a peer's part lies
  // at its place in the block, or, where m_packs_parts[i], on its own (in the part's C order,
  // one after the other from the buffer's start), so that the peer copies it in one run (a
  // return that splits the last axis would otherwise read every other run of a line). Its plan
  // allocates what a scattered run needs now, not in the solve. Each send's packed_at says where
  // its part lies on its own (npos: at its place).
  void build_target(std::size_t i) {
    phase_work& before = m_work[i - 1];
    phase_work& ret = m_work[i];
    std::vector<cell_piece> pieces{{ret.own.front(), ret.block}};
    std::size_t next = 0;
    for (part& s : ret.sends.front()) {
      if (m_packs_parts[i]) {
        s.packed_at = next;
        pieces.push_back({s.where, s.where, next});
        next += s.where.size();
      } else {
        pieces.push_back({s.where, before.block});
      }
    }
    before.own_cell = lay_out(before.block, pieces, before.target).front();
    if constexpr (Ranks::shares_memory) before.plans.front()->reserve_scattered_output();
  }

  // Tells the senders' packed_at (build_target) to the receivers of pull exchange w: one
  // MPI_Alltoall on its communicator (collective; npos where a rank sends nothing or lays out
  // nothing on its own).
  void tell_packed_parts(phase_work& w) {
    int size = 1;
    check_mpi(MPI_Comm_size(w.comm, &size), "MPI_Comm_size");
    std::vector<unsigned long long> mine(std::size_t(size), ~0ull), theirs(std::size_t(size), ~0ull);
    for (const part& s : w.sends.front())
      if (s.packed_at != npos) mine[std::size_t(s.rank)] = s.packed_at;
    check_mpi(MPI_Alltoall(mine.data(), 1, MPI_UNSIGNED_LONG_LONG, theirs.data(), 1, MPI_UNSIGNED_LONG_LONG, w.comm),
              "MPI_Alltoall");
    for (part& g : w.recvs)
      g.packed_at = theirs[std::size_t(g.rank)] == ~0ull ? npos : std::size_t(theirs[std::size_t(g.rank)]);
  }

  // Whether a shared-memory exchange writes the next block `b` with streaming stores: from the
  // size at which host plans stream a step's output (host_streaming_min_bytes(), read when the
  // plan was compiled). Plain stores would read each line of the block from memory before
  // writing it: three passes of traffic for a copy instead of two.
  bool streams(const box& b) const { return b.size() * sizeof(T) >= m_streaming_min_bytes; }

  // A read exchange: the cells of the next block at this rank's solved block (src) and the
  // peers' buffers `k`.
  void point_source(phase_work& w, const T* src, std::size_t k) {
    for (const auto& [cell, node] : w.source_cells) w.source->set_base(cell, node < 0 ? src : peer_buffer(node, k));
  }

  // A box `where` of a block, held in C order by an array whose box is `array` and which starts
  // `at` values into the buffer it lies in (lay_out).
  struct cell_piece {
    box where, array;
    std::size_t at = 0;
  };

  // `layout` (a gathered_tensor or a scattered_output) over `block`, cut along each axis where
  // the pieces, which must tile the block, begin: each piece one cell, at its place in its array
  // (the base pointers are set at each run). Returns each piece's cell.
  template <class Layout>
  static std::vector<std::size_t> lay_out(const box& block, const std::vector<cell_piece>& pieces,
                                          std::unique_ptr<Layout>& layout) {
    const std::size_t d = block.extent.size();
    std::vector<std::vector<std::size_t>> cuts(d);
    for (std::size_t k = 0; k < d; ++k) {
      for (const cell_piece& p : pieces) cuts[k].push_back(p.where.offset[k] - block.offset[k]);
      std::sort(cuts[k].begin(), cuts[k].end());
      cuts[k].erase(std::unique(cuts[k].begin(), cuts[k].end()), cuts[k].end());
    }
    layout = std::make_unique<Layout>(block.extent, cuts);
    std::vector<char> covered(layout->cells(), 0);
    std::vector<std::size_t> cells;
    for (const cell_piece& p : pieces) {
      std::vector<std::size_t> interval(d);
      std::size_t first = 0;
      const shape_t strides = c_strides(p.array.extent);
      for (std::size_t k = 0; k < d; ++k) {
        const std::size_t at = p.where.offset[k] - block.offset[k];
        interval[k] = std::size_t(std::lower_bound(cuts[k].begin(), cuts[k].end(), at) - cuts[k].begin());
        const std::size_t end = interval[k] + 1 < cuts[k].size() ? cuts[k][interval[k] + 1] : block.extent[k];
        if (end - at != p.where.extent[k])
          throw error("kronex: internal error: the parts of a shared-memory exchange do not tile the block");
        first += (p.where.offset[k] - p.array.offset[k]) * strides[k];
      }
      cells.push_back(layout->cell_index(interval));
      layout->set_cell(cells.back(), nullptr, strides, p.at + first);
      covered[cells.back()] = 1;
    }
    if (std::count(covered.begin(), covered.end(), 0) != 0)
      throw error("kronex: internal error: the parts of a shared-memory exchange do not cover the block");
    return cells;
  }

  // The next block of a read exchange as a gathered tensor: each part (this rank's own and each
  // peer's, boxes of the blocks that hold them) one cell.
  void build_source(phase_work& w, const box& from_mine) {
    if (w.block.size() == 0) return;
    std::vector<cell_piece> pieces;
    std::vector<int> nodes;
    if (w.own.front().size() > 0) pieces.push_back({w.own.front(), from_mine}), nodes.push_back(-1);
    for (const part& g : w.recvs) pieces.push_back({g.where, g.block}), nodes.push_back(g.node);
    const std::vector<std::size_t> cells = lay_out(w.block, pieces, w.source);
    for (std::size_t p = 0; p < cells.size(); ++p) w.source_cells.push_back({cells[p], nodes[p]});
  }

  // What the other ranks take from this rank's block (as the MPI exchanges count it).
  void count_sends(const phase_work& w) {
    for (const auto& chunk : w.sends)
      for (const part& s : chunk) {
        ++m_sent_messages;
        m_sent_bytes += double(s.where.size() * sizeof(T));
      }
  }

  // A barrier that orders the ranks' plain loads and stores in shared memory around it.
  static void node_barrier(MPI_Comm comm) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    check_mpi(MPI_Barrier(comm), "MPI_Barrier");
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  // Ping-pong buffer k of this rank, and of the rank `node` of this node (shared memory: each
  // rank's segment holds its two buffers, of its own size).
  T* buffer(std::size_t k) {
    if (m_segments.empty()) return m_ranks.data(m_buffers[k]);
    return static_cast<T*>(m_segments.of(m_node_rank)) + k * m_buffer_values;
  }
  T* peer_buffer(int node, std::size_t k) const {
    return static_cast<T*>(m_segments.of(node)) + k * (m_segments.bytes_of(node) / (2 * sizeof(T)));
  }

  distributed_plan(Ranks ranks, const std::shared_ptr<cart_comm>& comm, const shape_t& global, const exchange_options& layouts)
      : m_ranks(std::move(ranks)), m_comm(comm), m_global(global), m_layouts(layouts) {}

  // Whether exchanges pack: on request, by default where the ranks pack (device ranks), and
  // always when MPI cannot reach the blocks (staged device ranks: it sees host buffers only).
  bool choose_packing(exchange_transport t) const {
    if (t == exchange_transport::subarray && m_ranks.staged)
      throw backend_unavailable(message("kronex: exchange_transport::subarray needs MPI to read and write the blocks; "
                                        "these device ranks stage their exchanges through the host (packed only)"));
    if (t == exchange_transport::automatic) return Ranks::packs_by_default || m_ranks.staged;
    return t == exchange_transport::packed;
  }

  // Per mode: whether its factor needs the mode whole on one rank (banded, dense, function).
  static std::vector<bool> needs_local(const operator_desc<T>& d) {
    std::vector<bool> r(d.factors.size());
    for (std::size_t k = 0; k < d.factors.size(); ++k) {
      const factor_kind kind = d.factors[k].kind;
      r[k] = kind == factor_kind::banded || kind == factor_kind::dense || kind == factor_kind::function;
    }
    return r;
  }

  void prepare(const operator_desc<T>& d, const std::vector<int>& grid) {
    check_operand_shape(d, m_global, d.inverse ? "right-hand side" : "operand");
    schedule(d);  // backend-neutral checks (function solvers: solve only, untransposed)
    // Diagonals scale each rank's block where it lies, restricted to the block: a zero entry
    // would be found only by the rank holding it, and named by its index within the block. The
    // whole diagonal is checked here instead, on every rank: singular_factor names the global
    // entry (as the serial host does) on every rank.
    if (d.inverse) {
      for (std::size_t k = 0; k < d.factors.size(); ++k) {
        const factor_view<T>& f = d.factors[k];
        if (f.kind != factor_kind::diagonal) continue;
        for (std::size_t i = 0; i < f.n; ++i)
          if (f.data[i] == T(0)) throw_singular(k, long(i + 1), f.describe(), "diagonal");
      }
    }
    m_packed = choose_packing(d.options.exchanges);
    m_phases = plan_exchanges(m_global, grid, needs_local(d), m_layouts);
    m_split.reset();
    if constexpr (std::is_same_v<typename Ranks::local_plan, host_plan<T>>) plan_split(d, grid);
    if (m_split) m_phases.resize(1);  // phase 0 solves every other mode; no exchange of blocks
    if constexpr (std::is_same_v<typename Ranks::local_plan, host_plan<T>>) regroup_modes(d, grid);
    m_expression = d.text();
    m_exchange_step_index.assign(m_phases.size(), 0);

    m_exchange_steps.assign(m_phases.size(), exchange_step{});
    m_sharing.assign(m_phases.size(), sharing::none);
    for (std::size_t i = 1; i < m_phases.size(); ++i) m_sharing[i] = choose_sharing(d, i);
    m_chunks.assign(m_phases.size(), 1);
    for (std::size_t i = 0; i < m_phases.size(); ++i) m_chunks[i] = pipeline_chunks(d, i);
    for (std::size_t i = 1; i < m_phases.size(); ++i)
      if (m_chunks[i] == 1 && next_step_reads(d, i, grid)) m_sharing[i] = sharing::read;
    m_buffer_values = 0;
    for (std::size_t i = 0; i < m_phases.size(); ++i) {
      const exchange_phase& ph = m_phases[i];
      phase_work w;
      w.block = ph.layout.block(grid, m_comm->coords());
      w.work = has_work(d, ph);
      w.shared = m_sharing[i];
      w.pipelined = m_chunks[i] > 1;
      w.chunks = chunks_of(w.block, m_chunks[i]);
      m_buffer_values = std::max(m_buffer_values, w.block.size());
      plan_local(d, ph, w);
      if (i > 0) m_exchange_steps[i] = plan_exchange(i, grid);
      m_work.push_back(std::move(w));
    }
    if (m_split) m_buffer_values = 0;  // phase 0 writes x itself
    m_setup = skipped_setup(d);
    m_diagonal.clear();
    for (const auto& f : d.factors) m_diagonal.push_back(f.kind == factor_kind::diagonal);
  }

  // The solve along the grid's one split axis where its rows lie (split_solve.hpp), where it
  // applies: the grid splits one axis; its factor is a band; the host's choice for the whole
  // tensor is a substitution (not a dense inverse: the result stays the serial host's bits); the
  // plan starts and ends in the input layout; the substitution pipelines (no swap between two
  // ranks' rows, no band wrapping around the axis); and its halo is smaller than a block. On a
  // split last axis, the mode the host would solve before it on the axis before it runs chunk
  // by chunk with it (attached_mode). Sets m_split, its printed steps and its setup lines. The
  // factor is factored here, in explain() too: whether the solve pipelines depends on its pivots
  // (explain() then prints the estimates and allocates nothing). The same decision on every rank.
  void plan_split(const operator_desc<T>& d, const std::vector<int>& grid) {
    const std::size_t D = m_global.size();
    if (!d.options.split_solves_in_place || !d.inverse || !m_layouts.start.empty() || m_layouts.end_in_last) return;
    std::size_t axis = npos;
    for (std::size_t k = 0; k < D; ++k) {
      if (grid[k] == 1) continue;
      if (axis != npos) return;
      axis = k;
    }
    if (axis == npos || d.factors[axis].kind != factor_kind::banded) return;
    const plan_description whole = host_plan<T>::explain(mode_alone(d, axis, m_global), m_global);
    if (whole.steps.size() != 1 || !std::holds_alternative<lu_subst_step>(whole.steps.front())) return;
    // The program, from a plan of one line (factored here, or taken from the options' store).
    shape_t line(D, 1);
    line[axis] = m_global[axis];
    operator_desc<T> one_line = mode_alone(d, axis, line);
    one_line.options.solves = solve_method::substitution;
    one_line.options.threads = 1;
    const host_plan<T> one(one_line, line);
    const block_layout input = input_layout(m_global, grid);
    std::vector<int> q = m_comm->coords();
    std::vector<std::size_t> offsets;
    for (int c = 0; c < grid[axis]; ++c) {
      q[axis] = c;
      offsets.push_back(input.block(grid, q).offset[axis]);
    }
    offsets.push_back(m_global[axis]);
    const box mine = input.block(grid, m_comm->coords());
    std::size_t chunks = d.options.exchange_chunks;
    const std::size_t attached = attached_mode(d, axis, mine.extent, std::max<std::size_t>(chunks, 1));
    // Where a mode is attached, a chunk per slab of the axis before the split one (the smaller
    // the chunk, the more of it stays in cache between its turns: measured, performance.md), or
    // per few slabs where one holds fewer lines than a strip (the rest of a strip is padding,
    // sent in the halo too); else the default.
    if (chunks == 0 && attached == npos) chunks = distributed_split_chunks;
    if (chunks == 0) {
      const std::size_t slabs = product(shape_t(mine.extent.begin(), mine.extent.begin() + long(axis - 1)));
      const std::size_t lines = mine.extent[axis - 1], per = (strip_width<T> + lines - 1) / lines;
      chunks = std::max<std::size_t>(1, slabs / per);
    }
    m_split = split_solve<T>::make(one.solve_program_of(0), offsets, std::size_t(m_comm->coords()[axis]), mine.extent,
                                   axis, chunks, !m_explaining, attached == npos ? axis : attached);
    // Worth it only where the halo is smaller than a block (the largest, the grid's first
    // rank's): the exchanges send about two. Small blocks of a wide band (a periodic one's
    // corners reach every rank) can send more in their halo than in the exchanges.
    const double block = double(input.block(grid, std::vector<int>(grid.size(), 0)).size() * sizeof(T));
    if (m_split && m_split->most_sent_bytes() >= block) m_split.reset();
    if (!m_split) return;
    m_split_axis = axis;
    // The whole tensor's step, on this rank's rows: the lines are the same, the rows fewer.
    m_split_step = std::get<lu_subst_step>(whole.steps.front());
    const double share = double(mine.extent[axis]) / double(m_global[axis]);
    m_split_step.view[1] = mine.extent[axis];
    m_split_step.view_strides = c_strides(m_split_step.view);
    m_split_step.flops *= share;
    m_split_step.bytes *= share;
    m_split_step.model_subst_s = m_split_step.model_gemm_s = -1;
    m_split_step.across_ranks = true;
    // explain() prints the estimates, as for every other factor.
    const plan_description& setup = m_explaining ? whole : one.description();
    m_split_setup.clear();
    m_split_setup.emplace_back(axis, setup.setup[axis]);
    m_split_setup.back().second.result += "  (across ranks)";
    m_split_factor_bytes = setup.factor_bytes;
    m_split_before.clear();
    if (attached != npos) attach_mode(d, attached, mine.extent);
    exchange_step& h = m_split_exchange;
    h = exchange_step{};
    h.how = exchange_step::method::halo;
    h.comm = message("grid dims {", axis, "} (", grid[axis], " ranks)");
    h.messages = m_split->most_messages();
    h.message_bytes = m_split->most_sent_bytes();
    h.chunks = m_split->chunks().size();
    h.mode = axis;
    h.view = mine.extent;
    h.view_strides = c_strides(mine.extent);
    h.bytes = m_split->copy_bytes();
  }

  // The mode that can run chunk by chunk with the solve across ranks of `axis` on this rank's
  // block `extent`, before it (the host's order of modes), or npos: on a split last axis, that of
  // the axis before it, where phase 0 would solve it by substitution (the same bits run chunk by
  // chunk), with enough slabs before it for `chunks` chunks, and no diagonal factor anywhere
  // (the scales keep their place before the modes). Modes after a split axis that is not the
  // last could run chunk by chunk after it the same way, but measured slower than in a pass of
  // their own (performance.md). The same answer on every rank (the extents of the other axes
  // are the same).
  std::size_t attached_mode(const operator_desc<T>& d, std::size_t axis, const shape_t& extent, std::size_t chunks) const {
    const std::size_t D = extent.size();
    for (const factor_view<T>& f : d.factors)
      if (f.kind == factor_kind::diagonal) return npos;
    if (axis + 1 != D || axis < 2 || product(extent) == 0) return npos;  // an empty block: no solve across ranks
    if (product(shape_t(extent.begin(), extent.begin() + long(axis - 1))) < chunks) return npos;
    const std::size_t k = axis - 1;
    const std::vector<std::size_t>& solved = m_phases[0].modes;
    if (std::find(solved.begin(), solved.end(), k) == solved.end()) return npos;
    std::vector<std::size_t> others;
    for (const std::size_t j : solved)
      if (j != axis) others.push_back(j);
    const plan_description p = host_plan<T>::explain(modes_alone(d, others, extent), extent);
    for (const step& st : p.steps)
      if (kind_of(st) == step_kind::solve && step_info(st).mode == k && !std::holds_alternative<lu_subst_step>(st))
        return npos;
    return k;
  }

  // Runs mode k (the axis before the split last one) chunk by chunk before the solve across
  // ranks: its substitution, from a host plan of one line, on each chunk's slabs; phase 0 no
  // longer solves it. Its printed step is that of the rank's whole block, fused with the solve
  // across ranks: as in a fused pair, the block is moved once, read by the first and written by
  // the solve across ranks (a block's bytes each).
  void attach_mode(const operator_desc<T>& d, std::size_t k, const shape_t& extent) {
    operator_desc<T> only = mode_alone(d, k, extent);
    only.options.solves = solve_method::substitution;
    only.options.threads = 1;
    plan_description p = host_plan<T>::explain(only, extent);
    if (!m_explaining) {
      shape_t line(extent.size(), 1);
      line[k] = extent[k];
      const host_plan<T> one(mode_alone(only, k, line), line);
      m_split->attach(one.solve_program_of(0));
      p.setup = one.description().setup;
    }
    m_split_factor_bytes += p.factor_bytes;
    const double block = double(product(extent) * sizeof(T));
    m_split_step.bytes = block;
    for (step st : p.steps) {
      if (kind_of(st) != step_kind::solve) continue;
      lu_subst_step& l = std::get<lu_subst_step>(st);
      l.bytes = block;
      l.model_subst_s = l.model_gemm_s = -1;
      l.fused_with_next = true;
      m_split_before.push_back(st);
    }
    m_split_setup.emplace_back(k, p.setup[k]);
    m_split_setup.back().second.result += "  (with the solve across ranks)";
    auto& solved = m_phases[0].modes;
    solved.erase(std::find(solved.begin(), solved.end(), k));
  }

  // The operator of `modes` alone (identities of these extents elsewhere).
  static operator_desc<T> modes_alone(const operator_desc<T>& d, const std::vector<std::size_t>& modes,
                                      const shape_t& extent) {
    operator_desc<T> alone;
    alone.trans = d.trans;
    alone.inverse = d.inverse;
    alone.options = d.options;
    for (std::size_t j = 0; j < d.factors.size(); ++j) {
      factor_view<T> f = d.factors[j];
      if (std::find(modes.begin(), modes.end(), j) == modes.end()) {
        f = factor_view<T>{};
        f.kind = factor_kind::identity;
        f.n = extent[j];
      }
      alone.factors.push_back(f);
    }
    return alone;
  }

  // The operator of mode k alone (identities of these extents elsewhere).
  static operator_desc<T> mode_alone(const operator_desc<T>& d, std::size_t k, const shape_t& extent) {
    return modes_alone(d, {k}, extent);
  }

  // Instantiation of the local work: each phase's local plan is compiled on this rank's block
  // (factored, allocated, uploaded), and the description takes their exact numbers. A pipelined
  // phase runs one plan per distinct chunk extent instead, sharing the factors through a store;
  // it prints the plan of its whole block (its steps run on each chunk).
  void instantiate_local() {
    using local_plan = typename Ranks::local_plan;
    std::vector<plan_description> local(m_work.size());
    for (std::size_t i = 0; i < m_work.size(); ++i) {
      phase_work& w = m_work[i];
      if (!w.has_local) continue;
      if (!w.pipelined) {
        w.plans.push_back(std::make_unique<local_plan>(w.local_desc, w.block.extent));
        w.chunk_plan.assign(1, 0);
        local[i] = w.plans.front()->description();
      } else {
        if (!w.local_desc.options.store) w.local_desc.options.store = std::make_shared<factor_store>();
        local[i] = local_plan(w.local_desc, w.block.extent).description();
        local[i].workspace_bytes = 0;
        std::vector<shape_t> extents;
        std::tie(extents, w.chunk_plan) = chunk_extents(w);
        for (const shape_t& e : extents) {
          w.plans.push_back(std::make_unique<local_plan>(chunk_desc(w, e), e));
          local[i].workspace_bytes += w.plans.back()->description().workspace_bytes;
        }
      }
      w.local_desc = operator_desc<T>{};  // the plans keep no view of the factors
    }
    compose(local);
    if (!shares_memory())
      for (auto& b : m_buffers) m_ranks.allocate(b, m_buffer_values);  // else in the node's shared memory (connect)
  }

  bool shares_memory() const {
    return std::any_of(m_sharing.begin(), m_sharing.end(), [](sharing s) { return s != sharing::none; });
  }

  // Whether phase ph solves or scales anything (on some rank).
  static bool has_work(const operator_desc<T>& d, const exchange_phase& ph) {
    if (!ph.modes.empty()) return true;
    return ph.scales && std::any_of(d.factors.begin(), d.factors.end(),
                                    [](const factor_view<T>& f) { return f.kind == factor_kind::diagonal; });
  }

  // Modes whole both in the input layout and in a chain phase's layout can be solved in either
  // phase (solves commute); plan_exchanges puts them all in phase 0. One adjacent to the chain
  // phase's mode moves into that phase where the first rank's local steps and copies then move
  // at least its block's size fewer bytes (half a pass: not merely a smaller block where the
  // split is uneven): there the two run as a fused pair, one pass over the block for both
  // (host_plan.hpp, fuse_adjacent_modes), where phase 0 made a pass for it alone. On grid
  // (1,1,2), mode 1 is solved with mode 2 after the exchange; on (1,2,1), mode 2 with mode 1.
  // Phase 0 keeps at least one mode (without work it would push b into the peers' blocks); the
  // chain phase's own mode stays first in its list. Decided on the grid's first rank's blocks,
  // so that every rank makes the same schedule; a plan given a start layout keeps its schedule.
  void regroup_modes(const operator_desc<T>& d, const std::vector<int>& grid) {
    if (!m_layouts.start.empty()) return;
    double bytes = schedule_bytes(d, grid);  // of the schedule kept so far
    for (std::size_t i = 1; i < m_phases.size(); ++i) {
      if (m_phases[i].gather || m_phases[i].modes.size() != 1) continue;
      const std::size_t a = m_phases[i].modes.front();
      for (const std::size_t k : {a - 1, a + 1}) {  // a - 1 wraps around for a = 0: in no phase
        const std::vector<std::size_t>& first = m_phases[0].modes;
        const auto at = std::find(first.begin(), first.end(), k);
        if (at == first.end() || first.size() < 2 || m_phases[i].layout.split_by[k] >= 0) continue;
        const std::vector<exchange_phase> kept = m_phases;
        m_phases[0].modes.erase(at);
        m_phases[i].modes.push_back(k);
        const double moved = schedule_bytes(d, grid);
        if (moved + block_bytes(i, grid) <= bytes) bytes = moved;
        else m_phases = kept;
      }
    }
  }

  // Bytes of the grid's first rank's block in phase i.
  double block_bytes(std::size_t i, const std::vector<int>& grid) const {
    return double(m_phases[i].layout.block(grid, std::vector<int>(grid.size(), 0)).size() * sizeof(T));
  }

  // Memory traffic of the schedule m_phases on the grid's first rank: its local plans' bytes, and
  // a copy of the block (read and written) for each exchange that its next step does not read.
  double schedule_bytes(const operator_desc<T>& d, const std::vector<int>& grid) const {
    const std::vector<int> first(grid.size(), 0);
    double bytes = 0;
    for (std::size_t i = 0; i < m_phases.size(); ++i) {
      const exchange_phase& ph = m_phases[i];
      phase_work probe;
      probe.block = ph.layout.block(grid, first);
      plan_local(d, ph, probe);
      if (probe.has_local) bytes += host_plan<T>::explain(probe.local_desc, probe.block.extent).bytes();
      if (i > 0 && !ph.group_dims.empty() && !next_step_reads(d, i, grid))
        bytes += 2.0 * double(probe.block.size() * sizeof(T));
    }
    return bytes;
  }

  // Whether the exchange into phase i is read by that phase's first step (sharing::read), unless
  // the phase is pipelined: an exchange that pulls in shared memory, with fusing on, into a phase
  // with work whose first step reads pieces well.
  bool next_step_reads(const operator_desc<T>& d, std::size_t i, const std::vector<int>& grid) const {
    return choose_sharing(d, i) == sharing::pull && d.options.fuse_shared_exchanges && has_work(d, m_phases[i]) &&
           reads_pieces_well(d, m_phases[i], grid);
  }

  // Whether phase ph's first local step reads a gathered operand (an exchange read by the next
  // step) about as fast as one array. A panel step whose panels span several indices l of the
  // lines before the mode (1 < R < a panel's lines) gathers each panel from runs of R values,
  // which a gathered walk does not prefetch (tiles.hpp, panel_walk::source): out of cache that
  // pass cost more than the copy it saves (2 ranks, grid (1,2,1), mode 1 with R = 192, 192^3:
  // 14-23 % slower than copying; at 128^3 neither won; docs/performance.md). Such an exchange
  // copies instead (pull) where the block is out of cache, as large as the output from which
  // panel steps stream their stores (host_streaming_min_bytes, an eighth of the last-level
  // cache). Every other first step reads as well from pieces: the last mode (R == 1: the pieces
  // are prefetched), a fused pair (each group of slabs read into the output, the next group's
  // pieces prefetched meanwhile), panels within one l (one run per row), rows, copies,
  // scalings, GEMMs (which copy first). Decided on the block of the grid's first rank (coordinates 0, the
  // largest where the split is uneven), so that every rank decides alike without a message
  // (either way an exchange runs between the same two barriers).
  bool reads_pieces_well(const operator_desc<T>& d, const exchange_phase& ph, const std::vector<int>& grid) const {
    phase_work probe;
    probe.block = ph.layout.block(grid, std::vector<int>(grid.size(), 0));
    plan_local(d, ph, probe);
    if (!probe.has_local) return true;
    const plan_description p = host_plan<T>::explain(probe.local_desc, probe.block.extent);
    if (p.steps.empty()) return true;
    const step& first = p.steps.front();
    const bool panels = std::holds_alternative<lu_subst_step>(first) ||
                        (std::holds_alternative<matvec_step>(first) && !std::get<matvec_step>(first).gemm);
    const step_base& st = step_info(first);
    if (!panels || st.view.size() != 3 || fused_with_next(first)) return true;
    const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
    const std::size_t panel_lines = strips_per_panel<T>(n, L * R, R) * strip_width<T>;
    return R == 1 || R >= panel_lines || L * n * R * sizeof(T) < host_streaming_min_bytes();
  }

  // How the exchange into phase i uses shared memory. Where every group of ranks it exchanges
  // within lies on one node (host ranks, transport automatic, a pairwise exchange), the ranks
  // copy between their blocks directly: each pulls its parts from the peers' solved blocks, which
  // lie in the shared buffers after any local work; the first exchange of a plan whose first
  // phase has no work reads b, which the peers cannot see, so there each rank pushes its parts
  // into the peers' next buffers instead; and an exchange from b straight into x (the only one)
  // goes through MPI.
  sharing choose_sharing(const operator_desc<T>& d, std::size_t i) const {
    const exchange_phase& ph = m_phases[i];
    if (d.options.exchanges != exchange_transport::automatic || !Ranks::shares_memory || m_packed) return sharing::none;
    if (ph.group_dims.empty() || ph.gather || !m_comm->within_nodes(ph.group_dims)) return sharing::none;
    if (i > 1 || has_work(d, m_phases[0])) return sharing::pull;
    return i + 1 < m_phases.size() ? sharing::push : sharing::none;
  }

  // The printable plan: each phase's exchange, then its local steps (marked with the phase).
  void compose(const std::vector<plan_description>& local) {
    m_desc = plan_description{};
    m_desc.backend = backend_name(*m_comm);
    m_desc.value_type = value_traits<T>::name;
    m_desc.expression = m_expression;
    m_desc.shape = m_global;
    m_desc.counts_transfers = Ranks::counts_transfers;
    m_desc.setup = m_setup;
    m_desc.workspace_bytes = 2 * m_buffer_values * sizeof(T);
    m_local_steps.assign(m_phases.size(), step_range{});
    m_own_written.assign(m_phases.size(), false);
    m_packs_parts.assign(m_phases.size(), false);
    for (std::size_t i = 0; i < m_phases.size(); ++i) {
      if (i > 0) {
        m_exchange_step_index[i] = m_desc.steps.size();
        m_desc.steps.push_back(m_exchange_steps[i]);
        m_own_written[i] = writes_own_part(i, local);
        m_packs_parts[i] = m_own_written[i] && packs_parts(i, local[i - 1]);
        if constexpr (Ranks::shares_memory)
          if (m_own_written[i]) {  // no copy of the own part: the phase before wrote it (the step printed last)
            exchange_step& e = std::get<exchange_step>(m_desc.steps.back());
            e.bytes -= 2.0 * e.own_bytes;
            e.own_written_by = long(m_desc.steps.size()) - 2;
            e.parts_packed = m_packs_parts[i] && e.message_bytes > 0;
            m_desc.workspace_bytes += Ranks::local_plan::scattered_workspace_bytes(local[i - 1]);
          }
      }
      m_local_steps[i].first = m_desc.steps.size();
      if (!m_work[i].has_local) continue;
      const plan_description& l = local[i];
      m_desc.workspace_bytes += l.workspace_bytes;
      m_desc.factor_bytes += l.factor_bytes;
      m_desc.setup_transfers += l.setup_transfers;
      m_desc.setup_transfer_bytes += l.setup_transfer_bytes;
      for (step st : l.steps) {
        if (kind_of(st) == step_kind::copy) continue;
        step_info(st).phase = long(i);
        m_desc.steps.push_back(std::move(st));
      }
      m_local_steps[i].count = m_desc.steps.size() - m_local_steps[i].first;
      // Each factor's setup line comes from the phase that solves (or scales) its mode.
      const exchange_phase& ph = m_phases[i];
      for (std::size_t k = 0; k < l.setup.size(); ++k) {
        const bool here = std::find(ph.modes.begin(), ph.modes.end(), k) != ph.modes.end();
        if (here || (ph.scales && m_diagonal[k])) {
          m_desc.setup[k].method = l.setup[k].method;
          m_desc.setup[k].result = message(l.setup[k].result, l.setup[k].result.empty() ? "" : "  ", "(phase ", i, ")");
          m_desc.setup[k].rcond = l.setup[k].rcond;
        }
      }
    }
    compose_split();
  }

  // The solve across ranks last (after the modes run chunk by chunk before it), then its halo
  // exchange.
  void compose_split() {
    if (!m_split) return;
    m_split_step_index = m_desc.steps.size();
    for (const step& st : m_split_before) m_desc.steps.push_back(st);
    m_desc.steps.push_back(m_split_step);
    m_desc.steps.push_back(m_split_exchange);
    for (const auto& [k, setup] : m_split_setup) m_desc.setup[k] = setup;
    m_desc.workspace_bytes += std::size_t(m_split->workspace_bytes());
    m_desc.factor_bytes += m_split_factor_bytes;
  }

  static std::string format_grid(const std::vector<int>& grid) {
    shape_t g(grid.begin(), grid.end());
    return format_shape(g);
  }

  // The chunks phase i's local work runs in, pipelined with the exchange after it (1: none).
  // Pipelined: the exchange is pairwise and MPI reads the blocks (subarray), and the work leaves
  // axis 0 alone (no solve or scale there), so that chunks along axis 0 are contiguous, their
  // work independent and its result the same bits as the whole block's.
  std::size_t pipeline_chunks(const operator_desc<T>& d, std::size_t i) const {
    const std::size_t option = d.options.exchange_chunks;
    if (!Ranks::pipelines || m_packed || option == 1 || i + 1 >= m_phases.size()) return 1;
    if (m_sharing[i + 1] != sharing::none) return 1;  // copied by the cores themselves: nothing to overlap
    const exchange_phase& ph = m_phases[i];
    const exchange_phase& next = m_phases[i + 1];
    if (next.group_dims.empty() || next.gather) return 1;
    bool work = !ph.modes.empty();
    for (std::size_t k = 0; k < d.factors.size(); ++k)
      if (ph.scales && d.factors[k].kind == factor_kind::diagonal) {
        if (k == 0) return 1;
        work = true;
      }
    if (!work || std::find(ph.modes.begin(), ph.modes.end(), std::size_t(0)) != ph.modes.end()) return 1;
    if (option != 0) return std::min(option, max_chunks);
    // The largest block (every rank computes the same number): the first rank's on every axis.
    const std::size_t largest = ph.layout.block(m_comm->grid(), std::vector<int>(m_comm->grid().size(), 0)).size();
    return std::max<std::size_t>(
        1, std::min(distributed_pipeline_chunks, largest * sizeof(T) / distributed_pipeline_min_chunk_bytes));
  }
  static constexpr std::size_t max_chunks = 4096;  // chunk indices are message tags

  // The distinct extents of a pipelined phase's chunks, and per chunk the index of its extent.
  static std::pair<std::vector<shape_t>, std::vector<std::size_t>> chunk_extents(const phase_work& w) {
    std::pair<std::vector<shape_t>, std::vector<std::size_t>> r;
    for (const box& c : w.chunks) {
      const auto e = std::find(r.first.begin(), r.first.end(), c.extent);
      r.second.push_back(std::size_t(e - r.first.begin()));
      if (e == r.first.end()) r.first.push_back(c.extent);
    }
    return r;
  }

  // A pipelined phase's local operator on a chunk of this extent.
  static operator_desc<T> chunk_desc(const phase_work& w, const shape_t& extent) {
    operator_desc<T> chunk = w.local_desc;
    chunk.factors[0].n = extent[0];  // an identity (pipeline_chunks)
    return chunk;
  }

  // A block in `count` chunks along axis 0 (fewer when the axis is shorter), their extents
  // differing by at most one; the block alone for one.
  static std::vector<box> chunks_of(const box& b, std::size_t count) {
    const std::size_t n = std::min(count, b.extent.empty() ? 0 : b.extent[0]);
    if (n <= 1) return {b};
    std::vector<box> chunks;
    for (std::size_t k = 0; k < n; ++k) {
      const index_range r = block_range(b.extent[0], n, k);
      box c = b;
      c.offset[0] += r.begin;
      c.extent[0] = r.size();
      chunks.push_back(std::move(c));
    }
    return chunks;
  }

  // The local operator for the modes solved in phase i, on this rank's block: the phase's
  // factors at their modes, diagonal scales (phase 0) restricted to the block, identities
  // elsewhere. None when the block is empty or has nothing to do.
  void plan_local(const operator_desc<T>& d, const exchange_phase& ph, phase_work& w) const {
    operator_desc<T> local;
    local.trans = d.trans;
    local.inverse = d.inverse;
    local.options = d.options;
    bool any = false;
    for (std::size_t k = 0; k < d.factors.size(); ++k) {
      factor_view<T> f = d.factors[k];
      const bool here = std::find(ph.modes.begin(), ph.modes.end(), k) != ph.modes.end();
      if (ph.scales && f.kind == factor_kind::diagonal) {
        f.data += w.block.offset[k];
        f.n = w.block.extent[k];
        any = true;
      } else if (!here) {
        f = factor_view<T>{};
        f.kind = factor_kind::identity;
        f.n = w.block.extent[k];
      } else {
        any = true;
      }
      local.factors.push_back(f);
    }
    if (!any || w.block.size() == 0) return;
    w.has_local = true;
    w.local_desc = std::move(local);
  }

  // The printed record of the exchange into phase i: largest message count and bytes over ranks
  // (the same numbers on every rank), and this rank's own part and local memory traffic.
  exchange_step plan_exchange(std::size_t i, const std::vector<int>& grid) {
    const exchange_phase& ph = m_phases[i];
    const block_layout& from = m_phases[i - 1].layout;
    exchange_step st;
    if (ph.group_dims.empty()) {
      st.how = exchange_step::method::local_copy;
      st.comm = "self";
    } else {
      st.how = ph.gather ? exchange_step::method::allgatherv : exchange_step::method::pairwise;
      if (!ph.gather) st.transport = m_sharing[i] != sharing::none ? "shared memory" : m_packed ? "packed" : "subarray";
      std::string dims;
      int ranks = 1;
      for (int g : ph.group_dims) {
        dims += (dims.empty() ? "" : ",") + std::to_string(g);
        ranks *= grid[std::size_t(g)];
      }
      st.comm = message("grid dims {", dims, "} (", ranks, " ranks)");
    }
    // Every rank's sends, from the layouts alone.
    std::vector<int> coords(grid.size(), 0);
    while (true) {
      std::size_t messages = 0, bytes = 0;
      const box mine = from.block(grid, coords);
      const std::vector<box> chunks = chunks_of(mine, m_chunks[i - 1]);
      if (m_chunks[i - 1] > 1) st.chunks = std::max(st.chunks, chunks.size());
      std::size_t total = 0;
      for_each_peer(ph.group_dims, grid, coords, [&](const std::vector<int>& q) {
        const box theirs = ph.layout.block(grid, q);
        for (const box& c : chunks) {
          const std::size_t n = intersect(c, theirs).size() * sizeof(T);
          total += n;
          if (q != coords && n > 0) {
            ++messages;
            bytes += n;
          }
        }
      });
      if (total > std::size_t(INT_MAX) || mine.size() * sizeof(T) > std::size_t(INT_MAX))
        throw error(message("kronex: distributed exchange of ", std::max(total, mine.size() * sizeof(T)),
                            " bytes on one rank: more than MPI's int counts allow (", INT_MAX, ")"));
      st.messages = std::max(st.messages, messages);
      st.message_bytes = std::max(st.message_bytes, double(bytes));
      if (!next_coords(coords, grid)) break;
    }
    if (!ph.group_dims.empty()) st.memory = m_ranks.memory_text();
    const box b = ph.layout.block(grid, m_comm->coords());
    const box before = from.block(grid, m_comm->coords());
    st.view = b.extent;
    st.view_strides = c_strides(b.extent);
    st.mode = ph.modes.empty() ? 0 : ph.modes.front();
    // Memory traffic of kronex's own copies (read and write): the own part, and with packing
    // every part sent (packed) and received (unpacked). What MPI moves is message_bytes.
    const double own = ph.gather || ph.group_dims.empty() ? 0.0 : double(intersect(before, b).size() * sizeof(T));
    st.own_bytes = own;
    if (ph.gather) {
      st.bytes = 2.0 * double(before.size() * sizeof(T));  // the block copied into the send buffer
    } else if (ph.group_dims.empty()) {
      st.bytes = 2.0 * double(intersect(before, b).size() * sizeof(T));
    } else if (m_sharing[i] == sharing::read) {
      st.bytes = 0;  // the next step reads the values where they were solved
      st.read_by_next = true;
    } else if (m_sharing[i] == sharing::pull) {
      st.bytes = 2.0 * double(b.size() * sizeof(T));  // the next block, each value read where it was solved
    } else if (m_sharing[i] == sharing::push) {
      st.bytes = 2.0 * double(before.size() * sizeof(T));  // this block, each value written where it goes
    } else {
      const double sent = double(before.size() * sizeof(T)) - own, received = double(b.size() * sizeof(T)) - own;
      st.bytes = 2.0 * own + (m_packed ? 2.0 * (sent + received) : 0.0);
    }
    return st;
  }

  // Calls f(coords of q) for every rank q that differs from `coords` only in the grid dimensions
  // `dims` (coords itself included), in the row-major order of those dimensions.
  template <class F>
  static void for_each_peer(const std::vector<int>& dims, const std::vector<int>& grid, const std::vector<int>& coords,
                            F&& f) {
    std::vector<int> q = coords;
    for (int g : dims) q[std::size_t(g)] = 0;
    while (true) {
      f(q);
      std::size_t j = dims.size();
      while (j-- > 0) {
        const std::size_t g = std::size_t(dims[j]);
        if (++q[g] < grid[g]) break;
        q[g] = 0;
      }
      if (j == std::size_t(-1)) return;
    }
  }

  static bool next_coords(std::vector<int>& c, const std::vector<int>& grid) {
    for (std::size_t k = c.size(); k-- > 0;) {
      if (++c[k] < grid[k]) return true;
      c[k] = 0;
    }
    return false;
  }

  // Collective: the sub-communicators, and this rank's messages of each exchange (per chunk of
  // the sender's block) with their subarray types or places in the packed buffers.
  void connect(const std::vector<int>& grid) {
    if (m_split) m_split->connect(m_comm->sub({int(m_split_axis)}));
    std::size_t send_size = 0, recv_size = 0;
    for (std::size_t i = 1; i < m_phases.size(); ++i) {
      const exchange_phase& ph = m_phases[i];
      if (ph.group_dims.empty()) continue;
      phase_work& w = m_work[i];
      const box& from_mine = m_work[i - 1].block;
      const std::vector<box>& my_chunks = m_work[i - 1].chunks;
      const block_layout& from = m_phases[i - 1].layout;
      w.comm = m_comm->sub(ph.group_dims);
      w.gather = ph.gather;
      w.sends.clear();
      w.sends.resize(my_chunks.size());
      w.own.assign(my_chunks.size(), box{});
      std::size_t send_total = 0, recv_total = 0, messages = 0;
      for_each_peer(ph.group_dims, grid, m_comm->coords(), [&](const std::vector<int>& q) {
        std::vector<int> sub_coords;
        for (int g : ph.group_dims) sub_coords.push_back(q[std::size_t(g)]);
        int r = 0;
        check_mpi(MPI_Cart_rank(w.comm, sub_coords.data(), &r), "MPI_Cart_rank");
        if (ph.gather) {  // every rank's block, placed by its rank in the sub-communicator
          if (w.gathered.size() <= std::size_t(r)) w.gathered.resize(std::size_t(r) + 1);
          w.gathered[std::size_t(r)] = intersect(from.block(grid, q), w.block);
          return;
        }
        const box theirs = ph.layout.block(grid, q);
        if (q == m_comm->coords()) {
          for (std::size_t c = 0; c < my_chunks.size(); ++c) w.own[c] = intersect(my_chunks[c], w.block);
          return;
        }
        const bool shared = w.shared != sharing::none;
        const int node = shared ? node_rank(w.comm, r) : -1;
        for (std::size_t c = 0; c < my_chunks.size(); ++c) {
          part s{r, int(c), intersect(my_chunks[c], theirs), {}, send_total, node, theirs};
          if (s.where.size() == 0) continue;
          if (m_packed) send_total += s.where.size();
          else if (!shared) s.type = subarray_type<T>(s.where, from_mine);
          w.sends[c].push_back(std::move(s));
          ++messages;
        }
        const box their_block = from.block(grid, q);
        const std::vector<box> their_chunks = chunks_of(their_block, m_chunks[i - 1]);
        for (std::size_t c = 0; c < their_chunks.size(); ++c) {
          part g{r, int(c), intersect(their_chunks[c], w.block), {}, recv_total, node, their_block};
          if (g.where.size() == 0) continue;
          if (m_packed) recv_total += g.where.size();
          else if (!shared) g.type = subarray_type<T>(g.where, w.block);
          w.recvs.push_back(std::move(g));
        }
      });
      if (ph.gather) {  // allgatherv: the block, copied once; every block received, in rank order
        send_total = from_mine.size();
        for (const box& r : w.gathered) {
          w.recv_displs.push_back(int(recv_total * sizeof(T)));
          w.recv_counts.push_back(int(r.size() * sizeof(T)));
          recv_total += r.size();
        }
      }
      w.requests.assign(w.recvs.size() + messages, MPI_REQUEST_NULL);
      if (w.shared == sharing::read) build_source(w, from_mine);
      if (m_ranks.staged) {  // this rank's packed sends down, its receives up (the numbers differ by rank)
        exchange_step& st = std::get<exchange_step>(m_desc.steps[m_exchange_step_index[i]]);
        st.transfers = (send_total > 0 ? 1 : 0) + (recv_total > 0 ? 1 : 0);
        st.transfer_bytes = double((send_total + recv_total) * sizeof(T));
      }
      send_size = std::max(send_size, send_total);
      recv_size = std::max(recv_size, recv_total);
    }
    for (std::size_t i = 1; i < m_phases.size(); ++i) {
      if (m_own_written[i]) build_target(i);
      if (m_work[i].shared == sharing::pull && m_work[i].comm != MPI_COMM_NULL) tell_packed_parts(m_work[i]);
    }
    if (shares_memory()) {  // the ping-pong buffers, where the node's other ranks reach them
      check_mpi(MPI_Comm_rank(m_comm->node(), &m_node_rank), "MPI_Comm_rank");
      m_segments = node_segments(m_comm->node(), m_comm->get(), 2 * m_buffer_values * sizeof(T));
    }
    m_ranks.allocate(m_send, send_size);
    m_ranks.allocate(m_recv, recv_size);
    if (m_ranks.staged) {
      m_send_host.resize(send_size);
      m_recv_host.resize(recv_size);
    }
  }

  // The exchange into a phase: receives posted first, then every send (the parts read from the
  // block by their subarray types, or packed first), then this rank's own part copied while the
  // messages travel; the packed receives are unpacked when all have arrived.
  void exchange(phase_work& w, const box& from, const T* src, T* dst) {
    if (w.gather) {
      gather(w, from, src, dst);
      return;
    }
    post_receives(w, dst);
    m_ranks.synchronize();  // MPI reads what the device wrote
    for (std::size_t c = 0; c < w.sends.size(); ++c) send_chunk(w, c, from, src, dst);
    finish_exchange(w, dst);
  }

  void post_receives(phase_work& w, T* dst) {
    T* recv = m_ranks.staged ? m_recv_host.data() : m_ranks.data(m_recv);
    for (std::size_t p = 0; p < w.recvs.size(); ++p) {
      const part& g = w.recvs[p];
      if (m_packed)
        check_mpi(MPI_Irecv(recv + g.at, int(g.where.size() * sizeof(T)), MPI_BYTE, g.rank, g.tag, w.comm, &w.requests[p]),
                  "MPI_Irecv");
      else
        check_mpi(MPI_Irecv(dst, 1, g.type.get(), g.rank, g.tag, w.comm, &w.requests[p]), "MPI_Irecv");
    }
  }

  // Chunk c of the previous phase's block (at src, box `from`), solved: its parts sent (packed
  // first when packing), then its own part copied into dst while they travel.
  void send_chunk(phase_work& w, std::size_t c, const box& from, const T* src, T* dst) {
    const std::vector<part>& parts = w.sends[c];
    T* send = m_ranks.data(m_send);
    if (m_packed && !parts.empty()) {
      for (const part& s : parts) m_ranks.copy(s.where, from, src, s.where, send + s.at);
      m_ranks.synchronize();  // MPI reads what the device packed
      if (m_ranks.staged) {
        const part& end = parts.back();
        const std::size_t first = parts.front().at, values = end.at + end.where.size() - first;
        m_ranks.download(m_send_host.data() + first, send + first, values * sizeof(T));
      }
    }
    const T* mpi_send = m_ranks.staged ? m_send_host.data() : send;
    std::size_t r = w.recvs.size();
    for (std::size_t k = 0; k < c; ++k) r += w.sends[k].size();
    for (const part& s : parts) {
      ++m_sent_messages;
      m_sent_bytes += double(s.where.size() * sizeof(T));
      if (m_packed)
        check_mpi(MPI_Isend(mpi_send + s.at, int(s.where.size() * sizeof(T)), MPI_BYTE, s.rank, s.tag, w.comm,
                            &w.requests[r++]),
                  "MPI_Isend");
      else
        check_mpi(MPI_Isend(src, 1, s.type.get(), s.rank, s.tag, w.comm, &w.requests[r++]), "MPI_Isend");
    }
    m_ranks.copy(w.own[c], from, src, w.block, dst);
  }

  // Rank r of the sub-communicator comm, in this rank's node communicator.
  int node_rank(MPI_Comm comm, int r) const {
    MPI_Group group = MPI_GROUP_NULL, node = MPI_GROUP_NULL;
    check_mpi(MPI_Comm_group(comm, &group), "MPI_Comm_group");
    check_mpi(MPI_Comm_group(m_comm->node(), &node), "MPI_Comm_group");
    int n = MPI_UNDEFINED;
    const int translated = MPI_Group_translate_ranks(group, 1, &r, node, &n);
    MPI_Group_free(&group);
    MPI_Group_free(&node);
    check_mpi(translated, "MPI_Group_translate_ranks");
    if (n == MPI_UNDEFINED) throw error("kronex: an exchange within a node names a rank of another node");
    return n;
  }

  // Every message of the exchange done; the packed receives unpacked.
  void finish_exchange(phase_work& w, T* dst) {
    check_mpi(MPI_Waitall(int(w.requests.size()), w.requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    if (!m_packed) return;
    std::size_t received = 0;
    for (const part& g : w.recvs) received += g.where.size();
    T* recv = m_ranks.data(m_recv);
    if (m_ranks.staged && received > 0) m_ranks.upload(recv, m_recv_host.data(), received * sizeof(T));
    for (const part& g : w.recvs) m_ranks.copy(g.where, g.where, recv + g.at, w.block, dst);
  }

  // The gather fallback: every rank's block of the split mode, gathered whole (MPI_Allgatherv).
  void gather(phase_work& w, const box& from, const T* src, T* dst) {
    T* send = m_ranks.data(m_send);
    T* recv = m_ranks.data(m_recv);
    m_ranks.copy(from, from, src, from, send);
    m_ranks.synchronize();  // MPI reads what the device wrote
    const std::size_t send_bytes = from.size() * sizeof(T);
    const std::size_t recv_bytes = std::size_t(w.recv_displs.back() + w.recv_counts.back());
    T* mpi_send = send;
    T* mpi_recv = recv;
    if (m_ranks.staged) {
      m_ranks.download(m_send_host.data(), send, send_bytes);
      mpi_send = m_send_host.data();
      mpi_recv = m_recv_host.data();
    }
    m_sent_messages = send_bytes > 0 ? w.gathered.size() - 1 : 0;  // the block goes to every other rank of the group
    m_sent_bytes = double(m_sent_messages * send_bytes);
    check_mpi(MPI_Allgatherv(mpi_send, int(send_bytes), MPI_BYTE, mpi_recv, w.recv_counts.data(), w.recv_displs.data(),
                             MPI_BYTE, w.comm),
              "MPI_Allgatherv");
    if (m_ranks.staged) m_ranks.upload(recv, m_recv_host.data(), recv_bytes);
    for (std::size_t p = 0; p < w.gathered.size(); ++p) {
      const box& r = w.gathered[p];
      m_ranks.copy(r, r, recv + std::size_t(w.recv_displs[p]) / sizeof(T), w.block, dst);
    }
  }

  Ranks m_ranks;
  std::size_t m_streaming_min_bytes = SIZE_MAX;  // streams(): host_streaming_min_bytes() when compiled
  std::shared_ptr<cart_comm> m_comm;
  shape_t m_global;
  exchange_options m_layouts;  // where the plan starts and ends
  std::vector<exchange_phase> m_phases;
  std::vector<phase_work> m_work;
  plan_description m_desc;
  typename Ranks::buffer m_buffers[2];
  typename Ranks::buffer m_send, m_recv;   // packed messages
  std::vector<T> m_send_host, m_recv_host;  // staged exchanges only
  bool m_packed = false;        // exchanges pack and unpack (exchange_transport)
  std::size_t m_sent_messages = 0;  // the last exchange's messages and bytes from this rank
  double m_sent_bytes = 0;
  std::vector<step_range> m_local_steps;  // per phase: its local steps in m_desc.steps
  std::vector<exchange_step> m_exchange_steps;     // per phase: the exchange into it (planned)
  std::vector<std::size_t> m_exchange_step_index;  // per phase: its exchange's index in m_desc.steps
  std::vector<std::size_t> m_chunks;               // per phase: its chunks (pipeline_chunks)
  std::vector<sharing> m_sharing;                  // per phase: how the exchange into it shares memory
  std::vector<bool> m_own_written;                 // per phase: the phase before wrote the own part (writes_own_part)
  std::vector<bool> m_packs_parts;                 // ... and the peers' parts each on its own (packs_parts)
  node_segments m_segments;                        // shared memory: this node's ping-pong buffers
  int m_node_rank = 0;                             // this rank in the node communicator
  std::vector<factor_setup> m_setup;           // the setup lines before the local plans fill them
  std::vector<bool> m_diagonal;                    // per mode: a diagonal factor
  std::size_t m_buffer_values = 0;                 // each ping-pong buffer, in values
  std::string m_expression;                        // the operator, as printed
  // The solve across ranks (plan_split), its printed steps and setup line, and where it prints.
  std::optional<split_solve<T>> m_split;
  std::size_t m_split_axis = npos;
  lu_subst_step m_split_step;
  std::vector<step> m_split_before;  // modes run chunk by chunk before it
  exchange_step m_split_exchange;
  std::vector<std::pair<std::size_t, factor_setup>> m_split_setup;  // the setup lines of its modes
  std::size_t m_split_factor_bytes = 0;
  std::size_t m_split_step_index = 0;
  bool m_explaining = false;  // explain(): plan only
};

} // namespace kronex::detail
