#pragma once
// compile_options: what a user may set when compiling a plan (kronex::compile(expr, like, opts)).
// The defaults are what a plain compile(expr, like) and the lazy forms use.
#include <cstddef>
#include <memory>

namespace kronex {

class factor_store;  // plan/factor_store.hpp

// How a host plan solves along a mode with a banded or dense factor.
enum class solve_method {
  automatic,     // the planner's cost model picks the one it predicts faster, mode by mode
  substitution,  // the LU's row program (forward and back substitution), run in panels
  dense_inverse  // op(A)^{-1} formed once at compile time from the LU, then GEMMs (host BLAS)
};

// How a distributed plan's exchanges move each peer's part of a block.
enum class exchange_transport {
  automatic,  // host ranks: where every group of ranks an exchange runs in lies on one node, no
              // MPI message: the blocks lie in shared memory, and the next step reads the parts
              // where the peers solved them, or the ranks copy them straight between their blocks
              // (printed "shared memory"; fuse_shared_exchanges); elsewhere subarray. Device
              // ranks: packed (the faster there: a CUDA-aware MPI would copy each run of a
              // subarray on its own)
  subarray,   // MPI derived datatypes (subarrays) over the blocks: MPI reads each part from the
              // solved block and writes it into the next one; kronex makes no pack or unpack pass
  packed      // each part copied into a contiguous send buffer, and out of the receive buffer
};

struct compile_options {
  // A solved banded or dense factor whose reciprocal 1-norm condition number estimate is below
  // this is refused as singular (singular_factor, naming the mode, the estimate and this
  // threshold). Negative, the default: n eps of the value type, n the factor's size (a solve
  // that loses every digit). 0 refuses only factors whose estimate is 0 or not finite (a pivot
  // so small that a solve overflows), besides exactly zero pivots, which are always refused.
  double min_rcond = -1;

  // Check every entry of every factor for NaN and +-Inf in the check phase, before anything is
  // factored: a non-finite entry throws invalid_factor naming the mode, the entry and its
  // value. Off by default: it reads every stored entry once. Operands are checked with
  // kronex::check_finite (factors/finite.hpp).
  bool check_finite = false;

  // Setup work shared with the other operators compiled with the same store (factor_store in
  // plan/factor_store.hpp): each banded or dense factor is factored once, and its compiled forms
  // built or uploaded once, however many operators use it. None by default: every compile
  // factors its own factors.
  std::shared_ptr<factor_store> store;

  // Threads a host plan runs its steps on (panels of lines and slabs of fused modes are split
  // between them; the result is the same bits for any count). 0, the default: OpenMP's
  // omp_get_max_threads(), which follows OMP_NUM_THREADS, for tensors of at least
  // host_parallel_min_values values, one thread for smaller ones (starting threads would cost
  // more than it saves); a count set here is used at every size. kronex built without OpenMP
  // runs on one thread whatever this says.
  std::size_t threads = 0;

  // Host solves with banded and dense factors, mode by mode (solve_method). automatic, the
  // default, compares the cost model's predicted times (docs/performance.md has the model and
  // its measured crossover) and prints both in the plan. A dense inverse costs n^2 values per
  // factor and its solve's error grows with the condition number like the substitution's; it
  // pays for small n, wide bands and short lines. Device plans always use dense inverses; other
  // factor kinds (diagonal, identity, function) ignore this.
  solve_method solves = solve_method::automatic;

  // Distributed plans (MPI): how exchanges move each peer's part (exchange_transport). A rank's
  // own part never goes through MPI whichever is chosen: it is copied locally.
  exchange_transport exchanges = exchange_transport::automatic;

  // Distributed plans (MPI): pipelining. When a phase's local work leaves axis 0 alone (solves
  // and scales only other modes) and the exchange after it hands MPI the blocks themselves
  // (subarray transport, host ranks: across nodes by default; shared-memory exchanges are not
  // pipelined), the work runs in up to this many chunks along axis 0, and
  // each chunk's parts are sent as soon as it is solved, while the later chunks are solved; the
  // plan prints the exchange as pipelined. 1: never (the whole work, then the exchange). 0, the
  // default: distributed_pipeline_chunks chunks, fewer so that each holds at least
  // distributed_pipeline_min_chunk_bytes of the largest block (small tensors: none). The result
  // is the same bits for any count. Every rank must pass the same value (as for every option).
  std::size_t exchange_chunks = 0;

  // Distributed plans, shared-memory exchanges (exchange_transport::automatic within a node):
  // where the phase after an exchange solves or scales something, its first step reads each
  // value straight from the block of the rank that solved it, so the exchange itself copies
  // nothing (printed "read by step <k>"); a first step that runs as GEMMs copies its operand
  // together first. false: every shared-memory exchange copies the parts into the next block
  // first (one more pass over the block; for comparisons). The result is the same bits either way.
  bool fuse_shared_exchanges = true;

  // Distributed plans, host ranks: a grid that splits one axis whose factor there is a band
  // solved by substitution (the host's choice for the whole tensor) runs that solve where the
  // rows lie: each rank runs its share of the substitution in place on its block, the ranks in
  // turn, and only the band's few neighbouring rows travel (printed "lu_subst across ranks", then
  // a "halo" exchange), pipelined in chunks of the lines (exchange_chunks; 0:
  // distributed_split_chunks, or on a split last axis whose previous mode runs chunk by chunk
  // with it, a chunk per slab of that mode's axis), instead of two exchanges of whole blocks. A factor whose
  // substitution swaps rows of two ranks, whose band wraps around the axis in its factors
  // (periodic factors folded for size), or whose halo would not be smaller than a block
  // (periodic factors' corners reach every rank) keeps the exchanges. false: always the
  // exchanges (for comparisons). The result is the same bits either way.
  bool split_solves_in_place = true;
};

// What compile_options::exchange_chunks = 0 pipelines: at most this many chunks ...
inline constexpr std::size_t distributed_pipeline_chunks = 4;
// ... of at least this many bytes each.
inline constexpr std::size_t distributed_pipeline_min_chunk_bytes = std::size_t(1) << 18;

// What compile_options::exchange_chunks = 0 pipelines a solve across ranks in: at most this many
// chunks of the lines (fewer where a rank's block has fewer slabs and column blocks).
inline constexpr std::size_t distributed_split_chunks = 32;

// The smallest tensor (in values) a host step splits between threads.
inline constexpr std::size_t host_parallel_min_values = std::size_t(1) << 15;

} // namespace kronex
