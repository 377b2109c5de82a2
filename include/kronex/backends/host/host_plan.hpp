#pragma once
// host_plan<T>: a compiled host plan, built in the four phases every backend has:
//   check        check_host(): shapes and the schedule's rules (function solvers);
//   plan         plan_host(): the steps, their costs, the workspace sizes, the printable
//                description; no factorization and no allocation of the workspace (explain
//                stops here, with estimates where the numbers depend on the factorization);
//   instantiate  the host_plan constructor: factors every 1D factor once (gbtrf/getrf), turns
//                the factors into row programs (or copies a dense apply's matrix for its GEMMs),
//                allocates the workspace, and replaces the estimates by the exact numbers;
//   run          run(): only walks the steps: no allocation, no factorization, safe when x
//                aliases b. Panel steps, fused slab pairs, scalings and copies are split between
//                the plan's threads (host_threads.hpp; one workspace each); the bits of the
//                result do not depend on how many.
// One host_plan must not run on two threads at once (it owns its workspace); copies are
// independent.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "../../core/value_traits.hpp"
#include "../../factors/finite.hpp"
#include "../../plan/factor_store.hpp"
#include "../../plan/operator_desc.hpp"
#include "../../plan/plan.hpp"
#include "../../plan/schedule.hpp"
#include "cache_aligned.hpp"
#include "cost_model.hpp"
#include "gathered_tensor.hpp"
#include "scattered_output.hpp"
#include "gemm_apply.hpp"
#include "host_threads.hpp"
#include "lu_factors.hpp"
#include "row_kernels.hpp"
#include "row_program.hpp"
#include "row_sweep.hpp"
#include "streaming_stores.hpp"
#include "tiles.hpp"

namespace kronex::detail {

// The step kinds the host runs.
using host_step = std::variant<copy_step, scale_step, lu_subst_step, matvec_step, function_step, gemm_step>;

// The result of the plan phase: the steps (parallel to desc.steps) and the workspace sizes.
template <class T>
struct host_blueprint {
  plan_description desc;
  std::vector<host_step> steps;
  std::vector<std::size_t> slab_group;  // per fused first step: slabs processed at once
  std::vector<std::size_t> sweep_rows;  // per row sweep's first step: rows of a block (row_sweep.hpp)
  // One panel; the panel buffer holds `panels` of them, or an in-place GEMM chunk if larger.
  std::size_t panel_values = 0, panels = 0, gemm_values = 0, slab_values = 0, line_values = 0;
  std::size_t threads = 1;  // each has its own panel buffer and slab buffer
  // Per thread, in whole cache lines (cache_aligned.hpp), so each thread's buffers start on one.
  std::size_t panel_buffer_values() const { return whole_cache_lines<T>(std::max(panels * panel_values, gemm_values)); }
  std::size_t slab_buffer_values() const { return whole_cache_lines<T>(slab_values); }
};

template <class T>
struct host_costs {
  static constexpr std::size_t V = strip_width<T>;
  // Real flops per operation: a complex multiply-add is 8, a complex multiply 6.
  static constexpr double madd_flops = value_traits<T>::is_complex ? 8.0 : 2.0;
  static constexpr double mul_flops = value_traits<T>::is_complex ? 6.0 : 1.0;

