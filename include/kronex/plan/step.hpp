#pragma once
// The closed set of step kinds a plan is made of. Each kind is a type holding only its own
// fields (on top of step_base, what every step has); `step` is their variant. A backend keeps its
// executable steps in a variant of the kinds it runs (host_step, device_step) and dispatches with
// std::visit over an overload set, so forgetting a kind is a compile error, and nothing
// dispatches on printed text. Printing is one visitor (plan.hpp).
#include <cstddef>
#include <string>
#include <type_traits>
#include <variant>

#include "../core/op.hpp"
#include "../core/shape.hpp"

namespace kronex {

// What a step does, as printed in the plan's first column.
enum class step_kind {
  copy,      // x = b, when every factor is skipped (identity) and x is not b
  scale,     // a diagonal factor: multiply each hyperplane along the mode by d_i (or 1/d_i)
  solve,     // a 1D solve along the mode for every line of the tensor
  apply,     // a 1D matrix-vector product along the mode for every line of the tensor
  exchange,  // distributed plans: an all-to-all that changes which axes are split across ranks
  combine,   // operator sums: y = a x + y (or y = a y) over the whole tensor
  project,   // pseudo-inverses: remove the components along a few rank-one tensors
};

inline const char* to_string(step_kind k) {
  switch (k) {
    case step_kind::copy: return "copy";
    case step_kind::scale: return "scale";
    case step_kind::solve: return "solve";
    case step_kind::apply: return "apply";
    case step_kind::exchange: return "exchange";
    case step_kind::combine: return "combine";
    case step_kind::project: return "project";
  }
  return "?";
}

// What every step has: where it acts, and its costs.
struct step_base {
  std::size_t mode = 0;
  long factor = -1;         // index of the factor (== mode) or -1 for copy and exchange steps
  op trans = op::none;
  shape_t view;             // the tensor as this step sees it: (lines before, n, lines after)
  shape_t view_strides;
  double flops = 0;         // real floating-point operations (complex multiply-add = 8)
  double bytes = 0;         // main-memory traffic estimate: read + write of the tensor
  long phase = -1;          // distributed plans: the phase whose local plan runs it (-1: none)
  // Operator sums and compositions: the factor's name when it is not `f<factor>` (the
  // eigenvectors "V0" of fast diagonalisation), and the part of the operator the step belongs
  // to ("term 1"), both printed when set.
  std::string factor_name;
  std::string part;
  // Host solves: the cost model's predicted seconds for the row program (lu_subst) and for GEMMs
  // with the dense inverse (gemm); printed as "model: ..." when set (>= 0).
  double model_subst_s = -1, model_gemm_s = -1;
};

// x = b. On the host a memcpy, on the device a device-to-device copy.
struct copy_step : step_base {
  bool on_device = false;
};

// A diagonal factor: each hyperplane along the mode times s_i.
struct scale_step : step_base {};

// Host: a banded or dense factor's LU, run as a row program (substitution) in panels.
struct lu_subst_step : step_base {
  // Runs slab by slab together with the next step (adjacent modes whose slab fits in cache):
  // this step reads the tensor, the next one writes it, and the slab between stays in cache.
  bool fused_with_next = false;
  // Runs on the tensor's rows in place (the first mode, rows short enough for cache), with the
  // next step (the last mode) interleaved in its forward sweep: a row sweep (row_sweep.hpp).
  bool interleaved_with_next = false;
  // Distributed: the mode is split across ranks and solved where its rows lie, each rank's
  // share in place on its block, the ranks in turn (the halo exchange after it).
  bool across_ranks = false;
};

// Host: y = op(A) x along the mode, A's entries as a row program, in panels; or, for a dense
// factor that is large enough (gemm), as BLAS GEMMs on the tensor itself (backends/host/gemm_apply.hpp).
struct matvec_step : step_base {
  bool dense = false;  // dense factor (dense_matvec) or band (band_matvec)
  bool gemm = false;   // a dense factor run as GEMMs (gemm), not as a row program
  bool fused_with_next = false;
};

// Host: a function_solver factor: the user's function on gathered contiguous lines.
struct function_step : step_base {};

// Device: one GEMM (or a strided batch of them) with the factor's dense matrix, op(A)^{-1} for a
// solve, op(A) for an apply. Host: a solve with the dense inverse (compile_options::solves), as
// `calls` GEMMs on the tensor itself (one for the last mode, one per slab otherwise; in place, in
// chunks of lines). A GEMM whose sizes exceed what one BLAS call takes (cuBLAS: int)
// is split into `calls` calls of at most `per_call` lines, slabs or packed columns each
// (backends/device/gemm_split.hpp).
struct gemm_step : step_base {
  enum class layout {
    last,     // the mode is the last one: lines are contiguous, gemm(N,N)
    first,    // the mode is the first one: gemm(N,T)
    batched,  // a middle mode: gemm_strided_batched(N,T) over the lines before it
  };
  layout how = layout::last;
  bool solve = true;
  std::size_t calls = 1;     // BLAS calls per run
  std::size_t per_call = 0;  // lines (last), slabs (first, batched) or columns of R (packed) per call
  bool packed = false;       // the lines after the mode exceed one call: blocks are packed into scratch
};

// Device: a mode that runs on the host (a function_solver factor): download, host plan of this
// mode alone, upload. Transfers are per run.
struct staged_step : step_base {
  std::size_t transfers = 2;
  double transfer_bytes = 0;
};

// Distributed: an exchange that moves the tensor to the next phase's layout.
struct exchange_step : step_base {
  // local_copy: keep one's part after a gather (no MPI); pairwise: every rank of the group sends
  // each other rank its part (MPI_Isend/MPI_Irecv), its own part copied locally; allgatherv: a
  // split mode gathered whole; halo: the few rows of its neighbours that a solve across ranks
  // (the step before, lu_subst across ranks) reads, sent rank to rank while it runs. A halo
  // exchange moves no block: the layout stays.
  enum class method { local_copy, pairwise, allgatherv, halo };
  method how = method::local_copy;
  std::string transport;    // pairwise: "shared memory" (within a node: no message; see read_by_next),
                            // "subarray" (MPI datatypes over the blocks) or "packed"
  std::string memory;       // where MPI reads and writes on device ranks, e.g. " (device memory)"
  std::string comm;         // the sub-communicator, e.g. "grid dims {0} (2 ranks)"
  std::size_t messages = 0;     // the most messages any rank sends
  double message_bytes = 0;     // the most bytes any rank sends
  double own_bytes = 0;         // this rank's own part, copied locally (never sent)
  long own_written_by = -1;     // shared memory, the return into x: the step that wrote the own
                                // part into x itself (then not copied here); -1: none
  bool parts_packed = false;    // ... and laid each peer's part out on its own in its buffer (the
                                // part's C order), so that the peer copies it in one run
  bool read_by_next = false;    // shared memory: no copy of its own; the next step reads each value
                                // of its operand where the peer that solved it holds it
  std::size_t chunks = 0;       // pipelined: the local work before it runs in (at most) this many
                                // chunks, each chunk's parts sent once it is solved (0: not pipelined)
  std::size_t transfers = 0;    // staged device exchanges: this rank's host<->device copies
  double transfer_bytes = 0;
};

// Operator sums: y = coef * x + y (accumulate: a term's result added in) or y = coef * y.
struct combine_step : step_base {
  bool accumulate = true;
  std::string coef;         // as printed, e.g. "0.5"
};

// Fast diagonalisation: each entry divided by its eigenvalue sum, computed from the D
// eigenvalue vectors (no tensor of them is stored); entries whose sum is dropped (pseudo-
// inverse) become 0.
struct eigen_scale_step : step_base {
  std::size_t terms = 0;
  std::size_t dropped = 0;
};

// Pseudo-inverses: x -= N (N^H N)^{-1} N^H x for the k rank-one tensors N spanning the dropped
// eigenvectors (in the eigenvector basis, or in the original one).
struct project_step : step_base {
  std::size_t rank = 0;
  bool eigenbasis = false;
  std::size_t transfers = 0;  // distributed device ranks, staged: the dot products to the host and back
  double transfer_bytes = 0;
};

// Operator expressions: an operator with no Kronecker structure (a sparse_operator: its CSR
// product; a matrix_free: the application's function), applied to the whole tensor.
struct flat_step : step_base {
  std::string method;       // "csr_spmv", "matrix_free"
  std::string name;         // the operator, e.g. "sparse_operator(7,6,8)^T"
};

using step = std::variant<copy_step, scale_step, lu_subst_step, matvec_step, function_step, gemm_step, staged_step,
                          exchange_step, combine_step, eigen_scale_step, project_step, flat_step>;

// std::visit with a set of lambdas: visit(overloaded{[](const a&) {...}, [](const b&) {...}}, v).
template <class... F>
struct overloaded : F... {
  using F::operator()...;
};
template <class... F>
overloaded(F...) -> overloaded<F...>;

// The fields every step has, of a step or of a backend's own variant of step kinds.
template <class... K>
const step_base& step_info(const std::variant<K...>& s) {
  return std::visit([](const auto& k) -> const step_base& { return k; }, s);
}
template <class... K>
step_base& step_info(std::variant<K...>& s) {
  return std::visit([](auto& k) -> step_base& { return k; }, s);
}

inline step_kind kind_of(const step& s) {
  return std::visit(overloaded{[](const copy_step&) { return step_kind::copy; },
                               [](const scale_step&) { return step_kind::scale; },
                               [](const lu_subst_step&) { return step_kind::solve; },
                               [](const matvec_step&) { return step_kind::apply; },
                               [](const function_step&) { return step_kind::solve; },
                               [](const gemm_step& g) { return g.solve ? step_kind::solve : step_kind::apply; },
                               [](const staged_step&) { return step_kind::solve; },
                               [](const exchange_step&) { return step_kind::exchange; },
                               [](const combine_step&) { return step_kind::combine; },
                               [](const eigen_scale_step&) { return step_kind::scale; },
                               [](const project_step&) { return step_kind::project; },
                               [](const flat_step&) { return step_kind::apply; }},
                    s);
}

inline const char* to_string(exchange_step::method m) {
  switch (m) {
    case exchange_step::method::local_copy: return "local_copy";
    case exchange_step::method::pairwise: return "pairwise";
    case exchange_step::method::allgatherv: return "allgatherv";
    case exchange_step::method::halo: return "halo";
  }
  return "?";
}

// The method as printed: lu_subst, band_matvec, gemm, pairwise packed (device memory), ...; a step of a
// distributed plan's local work ends with " (phase i)".
inline std::string step_method(const step& s) {
  std::string m = std::visit(
      overloaded{[](const copy_step& c) -> std::string { return c.on_device ? "copy" : "memcpy"; },
                 [](const scale_step&) -> std::string { return "scale"; },
                 [](const lu_subst_step& l) -> std::string { return l.across_ranks ? "lu_subst across ranks" : "lu_subst"; },
                 [](const matvec_step& m) -> std::string {
                   return m.gemm ? "gemm" : m.dense ? "dense_matvec" : "band_matvec";
                 },
                 [](const function_step&) -> std::string { return "function"; },
                 [](const gemm_step& g) -> std::string {
                   std::string name = g.how == gemm_step::layout::batched && !g.packed ? "gemm_strided_batched" : "gemm";
                   if (g.calls > 1) name += " x" + std::to_string(g.calls);
                   return g.packed ? name + " packed" : name;
                 },
                 [](const staged_step&) -> std::string { return "stage_through_host"; },
                 [](const exchange_step& e) -> std::string {
                   return to_string(e.how) + (e.transport.empty() ? "" : " " + e.transport) + e.memory;
                 },
                 [](const combine_step& c) -> std::string {
                   return c.accumulate ? "axpy a=" + c.coef : "scale a=" + c.coef;
                 },
                 [](const eigen_scale_step& e) -> std::string {
                   std::string m = "eigen_scale terms=" + std::to_string(e.terms);
                   return e.dropped ? m + " dropped=" + std::to_string(e.dropped) : m;
                 },
                 [](const project_step& p) -> std::string {
                   return std::string(p.eigenbasis ? "rank_one_projection (eigenbasis)" : "rank_one_projection") +
                          " k=" + std::to_string(p.rank);
                 },
                 [](const flat_step& f) -> std::string { return f.method + " " + f.name; }},
      s);
  const long phase = step_info(s).phase;
  return phase >= 0 && kind_of(s) != step_kind::exchange ? m + " (phase " + std::to_string(phase) + ")" : m;
}

inline bool fused_with_next(const step& s) {
  return std::visit(overloaded{[](const lu_subst_step& k) { return k.fused_with_next; },
                               [](const matvec_step& k) { return k.fused_with_next; },
                               [](const auto&) { return false; }},
                    s);
}

inline bool interleaved_with_next(const step& s) {
  const auto* k = std::get_if<lu_subst_step>(&s);
  return k && k->interleaved_with_next;
}

// Host<->device copies the step makes each run (staged steps, staged exchanges, staged
// projection reductions).
inline std::size_t step_transfers(const step& s) {
  return std::visit(overloaded{[](const staged_step& k) { return k.transfers; },
                               [](const exchange_step& k) { return k.transfers; },
                               [](const project_step& k) { return k.transfers; },
                               [](const auto&) { return std::size_t(0); }},
                    s);
}
inline double step_transfer_bytes(const step& s) {
  return std::visit(overloaded{[](const staged_step& k) { return k.transfer_bytes; },
                               [](const exchange_step& k) { return k.transfer_bytes; },
                               [](const project_step& k) { return k.transfer_bytes; },
                               [](const auto&) { return 0.0; }},
                    s);
}

// Widens a backend's own step variant (a subset of the kinds) to a step.
template <class... K>
step to_step(const std::variant<K...>& v) {
  return std::visit([](const auto& k) { return step(k); }, v);
}

} // namespace kronex