  // Flops of a row program over `lines` lines. A complex program with real coefficients runs on
  // reals (row_program::real_part): a real coefficient times a complex value is 2 flops, and a
  // multiply-add 4.
  static double program_flops(double lines, std::size_t madds, std::size_t multiplies, bool real_coefficients) {
    const bool halved = value_traits<T>::is_complex && real_coefficients;
    return lines * (double(madds) * (halved ? 4.0 : madd_flops) + double(multiplies) * (halved ? 2.0 : mul_flops));
  }
};

// Solve and apply steps with a row program run in panels; function solves and GEMMs do not.
inline bool is_panel_step(const host_step& s) {
  if (const auto* m = std::get_if<matvec_step>(&s)) return !m->gemm;
  return std::holds_alternative<lu_subst_step>(s);
}

// Lines of a mode gathered per call of a function solver.
template <class T>
std::size_t function_lines(std::size_t n) {
  return std::max<std::size_t>(1, (std::size_t(64) << 10) / (n * sizeof(T)));
}

// Check phase.
template <class T>
void check_host(const operator_desc<T>& d, const shape_t& shape) {
  check_operand_shape(d, shape, d.inverse ? "right-hand side" : "operand");
  schedule(d);  // throws for function solvers used in an apply or transposed
  if (d.options.check_finite)
    for (std::size_t k = 0; k < d.factors.size(); ++k) check_factor_finite(d.factors[k], k);
}

// Two consecutive panel steps on adjacent modes k, k+1 whose slab (n_k x n_k+1 x R_k+1 values,
// contiguous for each index of the modes before) has at most fused_slab_bytes run slab by slab:
// the tensor is read and written once for both, instead of twice; the second step finds the
// slab in L2, or L3 where L2 is smaller. (One thread on a Zen 5 EPYC, 1 MiB of L2: fusing slabs
// of 576 KiB to 1 MiB, complex<double> 192^3 and 256^3 and double 320^3, made those solves
// 10-31 % faster.) Small slabs are taken as many at once as fit in slab_group_bytes, so they
// still fill whole strips; larger groups were slower (complex<float> 192^3: groups of three
// 288 KiB slabs instead of one, 18 %). Only the pairing and grouping are decided here.
inline constexpr std::size_t fused_slab_bytes = std::size_t(1) << 20;
inline constexpr std::size_t slab_group_bytes = std::size_t(512) << 10;

// Whether steps a, b (in this order) on adjacent modes may run as a fused pair if both run in
// panels.
template <class T>
bool fusable_modes(const step_base& a, const step_base& b) {
  return b.mode == a.mode + 1 && a.view[0] != 1 && a.view[1] * a.view[2] * sizeof(T) <= fused_slab_bytes;
}

// The slabs of a fused pair's first step (view (L, n, R)) processed at once.
template <class T>
std::size_t slab_group_of(const shape_t& view) {
  return std::min(view[0], std::max<std::size_t>(1, slab_group_bytes / (view[1] * view[2] * sizeof(T))));
}

template <class T>
void fuse_adjacent_modes(host_blueprint<T>& bp) {
  const double size = double(product(bp.desc.shape));
  bp.slab_group.assign(bp.steps.size(), 0);
  for (std::size_t s = 0; s + 1 < bp.steps.size(); ++s) {
    const step_base &a = step_info(bp.steps[s]), &b = step_info(bp.steps[s + 1]);
    const std::size_t slab = a.view[1] * a.view[2];
    if (!is_panel_step(bp.steps[s]) || !is_panel_step(bp.steps[s + 1]) || !fusable_modes<T>(a, b)) continue;
    for (std::size_t t : {s, s + 1}) {
      std::visit(overloaded{[&](lu_subst_step& k) { k.bytes = size * sizeof(T); k.fused_with_next = t == s; },
                            [&](matvec_step& k) { k.bytes = size * sizeof(T); k.fused_with_next = t == s; },
                            [](auto&) {}},
                 bp.steps[t]);  // one read and one write of the tensor for the pair
    }
    bp.slab_group[s] = slab_group_of<T>(a.view);
    // A substitution works in place on the group in x; an apply needs a buffer for it (and so
    // does a substitution into a scattered output: host_plan::reserve_scattered_output).
    if (std::holds_alternative<matvec_step>(bp.steps[s]))
      bp.slab_values = std::max(bp.slab_values, bp.slab_group[s] * slab);
    ++s;
  }
}

// Which substitution steps run as GEMMs with the dense inverse instead (solve_method), and their
// conversion: each step is decided by its model (cost_model.hpp), then a pair of adjacent modes
// that would run fused as substitutions (one pass over the tensor for both) is kept so when that
// costs less than the choices made one by one (solve_cost_model::fused_pair_saving).
template <class T>
void choose_solve_methods(host_blueprint<T>& bp, solve_method how, const std::vector<std::size_t>& program_bytes) {
  using C = host_costs<T>;
  const std::size_t count = bp.steps.size();
  const double size = double(product(bp.desc.shape));
  std::vector<char> gemm(count, 0);
  auto prediction = [&](std::size_t s) {
    const step_base& b = step_info(bp.steps[s]);
    return solve_prediction{b.model_subst_s, b.model_gemm_s};
  };
  auto substitution = [&](std::size_t s) { return std::holds_alternative<lu_subst_step>(bp.steps[s]); };
  for (std::size_t s = 0; s < count; ++s)
    gemm[s] = substitution(s) && use_dense_inverse(how, prediction(s)) &&
              gemm_sizes_fit(step_info(bp.steps[s]).view[1], step_info(bp.steps[s]).view[2]);
  if (how == solve_method::automatic) {
    for (std::size_t s = 0; s + 1 < count; ++s) {
      if (!substitution(s) || !substitution(s + 1) || !(gemm[s] || gemm[s + 1]) ||
          !fusable_modes<T>(step_info(bp.steps[s]), step_info(bp.steps[s + 1])))
        continue;
      const solve_prediction a = prediction(s), b = prediction(s + 1);
      const double chosen = (gemm[s] ? a.gemm_s : a.subst_s) + (gemm[s + 1] ? b.gemm_s : b.subst_s);
      const double fused = a.subst_s + b.subst_s - solve_cost_model<T>::fused_pair_saving *
                                                       solve_cost_model<T>::move_s * size * double(sizeof(T));
      if (fused <= chosen) gemm[s] = gemm[s + 1] = 0;
    }
  }
  for (std::size_t s = 0; s < count; ++s) {
    if (!gemm[s]) continue;
    const lu_subst_step st = std::get<lu_subst_step>(bp.steps[s]);
    const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
    gemm_step g;
    static_cast<step_base&>(g) = st;
    g.solve = true;
    g.how = R == 1 ? gemm_step::layout::last : gemm_step::layout::first;
    g.calls = R == 1 ? 1 : L;
    g.per_call = R == 1 ? L : 1;
    g.flops = size * double(n) * C::madd_flops;
    factor_setup& fs = bp.desc.setup[st.mode];
    fs.method += ", dense inverse";
    fs.result += message(", inverse ", n, "x", n);
    bp.desc.factor_bytes += n * n * sizeof(T);
    bp.desc.factor_bytes -= program_bytes[s];
    bp.gemm_values = std::max(bp.gemm_values, gemm_buffer_values<T>(L, n, R));
    bp.steps[s] = g;
  }
}

// A substitution on the first mode (L = 1) directly followed by one on the last mode (R = 1) of
// the same tensor runs as a row sweep (row_sweep.hpp) when the first mode's rows hold at least V
// values and are short enough to stay in cache, and the tensor has at least row_sweep_min_bytes.
// The last mode is solved in blocks of whole rows that fill at least one strip of its lines. The
// steps move the tensor twice, as apart, so their bytes stay. A sweep runs on one thread; on more,
// the two steps run apart (panel walks, split between the threads) in the sweep's order, the last
// mode first, so that the bits of the result do not depend on the thread count.
template <class T>
void sweep_rows(host_blueprint<T>& bp) {
  constexpr std::size_t V = strip_width<T>;
  bp.sweep_rows.assign(bp.steps.size(), 0);
  for (std::size_t s = 0; s + 1 < bp.steps.size(); ++s) {
    auto* a = std::get_if<lu_subst_step>(&bp.steps[s]);
    const auto* b = std::get_if<lu_subst_step>(&bp.steps[s + 1]);
    if (!a || !b || bp.slab_group[s] > 0 || (s > 0 && bp.slab_group[s - 1] > 0)) continue;
    const std::size_t n = a->view[1], R = a->view[2];
    const bool shape = a->view[0] == 1 && b->view[2] == 1 && b->mode > a->mode && b->view[0] * b->view[1] == n * R;
    if (!shape || R < V || R * sizeof(T) > row_sweep_max_row_bytes() || n * R * sizeof(T) < row_sweep_min_bytes) continue;
    if (bp.threads > 1) {
      std::swap(bp.steps[s], bp.steps[s + 1]);
    } else {
      const std::size_t lines_per_row = R / b->view[1];
      bp.sweep_rows[s] = std::max<std::size_t>(1, (V + lines_per_row - 1) / lines_per_row);
      a->interleaved_with_next = true;
    }
    ++s;
  }
}

// Plan phase (after the check): what the host will run and what it costs. Reads the factors'
// entries only to count an apply's nonzeros; factors nothing and allocates no workspace.
template <class T>
host_blueprint<T> plan_host(const operator_desc<T>& d, const shape_t& shape) {
  using C = host_costs<T>;
  check_host(d, shape);
  host_blueprint<T> bp;
  plan_description& desc = bp.desc;
  desc.backend = "host";
  desc.value_type = value_traits<T>::name;
  desc.expression = d.text();
  desc.shape = shape;
  desc.setup = skipped_setup(d);
  const double size = double(product(shape));
  std::vector<std::size_t> program_bytes;  // per substitution step: its row program's bytes
  for (const auto& t : schedule(d)) {
    const factor_view<T>* f = t.kind == task_kind::copy ? nullptr : &d.factors[t.mode];
    factor_setup& fs = desc.setup[t.mode];
    switch (t.kind) {
      case task_kind::copy:
        bp.steps.push_back(make_step<copy_step>(t, d.trans, shape, sizeof(T)));
        break;
      case task_kind::scale: {
        auto st = make_step<scale_step>(t, d.trans, shape, sizeof(T));
        st.flops = size * C::mul_flops;
        fs.method = "scale";
        desc.factor_bytes += f->n * sizeof(T);
        bp.steps.push_back(st);
        break;
      }
      case task_kind::solve:
        if (f->kind == factor_kind::function) {
          auto st = make_step<function_step>(t, d.trans, shape, sizeof(T));  // flops unknown: the user's
          fs.method = "function";
          if (st.view[2] > 1)
            bp.line_values = std::max(bp.line_values, f->n * std::min(st.view[2], function_lines<T>(f->n)));
          bp.steps.push_back(st);
        } else {
          auto st = make_step<lu_subst_step>(t, d.trans, shape, sizeof(T));
          const band_layout l = f->kind == factor_kind::dense ? band_layout{} : layout_for_lapack(*f);
          const lu_estimate e = l.folded ? estimate_lu(make_view<T>(fold(*f, l.kl))) : estimate_lu(*f);
          const bool real = real_entries(*f);
          const program_size p = solve_program_size<T>(e, f->n, d.trans, real);
          fs.method = f->kind == factor_kind::dense ? std::string("getrf")
                                                    : message("gbtrf kl=", l.kl, " ku=", l.ku, l.folded ? " folded" : "");
          fs.result = message("L nnz=", e.nnz_lower, " U nnz=", e.nnz_upper, " (estimate: no swaps)");
          const solve_prediction model = solve_cost_model<T>::predict(st.view[0], st.view[1], st.view[2], p.madds, real);
          st.model_subst_s = model.subst_s;
          st.model_gemm_s = model.gemm_s;
          st.flops = C::program_flops(size / double(f->n), p.madds, p.multiplies, real);
          desc.factor_bytes += p.bytes;
          program_bytes.resize(bp.steps.size() + 1, 0);
          program_bytes.back() = p.bytes;
          bp.steps.push_back(st);
        }
        break;
      case task_kind::apply: {
        auto st = make_step<matvec_step>(t, d.trans, shape, sizeof(T));
        const program_size p = apply_program_size(*f);
        st.dense = f->kind == factor_kind::dense;
        st.gemm = use_gemm(st.dense, p.madds, st.view[0], st.view[1], st.view[2]);
        if (st.gemm) {
          // All n^2 entries count, zeros too; an in-place run needs a chunk buffer.
          fs.method = "gemm";
          st.flops = size * double(f->n) * C::madd_flops;
          desc.factor_bytes += f->n * f->n * sizeof(T);
          bp.gemm_values = std::max(bp.gemm_values, gemm_buffer_values<T>(st.view[0], st.view[1], st.view[2]));
          bp.steps.push_back(st);
          break;
        }
        fs.method = "matvec";
        fs.result = message("nnz=", p.madds);
        st.flops = C::program_flops(size / double(f->n), p.madds, p.multiplies, real_entries(*f));
        desc.factor_bytes += p.bytes;
        bp.steps.push_back(st);
        break;
      }
    }
  }
  program_bytes.resize(bp.steps.size(), 0);
  choose_solve_methods(bp, d.options.solves, program_bytes);
  fuse_adjacent_modes(bp);
  // One panel shared by all steps, sized for the largest; a second (output) panel when an
  // apply step runs as a row program; scale and copy steps need none. GEMM steps use the same
  // buffer for their in-place chunks (never at the same time as a panel).
  std::size_t panel = 0;
  bool out_panel = false;
  for (const host_step& s : bp.steps) {
    const step_base& st = step_info(s);
    if (!is_panel_step(s)) continue;
    const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
    panel = std::max(panel, panel_values<T>(n, R, strips_per_panel<T>(n, L * R, R)));
    out_panel = out_panel || std::holds_alternative<matvec_step>(s);
  }
  bp.panel_values = panel;
  bp.panels = out_panel ? 2 : 1;
  bp.threads = host_threads_for(d.options.threads, product(shape));
  sweep_rows(bp);
  desc.threads = bp.threads;
  desc.workspace_bytes = (bp.threads * (bp.panel_buffer_values() + bp.slab_buffer_values()) + bp.line_values) * sizeof(T);
  for (const host_step& s : bp.steps) desc.steps.push_back(to_step(s));
  return bp;
}

template <class T>
class host_plan {
  using C = host_costs<T>;
  static constexpr std::size_t V = C::V;

public:
  using value_type = T;

  // Check, plan and instantiate.
  host_plan(const operator_desc<T>& d, const shape_t& shape) : host_plan(d, plan_host(d, shape)) {}

  // Instantiate a planned blueprint: d must be the description it was planned from.
  host_plan(const operator_desc<T>& d, host_blueprint<T> bp);

  // Check and plan only: the description explain() prints.
  static plan_description explain(const operator_desc<T>& d, const shape_t& shape) { return plan_host(d, shape).desc; }

  const plan_description& description() const noexcept { return m_desc; }
  const shape_t& shape() const noexcept { return m_shape; }

  // The row program step s runs (a substitution), for a plan that runs it elsewhere: a
  // distributed solve across ranks (split_solve.hpp).
  std::shared_ptr<const row_program<T>> solve_program_of(std::size_t s) const {
    if (s >= m_desc.steps.size() || !std::holds_alternative<lu_subst_step>(m_desc.steps[s]))
      throw error("kronex: internal error: a host plan step without a substitution was asked for its program");
    return m_programs[m_payload[s]];
  }

  // Program p on rows `stride` values apart from `base`, in place, `blocks` blocks of
  // strip_width<T> columns (run_solve_rows): the kernels these plans run, so that the same
  // operations give their bits (where a library compiles the plans, its instantiation of them,
  // whatever the caller's compiler flags).
  static void solve_rows(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride);
  // Program p in place on `blocks` strips of V columns, rows `stride` apart, strips `gap` apart
  // (run_solve_blocks: the last mode's gathered strips, two chains in flight); each operation
  // prefetches the next lines of `ahead` where given (what the caller reads next).
  static void solve_blocks(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride, std::size_t gap,
                           prefetch_stream* ahead = nullptr);
  // Program p in place on a slab in cache, n rows of R values, R apart (a fused pair's first
  // mode): the slab is in cache, so the program runs on its rows in blocks of V columns
  // (run_solve_blocks), no gather needed. When all rows start at the same offset in a cache
  // line, the blocks start on a line (cache_aligned.hpp says why); the columns before the first
  // block and after the last go through `strip` (n * V values), zero-padded.
  static void solve_slab(const row_program<T>& p, T* slab, std::size_t n, std::size_t R, T* strip);

  // x = plan(b) on C-order arrays of shape(); x may equal b.
  void run(const T* b, T* x);

  // x = plan(b) where b is a gathered tensor of shape() (gathered_tensor.hpp): the first step
  // reads each value where b's pieces hold it, as it would read an array; x must not overlap
  // them. A first step that runs as GEMMs (BLAS reads one array) copies b into x first.
  void run(const gathered_tensor<T>& b, T* x);

  // x = plan(b) written into a scattered output of shape() (scattered_output.hpp): the steps
  // before the last piece run in place in x's home, and the last piece writes each value where
  // x's cells put it; x's home and cells must not overlap b. Only plans whose last piece runs in
  // panels can (scatters_output(): a substitution or an apply by row program, alone or as the
  // second step of a fused pair); others throw kronex::error.
  void run(const T* b, const scattered_output<T>& x);
  void run(const gathered_tensor<T>& b, const scattered_output<T>& x);

  // Whether a plan of this description can write a scattered output: its last step runs in
  // panels (is_panel_step) and is not the second of a row sweep.
  static bool scatters_output(const plan_description& d) {
    if (d.steps.empty()) return false;
    const step& last = d.steps.back();
    const bool panels = std::holds_alternative<lu_subst_step>(last) ||
                        (std::holds_alternative<matvec_step>(last) && !std::get<matvec_step>(last).gemm);
    return panels && !(d.steps.size() > 1 && interleaved_with_next(d.steps[d.steps.size() - 2]));
  }
  bool scatters_output() const { return scatters_output(m_desc); }

  // Whether a scattered run of a plan of this description (scatters_output) is one piece: one
  // step, or one fused pair (run_scattered). It then reads only its input and its own buffers,
  // never the output's home, which may hold the cells anywhere.
  static bool scatters_in_one_piece(const plan_description& d) {
    return scatters_output(d) && (d.steps.size() == 1 || (d.steps.size() == 2 && fused_with_next(d.steps.front())));
  }

  // The workspace a scattered run adds (reserve_scattered_output): a last fused pair whose first
  // step is a substitution works in a slab buffer per thread instead of in place (run_piece).
  static std::size_t scattered_workspace_bytes(const plan_description& d) {
    return std::max<std::size_t>(d.threads, 1) * scattered_slab_values(d) * sizeof(T);
  }

  // Allocates that workspace (once; run() into a scattered output calls it too, so that a caller
  // who runs such a plan repeatedly can allocate at compile time instead).
  void reserve_scattered_output() {
    const std::size_t stride = scattered_slab_values(m_desc);
    if (stride <= m_slab_stride) return;
    m_slab_stride = stride;
    m_slab.assign(m_threads * m_slab_stride, T(0));
  }

private:
  // One thread's slab buffer for scattered runs, in values: a last fused pair whose first step is
  // a substitution (else 0).
  static std::size_t scattered_slab_values(const plan_description& d) {
    if (!scatters_output(d) || d.steps.size() < 2) return 0;
    const step& first = d.steps[d.steps.size() - 2];
    if (!std::holds_alternative<lu_subst_step>(first) || !fused_with_next(first)) return 0;
    const shape_t& view = step_info(first).view;
    return whole_cache_lines<T>(slab_group_of<T>(view) * view[1] * view[2]);
  }

  // The first step (or fused pair, or row sweep) reads src, a pointer or a gathered source;
  // every later one works in place on x.
  template <class Src>
  void run_from(const Src& b, T* x) {
    std::size_t s = 0;
    if (s < m_steps.size()) s = run_piece(s, b, x);
    while (s < m_steps.size()) s = run_piece(s, static_cast<const T*>(x), x);
  }

  // As run_from into a scattered output: the pieces before the last in place in its home.
  template <class Src>
  void run_scattered(const Src& b, const scattered_output<T>& x) {
    if (!scatters_output())
      throw error("kronex: a host plan writes a scattered output only when its last step runs in panels");
    if (x.extent() != m_shape)
      throw dimension_mismatch(message("kronex: a scattered output of shape ", format_shape(x.extent()),
                                       " for a plan of shape ", format_shape(m_shape)));
    const std::size_t last = m_steps.size() >= 2 && m_slab_group[m_steps.size() - 2] > 0 ? m_steps.size() - 2
                                                                                          : m_steps.size() - 1;
    T* home = x.home();
    const scattered_target<T> target{&x, 0};
    reserve_scattered_output();
    if (last == 0) {
      run_piece(0, b, target);
      return;
    }
    std::size_t s = run_piece(0, b, home);
    while (s < last) s = run_piece(s, static_cast<const T*>(home), home);
    run_piece(s, static_cast<const T*>(home), target);
  }

  // Step s from src into x, with the step after it where they run together; returns the next
  // step. x: a pointer, or a scattered output (no row sweep then: scatters_output()).
  template <class Src, class Dst>
  std::size_t run_piece(std::size_t s, const Src& src, const Dst& x) {
    const step_base& st = info(s);
    const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
    if (m_slab_group[s] > 0) {
      // A fused pair. Slab l holds the lines of both modes for one index l of the modes before
      // them; a group of consecutive slabs is contiguous. A substitution first works in place
      // on the group in x (copied there from b first); an apply first goes tensor -> slab
      // buffer. The second step then goes from there to x, the group still in cache.
      // Groups are independent: each thread runs whole groups (in its own slab buffer).
      const step_base& next = info(s + 1);
      const std::size_t slab = n * R, group = m_slab_group[s];
      // Into a scattered output the substitution works in the slab buffer too: in the output's
      // home, each line of the group would be read from memory, and the home's part that goes
      // elsewhere written back to it, on top of the writes of the second step.
      const bool substitution = std::holds_alternative<lu_subst_step>(m_steps[s]);
      const bool in_place = substitution && std::is_pointer_v<Dst>;
      parallel_pieces((L + group - 1) / group, m_threads, [&](std::size_t k, std::size_t t) {
        const std::size_t l = k * group, g = std::min(group, L - l);
        T* work = nullptr;
        if constexpr (std::is_pointer_v<Dst>) work = in_place ? x + l * slab : nullptr;
        if (!in_place) work = m_slab.data() + t * m_slab_stride;
        if (substitution) solve_slabs(s, g, n, R, src + l * slab, work, t);
        else run_step(s, g, n, R, src + l * slab, work, t);
        // Meanwhile the next group, contiguous in the tensor, is fetched for the first step, and
        // its place in the output for writing (a scattered output's is not).
        T* next_out = nullptr;
        if constexpr (std::is_pointer_v<Dst>) next_out = x + (l + g) * slab;
        prefetch_stream ahead = l + g < L ? read_stream(src, (l + g) * slab, next_out, std::min(group, L - l - g) * slab)
                                          : prefetch_stream{};
        // Streaming stores as for an output of the whole tensor: groups are small, the tensor not.
        run_step(s + 1, g * n, next.view[1], next.view[2], work, x + l * slab, t, &ahead, L * slab);
      });
      return s + 2;
    }
    if constexpr (std::is_pointer_v<Dst>) {
      if (m_sweeps[s].pieces() > 0) {
        run_row_sweep(s, src, x);
        return s + 2;
      }
    }
    run_step(s, L, n, R, src, x, all_threads);
    return s + 1;
  }

  const step_base& info(std::size_t s) const { return step_info(m_steps[s]); }

  // A diagonal factor: its values (or their inverses for a solve, conjugated when op conjugates).
  void add_scale(const operator_desc<T>& d, const scale_step& st) {
    const auto& f = d.factors[st.mode];
    std::vector<T> s(f.n);
    for (std::size_t i = 0; i < f.n; ++i) {
      const T di = is_conjugated(st.trans) ? conj_if_complex(f.data[i]) : f.data[i];
      if (d.inverse && di == T(0)) throw_singular(st.mode, long(i + 1), f.describe(), "diagonal");
      s[i] = d.inverse ? T(1) / di : di;
    }
    m_payload.push_back(m_scales.size());
    m_desc.factor_bytes += s.size() * sizeof(T);
    m_scales.push_back(std::move(s));
  }

  // The LU of the factor for `mode`, factored here or taken from the options' store; and whether
  // it was shared. The threshold is checked for this plan's options whoever factored.
  static std::pair<std::shared_ptr<const lu_factors<T>>, bool> lu_of(const operator_desc<T>& d, std::size_t mode) {
    const auto& f = d.factors[mode];
    if (!d.options.store) return {std::make_shared<const lu_factors<T>>(factorize(f, mode, d.options)), false};
    auto got = d.options.store->template get<lu_factors<T>>(f, factor_store::form::lu, op::none,
                                                            [&] { return factorize(f, mode, d.options); });
    if (got.second) check_rcond(got.first->rcond, mode, f, got.first->method == "getrf" ? "gecon" : "lacn2", d.options);
    return got;
  }

  // A banded or dense factor, factored once: the exact numbers replace the plan's estimates.
  // With a store (compile_options::store), the LU and the program are shared with the other
  // plans compiled with it: the LU per factor (it serves every op), the program per (factor, op).
  // The threshold is checked for this plan's options whoever factored.
  void add_solve(const operator_desc<T>& d, lu_subst_step& st) {
    const auto& f = d.factors[st.mode];
    factor_setup& fs = m_desc.setup[st.mode];
    std::shared_ptr<const lu_factors<T>> lu;
    bool lu_shared = false;
    auto factor = [&] { std::tie(lu, lu_shared) = lu_of(d, st.mode); };
    const auto [program, program_shared] = shared_program(d, f, factor_store::form::host_solve, st.trans, [&] {
      factor();
      return solve_program(*lu, st.trans);
    });
    if (!lu) factor();  // the program was shared: the LU is in the store too, for the numbers
    name_method(fs, *lu);
    fs.result = message("L nnz=", lu->nnz_lower(), " U nnz=", lu->nnz_upper(), " swaps=", lu->swaps.size(),
                        lu_shared || program_shared ? " shared" : "");
    fs.rcond = lu->rcond;
    add_program(program, st);
  }

  // The planner names gbtrf for every band; a positive definite band that gbtrf would pivot was
  // factored by its band Cholesky instead (lu_factors.hpp), which the plan then says (keeping
  // what follows the name, such as ", dense inverse").
  static void name_method(factor_setup& fs, const lu_factors<T>& lu) {
    if (lu.method != "pbtrf") return;
    const std::size_t rest = std::min(fs.method.find(','), fs.method.size());
    fs.method = message("pbtrf kd=", lu.lapack_kl, lu.order.empty() ? "" : " folded") + fs.method.substr(rest);
  }

  void add_apply(const operator_desc<T>& d, matvec_step& st) {
    const auto& f = d.factors[st.mode];
    if (st.gemm) {
      add_gemm(d, st);
      return;
    }
    const auto [program, shared] =
        shared_program(d, f, factor_store::form::host_apply, st.trans, [&] { return apply_program(f, st.trans); });
    if (shared) m_desc.setup[st.mode].result += " shared";
    add_program(program, st);
  }

  // A dense apply run as GEMMs: the plan's copy of A (or conj(A)), shared through the store
  // between plans that read the same entries (with their own flags).
  void add_gemm(const operator_desc<T>& d, matvec_step& st) {
    const auto& f = d.factors[st.mode];
    const std::pair<char, bool> flag = gemm_flag(st.trans, st.view[2] == 1);
    const char trans = flag.first;
    const bool conjugated = flag.second;
    auto make = [&] { return make_gemm_matrix(f, conjugated); };
    std::shared_ptr<const gemm_matrix<T>> g;
    bool shared = false;
    if (d.options.store)
      std::tie(g, shared) = d.options.store->template get<gemm_matrix<T>>(
          f, factor_store::form::host_gemm, conjugated ? op::conjugate : op::none, make);
    else
      g = std::make_shared<const gemm_matrix<T>>(make());
    if (shared) m_desc.setup[st.mode].result += m_desc.setup[st.mode].result.empty() ? "shared" : " shared";
    m_payload.push_back(m_gemms.size());
    m_desc.factor_bytes += g->a.size() * sizeof(T);
    m_gemms.push_back({std::move(g), trans});
  }

  // A solve run as GEMMs with op(A)^{-1}: A is factored as for a substitution (the same checks
  // and errors; the LU is shared through the store), and its inverse formed by running the
  // row program on the identity's columns, V at a time. The GEMMs then read op(A^{-1}), through
  // the same flags as a dense apply; conj(A^{-1}) is the inverse of conj(A).
  void add_inverse(const operator_desc<T>& d, gemm_step& st) {
    const auto [lu, shared] = lu_of(d, st.mode);
    const std::size_t n = d.factors[st.mode].n;
    const auto [trans, conjugated] = gemm_flag(st.trans, st.view[2] == 1);
    const row_program<T> program = solve_program(*lu, conjugated ? op::conjugate : op::none);
    gemm_matrix<T> g;
    g.n = n;
    g.conjugated = conjugated;
    g.a.resize(n * n);
    std::vector<T> strip(n * V);
    for (std::size_t j0 = 0; j0 < n; j0 += V) {  // columns j0.. of the inverse, one per lane
      std::fill(strip.begin(), strip.end(), T(0));
      for (std::size_t c = 0; c < V && j0 + c < n; ++c) strip[(j0 + c) * V + c] = T(1);
      run_solve_program(program, strip.data());
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t c = 0; c < V && j0 + c < n; ++c) g.a[i * n + j0 + c] = strip[i * V + c];
    }
    factor_setup& fs = m_desc.setup[st.mode];
    name_method(fs, *lu);
    fs.result = message("L nnz=", lu->nnz_lower(), " U nnz=", lu->nnz_upper(), " swaps=", lu->swaps.size(),
                        ", inverse ", n, "x", n, shared ? " shared" : "");
    fs.rcond = lu->rcond;
    m_payload.push_back(m_gemms.size());
    m_desc.factor_bytes += g.a.size() * sizeof(T);
    m_gemms.push_back({std::make_shared<const gemm_matrix<T>>(std::move(g)), trans});
  }

  // The program make() builds, or the store's for (f, form, trans); and whether it was shared.
  template <class Make>
  static std::pair<std::shared_ptr<const row_program<T>>, bool> shared_program(const operator_desc<T>& d,
                                                                               const factor_view<T>& f,
                                                                               factor_store::form what, op trans,
                                                                               Make&& make) {
    if (!d.options.store) return {std::make_shared<const row_program<T>>(make()), false};
    return d.options.store->template get<row_program<T>>(f, what, trans, make);
  }

  void add_program(std::shared_ptr<const row_program<T>> p, step_base& st) {
    st.flops = C::program_flops(double(product(m_shape)) / double(p->n), p->madds(), p->multiplies(),
                                p->real_part != nullptr);
    m_payload.push_back(m_programs.size());
    m_desc.factor_bytes += p->bytes();
    m_programs.push_back(std::move(p));
  }

  // A function solver: the plan keeps its own copy of the function.
  void add_function(const operator_desc<T>& d, const function_step& st) {
    m_payload.push_back(m_functions.size());
    m_functions.push_back(*d.factors[st.mode].solve);
  }

  // Lines of a mode that is not the last are gathered into contiguous vectors, up to
  // function_lines at a time.
  template <class Src>
  void run_function_solve(const std::function<void(T*, std::size_t)>& solve, std::size_t L, std::size_t n,
                          std::size_t R, const Src& src, T* dst) {
    read_values(src, 0, L * n * R, dst);
    if (R == 1) {  // the lines are contiguous already
      solve(dst, L);
      return;
    }
    const std::size_t chunk = std::min(R, function_lines<T>(n));
    for (std::size_t l = 0; l < L; ++l) {
      T* slab = dst + l * n * R;
      for (std::size_t r0 = 0; r0 < R; r0 += chunk) {
        const std::size_t c = std::min(chunk, R - r0);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < c; ++j) m_lines[j * n + i] = slab[i * R + r0 + j];
        solve(m_lines.data(), c);
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < c; ++j) slab[i * R + r0 + j] = m_lines[j * n + i];
      }
    }
  }

  // The substitution of step s on a group of g slabs (each n x R, R > 1) from src, in place in
  // dst (src is copied there first unless equal), slab by slab (solve_slab).
  template <class Src>
  void solve_slabs(std::size_t s, std::size_t g, std::size_t n, std::size_t R, const Src& src, T* dst,
                   std::size_t thread) {
    const auto& p = *m_programs[m_payload[s]];
    read_values(src, 0, g * n * R, dst);
    T* strip = m_panels.data() + thread * m_panel_stride;
    for (std::size_t l = 0; l < g; ++l) solve_slab(p, dst + l * n * R, n, R, strip);
  }

  // Program p on columns [c, c + w) of each range of the n rows of a slab (R apart), gathered
  // side by side into a strip (at most V columns in all; zeros after them) and scattered back.
  using columns = std::pair<std::size_t, std::size_t>;
  static void solve_through_strip(const row_program<T>& p, T* slab, std::size_t n, std::size_t R,
                                  std::initializer_list<columns> ranges, T* strip) {
    for (std::size_t i = 0; i < n; ++i) {
      T* to = strip + i * V;
      for (const auto& [c, w] : ranges) to = std::copy_n(slab + i * R + c, w, to);
      std::fill(to, strip + (i + 1) * V, T(0));
    }
    run_solve_program(p, strip);
    for (std::size_t i = 0; i < n; ++i) {
      const T* from = strip + i * V;
      for (const auto& [c, w] : ranges) std::copy_n(from, w, slab + i * R + c), from += w;
    }
  }

  // Steps s (the first mode: n rows of R values) and s + 1 (the last mode: lines of m values)
  // as a row sweep (row_sweep.hpp) from src into x, on the calling thread. Before each piece of
  // the first mode's operations, the last mode is solved on the rows of the blocks the piece
  // touches first (its panel walk, prefetching the next block); the piece then runs on whole rows
  // of x in blocks of V columns from the first column where every row has a cache line start
  // (as solve_slabs), prefetching the rows of the operations row_sweep_prefetch_rows ahead. The
  // columns before and after the blocks go through a strip at the end.
  template <class Src>
  void run_row_sweep(std::size_t s, const Src& src, T* x) {
    const std::size_t n = info(s).view[1], R = info(s).view[2], m = info(s + 1).view[1];
    const row_sweep_schedule& sweep = m_sweeps[s];
    const auto& p = *m_programs[m_payload[s]];
    const auto rows_of = [&](std::size_t k) {  // rows [first, last) of the k-th block solved
      const std::size_t first = sweep.block_order[k] * sweep.block_rows;
      return std::pair{first, std::min(n, first + sweep.block_rows)};
    };
    const std::size_t head = columns_before_cache_line(x, R);
    const std::size_t blocks = (R - head) / V, rest = head + blocks * V;
    constexpr std::size_t lines_per_block = V * sizeof(T) / cache_line_bytes;
    std::size_t solved = 0;  // blocks of rows solved along the last mode
    for (std::size_t k = 0; k < sweep.pieces(); ++k) {
      for (; solved < sweep.block_end[k]; ++solved) {
        const auto [first, last] = rows_of(solved);
        prefetch_stream ahead;
        if (solved + 1 < sweep.block_order.size()) {
          const auto [next_first, next_last] = rows_of(solved + 1);
          ahead = read_stream(src, next_first * R, x + next_first * R, (next_last - next_first) * R);
        }
        run_step(s + 1, (last - first) * (R / m), m, 1, src + first * R, x + first * R, 0, &ahead);
      }
      const std::size_t first_op = k ? sweep.op_end[k - 1] : 0, last_op = sweep.op_end[k];
      if (first_op == last_op || blocks == 0) continue;
      prefetch_stream ahead;
      const std::size_t from = first_op + row_sweep_prefetch_rows;
      if (from < p.ops.size()) {
        ahead.base = reinterpret_cast<const char*>(x + head);
        ahead.row_list = sweep.targets.data() + from;
        ahead.rows = p.ops.size() - from;
        ahead.run_lines = blocks * lines_per_block;
        ahead.stride = R * sizeof(T);
        ahead.lines_per_next = lines_per_block;  // the kernels take one next() per block
      }
      run_solve_rows(p, first_op, last_op, x + head, blocks, R, ahead);
    }
    if (rest < R || head > 0) solve_through_strip(p, x, n, R, {{0, head}, {rest, R - rest}}, m_panels.data());
  }

  // The columns of a slab (rows R apart from `slab`) before a cache line starts in every row; 0
  // when rows start at different offsets in their lines.
  static std::size_t columns_before_cache_line(const T* slab, std::size_t R) {
    const std::size_t offset = reinterpret_cast<std::uintptr_t>(slab) % cache_line_bytes;
    const std::size_t gap = (cache_line_bytes - offset) % cache_line_bytes;
    if ((R * sizeof(T)) % cache_line_bytes != 0 || gap % sizeof(T) != 0) return 0;
    return gap / sizeof(T);
  }

  // The panel walk of a step on the tensor view (L, n, R) from src to dst. An output of at least
  // host_streaming_min_bytes() that is not the input is written with streaming stores
  // (streaming_stores.hpp). `output_values`: the size of the whole output the step writes, when
  // the walk covers only part of it (the second step of a fused pair, run group by group; 0: the
  // walk's own). Last-mode walks (R == 1) into an array scatter in pieces of lines, so never;
  // into a scattered output they write whole lines out of a staging block, which streams well
  // (docs/performance.md).
  template <class Src, class Dst>
  panel_walk<T> walk_of(std::size_t L, std::size_t n, std::size_t R, const Src& src, const Dst& dst,
                        std::size_t output_values = 0) const {
    panel_walk<T> walk{L, n, R, strips_per_panel<T>(n, L * R, R)};
    if (output_values == 0) output_values = L * n * R;
    walk.stream = distinct_memory(src, dst) && (R > 1 || !std::is_pointer_v<Dst>) &&
                  output_values * sizeof(T) >= m_streaming_min_bytes;
    return walk;
  }

  // run_step's `thread` for a step that may split itself between all the plan's threads.
  static constexpr std::size_t all_threads = std::size_t(-1);

  // Pieces of a step: split between the threads (thread == all_threads), or all run by the
  // calling one, which is thread `thread` of a split already made.
  template <class F>
  void pieces(std::size_t count, std::size_t thread, F&& f) {
    if (thread == all_threads) {
      parallel_pieces(count, m_threads, f);
      return;
    }
    for (std::size_t k = 0; k < count; ++k) f(k, thread);
  }

  // Step s on the tensor view (L, n, R) from src to dst (which may be equal), with the workspace
  // of `thread`, or split between all threads (all_threads). Function solves (the application's
  // code) and GEMMs (BLAS threads them itself) run on the calling thread.
  // `ahead`: what panel steps prefetch instead of their next panel (run_panel), for a caller
  // whose src is in cache already.
  // src: a pointer, or a gathered tensor (only the first step's); dst: a pointer, or a
  // scattered output (only a panel step's: run_scattered).
  template <class Src, class Dst>
  void run_step(std::size_t s, std::size_t L, std::size_t n, std::size_t R, const Src& src, const Dst& dst,
                std::size_t thread, prefetch_stream* ahead = nullptr, std::size_t output_values = 0) {
    if constexpr (!std::is_pointer_v<Dst>) {
      if (!is_panel_step(m_steps[s])) throw error("kronex: only a panel step writes a scattered output");
      run_panels(s, L, n, R, src, dst, thread, ahead, output_values);
    } else {
      run_step_into(s, L, n, R, src, static_cast<T*>(dst), thread, ahead, output_values);
    }
  }

  // A substitution, or an apply by row program, panel by panel (tiles.hpp).
  template <class Src, class Dst>
  void run_panels(std::size_t s, std::size_t L, std::size_t n, std::size_t R, const Src& src, const Dst& dst,
                  std::size_t thread, prefetch_stream* ahead, std::size_t output_values) {
    const auto& p = *m_programs[m_payload[s]];
    const bool apply = std::holds_alternative<matvec_step>(m_steps[s]);
    const panel_walk<T> walk = walk_of(L, n, R, src, dst, output_values);
    pieces(walk.panels(), thread, [&](std::size_t k, std::size_t t) {
      T* in = m_panels.data() + t * m_panel_stride;
      walk.run_panel(
          k, src, dst, in,
          [&](T* panel, std::size_t strips, prefetch_stream& next) {
            const auto [stride, gap] = walk.layout(strips);
            if (!apply) {
              run_solve_blocks(p, panel, strips, stride, gap, next);
              return panel;
            }
            T* out = in + m_panel_values;  // the output panel
            for (std::size_t j = 0; j < strips; ++j) run_apply_program(p, panel + j * gap, out + j * gap, stride, next);
            return out;
          },
          ahead);
    });
  }

  // run_step into an array: every kind of step.
  template <class Src>
  void run_step_into(std::size_t s, std::size_t L, std::size_t n, std::size_t R, const Src& src, T* dst,
                     std::size_t thread, prefetch_stream* ahead, std::size_t output_values) {
    const std::size_t payload = m_payload[s];
    // Copies and scalings in runs of whole hyperplanes, one run per thread.
    const std::size_t rows = L * n, runs = thread == all_threads ? std::min(m_threads, rows) : 1;
    const auto row_runs = [&](auto&& f) {
      pieces(runs, thread, [&](std::size_t k, std::size_t) { f(k * rows / runs, (k + 1) * rows / runs); });
    };
    // A dense apply's or a dense inverse's GEMMs, in place through this thread's panel buffer.
    // BLAS reads one array: a gathered source is copied into dst first, and the GEMMs run in place there.
    const auto run_gemm = [&] {
      T* chunk = m_panels.data() + (thread == all_threads ? 0 : thread) * m_panel_stride;
      if constexpr (!std::is_same_v<Src, gathered_source<T>>) {
        run_gemm_apply(*m_gemms[payload].matrix, m_gemms[payload].trans, L, n, R, src, dst, chunk);
      } else {
        read_values(src, 0, L * n * R, dst);
        run_gemm_apply(*m_gemms[payload].matrix, m_gemms[payload].trans, L, n, R, static_cast<const T*>(dst), dst, chunk);
      }
    };
    std::visit(
        overloaded{
            [&](const copy_step&) {
              row_runs([&](std::size_t r0, std::size_t r1) { read_values(src, r0 * R, (r1 - r0) * R, dst + r0 * R); });
            },
            [&](const scale_step&) {
              const T* scale = m_scales[payload].data();
              row_runs([&](std::size_t r0, std::size_t r1) {
                for (std::size_t r = r0; r < r1; ++r) {
                  const T f = scale[r % n];
                  T* out = dst + r * R;
                  const T* in = out;
                  if constexpr (!std::is_same_v<Src, gathered_source<T>>) in = src + r * R;
                  else read_values(src, r * R, R, out);  // the row, then scaled where it landed
                  for (std::size_t j = 0; j < R; ++j) out[j] = f * in[j];
                }
              });
            },
            [&](const function_step&) { run_function_solve(m_functions[payload], L, n, R, src, dst); },
            [&](const lu_subst_step&) { run_panels(s, L, n, R, src, dst, thread, ahead, output_values); },
            [&](const gemm_step&) { run_gemm(); },
            [&](const matvec_step& m) {
              if (m.gemm) {
                run_gemm();
                return;
              }
              run_panels(s, L, n, R, src, dst, thread, ahead, output_values);
            }},
        m_steps[s]);
  }

  shape_t m_shape;
  plan_description m_desc;
  std::vector<host_step> m_steps;               // parallel to m_desc.steps
  std::vector<std::size_t> m_slab_group;        // per fused first step: slabs processed at once
  std::vector<row_sweep_schedule> m_sweeps;     // per row sweep's first step: its order (else empty)
  std::size_t m_panel_values;                   // one panel; the output panel follows the first
  std::size_t m_threads;                        // host_threads_for(options.threads, tensor size)
  std::size_t m_panel_stride, m_slab_stride;    // one thread's panel buffer and slab buffer
  std::size_t m_streaming_min_bytes;            // host_streaming_min_bytes() when compiled (walk_of)
  std::vector<std::size_t> m_payload;           // per step: index into m_programs, m_gemms, m_scales or m_functions
  // Read only once built, so copies of the plan and plans compiled with one factor_store share them.
  std::vector<std::shared_ptr<const row_program<T>>> m_programs;
  struct gemm_payload {
    std::shared_ptr<const gemm_matrix<T>> matrix;
    char trans;  // the BLAS flag for this step's op and mode (gemm_flag)
  };
  std::vector<gemm_payload> m_gemms;
  std::vector<std::vector<T>> m_scales;
  std::vector<std::function<void(T*, std::size_t)>> m_functions;
  cache_aligned_vector<T> m_panels;             // m_threads panel buffers
  cache_aligned_vector<T> m_slab;               // m_threads slab buffers (a group of slabs of a fused pair)
  cache_aligned_vector<T> m_lines;              // gathered lines for function solves
};

// Defined out of the class, not inline: where the kernels are instantiated once in a compiled
// library (KRONEX_HOST_PLANS_COMPILED, below), these are all a caller's code reaches.
template <class T>
host_plan<T>::host_plan(const operator_desc<T>& d, host_blueprint<T> bp)
    : m_shape(bp.desc.shape), m_desc(std::move(bp.desc)), m_steps(std::move(bp.steps)),
      m_slab_group(std::move(bp.slab_group)), m_panel_values(bp.panel_values), m_threads(bp.threads),
      m_panel_stride(bp.panel_buffer_values()), m_slab_stride(bp.slab_buffer_values()),
      m_streaming_min_bytes(host_streaming_min_bytes()) {
  check_vector_bytes_setting();
  m_desc.factor_bytes = 0;
  for (std::size_t s = 0; s < m_steps.size(); ++s) {
    std::visit(overloaded{[&](copy_step&) { m_payload.push_back(0); },
                          [&](scale_step& st) { add_scale(d, st); },
                          [&](lu_subst_step& st) { add_solve(d, st); },
                          [&](matvec_step& st) { add_apply(d, st); },
                          [&](function_step& st) { add_function(d, st); },
                          [&](gemm_step& st) { add_inverse(d, st); }},
               m_steps[s]);
    m_desc.steps[s] = to_step(m_steps[s]);
  }
  m_sweeps.resize(m_steps.size());
  for (std::size_t s = 0; s < m_steps.size(); ++s)
    if (bp.sweep_rows[s] > 0) m_sweeps[s] = make_row_sweep_schedule(*m_programs[m_payload[s]], bp.sweep_rows[s]);
  m_panels.assign(m_threads * m_panel_stride, T(0));
  m_slab.assign(m_threads * m_slab_stride, T(0));
  m_lines.assign(bp.line_values, T(0));
  m_desc.instantiated = true;
}

template <class T>
void host_plan<T>::solve_rows(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride) {
  prefetch_stream none;
  run_solve_rows(p, 0, p.ops.size(), base, blocks, stride, none);
}

template <class T>
void host_plan<T>::solve_blocks(const row_program<T>& p, T* base, std::size_t blocks, std::size_t stride, std::size_t gap,
                                prefetch_stream* ahead) {
  prefetch_stream none;
  run_solve_blocks(p, base, blocks, stride, gap, ahead ? *ahead : none);
}

template <class T>
void host_plan<T>::solve_slab(const row_program<T>& p, T* slab, std::size_t n, std::size_t R, T* strip) {
  prefetch_stream none;
  const std::size_t head = columns_before_cache_line(slab, R);
  const std::size_t blocks = (R - head) / V, rest = head + blocks * V, tail = R - rest;
  run_solve_blocks(p, slab + head, blocks, R, V, none);
  // head + tail <= V: a row is whole lines when head > 0, and V values are two lines.
  if (head + tail > 0) solve_through_strip(p, slab, n, R, {{0, head}, {rest, tail}}, strip);
}

template <class T>
void host_plan<T>::run(const T* b, T* x) {
  run_from(b, x);
}

template <class T>
void host_plan<T>::run(const T* b, const scattered_output<T>& x) {
  run_scattered(b, x);
}

template <class T>
void host_plan<T>::run(const gathered_tensor<T>& b, const scattered_output<T>& x) {
  if (b.extent() != m_shape)
    throw dimension_mismatch(message("kronex: a gathered operand of shape ", format_shape(b.extent()),
                                     " for a plan of shape ", format_shape(m_shape)));
  run_scattered(gathered_source<T>{&b, 0}, x);
}

template <class T>
void host_plan<T>::run(const gathered_tensor<T>& b, T* x) {
  if (b.extent() != m_shape)
    throw dimension_mismatch(message("kronex: a gathered operand of shape ", format_shape(b.extent()),
                                     " for a plan of shape ", format_shape(m_shape)));
  run_from(gathered_source<T>{&b, 0}, x);
}

} // namespace kronex::detail

// A program linking kronex::host_plans (KRONEX_HOST_PLANS_COMPILED) takes the plans of the four
// value types from that library: they are compiled there once, not in each translation unit.
#ifdef KRONEX_HOST_PLANS_COMPILED
namespace kronex::detail {
extern template class host_plan<float>;
extern template class host_plan<double>;
extern template class host_plan<std::complex<float>>;
extern template class host_plan<std::complex<double>>;
} // namespace kronex::detail
#endif
