#pragma once
// host_plan<T>: a compiled host plan. Compiling factors every 1D factor once (gbtrf/getrf),
// turns the factors into row programs and allocates the workspace; run() then only walks the
// steps: no allocation, no factorization, safe when x aliases b. One host_plan must not run on
// two threads at once (it owns one workspace); copies are independent.
#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "../../core/value_traits.hpp"
#include "../../plan/lu_factors.hpp"
#include "../../plan/operator_desc.hpp"
#include "../../plan/plan.hpp"
#include "../../plan/row_program.hpp"
#include "../../plan/schedule.hpp"
#include "row_kernels.hpp"
#include "tiles.hpp"

namespace kronex::detail {

template <class T>
class host_plan {
  static constexpr std::size_t V = strip_width<T>;
  // Real flops per operation: a complex multiply-add is 8, a complex multiply 6.
  static constexpr double madd_flops = value_traits<T>::is_complex ? 8.0 : 2.0;
  static constexpr double mul_flops = value_traits<T>::is_complex ? 6.0 : 1.0;

public:
  host_plan(const operator_desc<T>& d, const shape_t& shape) : m_shape(shape) {
    check_operand_shape(d, shape, d.inverse ? "right-hand side" : "operand");
    m_desc.backend = "host";
    m_desc.value_type = value_traits<T>::name;
    m_desc.expression = d.text();
    m_desc.shape = shape;
    for (std::size_t k = 0; k < d.factors.size(); ++k) setup_factor(d.factors[k], k);
    for (const auto& t : schedule(d)) {
      step st = make_step(t, d.trans, shape, sizeof(T));
      switch (t.kind) {
        case step_kind::copy:
          st.method = "memcpy";
          m_payload.push_back(0);
          break;
        case step_kind::scale:
          add_scale(d, st);
          break;
        case step_kind::solve:
        case step_kind::apply:
          if (d.factors[t.mode].kind == factor_kind::function) add_function_solve(d, st);
          else add_row_program(d, st);
          break;
        case step_kind::exchange:
          throw error("kronex: host plan internal error: the schedule has no exchange steps");
      }
      m_desc.steps.push_back(std::move(st));
    }
    fuse_adjacent_modes();
    // One panel shared by all steps, sized for the largest; a second (output) panel when an
    // apply step runs; scale and copy steps need none.
    std::size_t panel = 0;
    bool out_panel = false;
    for (std::size_t s = 0; s < m_desc.steps.size(); ++s) {
      const step& st = m_desc.steps[s];
      if (panel_step(s))
        panel = std::max(panel, strips_per_panel<T>(st.view[1], st.view[0] * st.view[2]) * st.view[1] * V);
      out_panel = out_panel || st.kind == step_kind::apply;
    }
    m_panels.assign((out_panel ? 2 : 1) * panel, T(0));
    m_desc.workspace_bytes = (m_panels.size() + m_slab.size() + m_lines.size()) * sizeof(T);
    for (const auto& p : m_programs) m_desc.factor_bytes += p.bytes();
    for (const auto& s : m_scales) m_desc.factor_bytes += s.size() * sizeof(T);
  }

  const plan_description& description() const noexcept { return m_desc; }
  const shape_t& shape() const noexcept { return m_shape; }

  // x = plan(b) on C-order arrays of shape(); x may equal b.
  void run(const T* b, T* x) {
    const T* src = b;
    for (std::size_t s = 0; s < m_desc.steps.size(); ++s) {
      const step& st = m_desc.steps[s];
      const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
      if (st.fused_with_next) {
        // Slab l holds the lines of both modes for one index l of the modes before them; a
        // group of consecutive slabs is contiguous. The first step goes tensor -> slab buffer,
        // the second slab buffer -> tensor.
        const step& next = m_desc.steps[s + 1];
        const std::size_t slab = n * R, group = m_slab_group[s];
        for (std::size_t l = 0; l < L; l += group) {
          const std::size_t g = std::min(group, L - l);
          run_step(s, g, n, R, src + l * slab, m_slab.data());
          run_step(s + 1, g * n, next.view[1], next.view[2], m_slab.data(), x + l * slab);
        }
        ++s;
      } else {
        run_step(s, L, n, R, src, x);
      }
      src = x;  // every later step works in place on x
    }
  }

private:
  // A diagonal factor: its values (or their inverses for a solve, conjugated when op conjugates).
  void add_scale(const operator_desc<T>& d, step& st) {
    const auto& f = d.factors[st.mode];
    std::vector<T> s(f.n);
    for (std::size_t i = 0; i < f.n; ++i) {
      const T di = is_conjugated(st.trans) ? conj_if_complex(f.data[i]) : f.data[i];
      if (d.inverse && di == T(0)) throw_singular(st.mode, long(i + 1), f.describe(), "diagonal");
      s[i] = d.inverse ? T(1) / di : di;
    }
    st.method = "scale";
    st.flops = double(product(m_shape)) * mul_flops;
    m_payload.push_back(m_scales.size());
    m_scales.push_back(std::move(s));
  }

  // A banded or dense factor: factored once (solve) or taken as is (apply), as a row program.
  void add_row_program(const operator_desc<T>& d, step& st) {
    const auto& f = d.factors[st.mode];
    auto& fs = m_desc.setup[st.mode];
    row_program<T> p;
    if (st.kind == step_kind::solve) {
      const lu_factors<T> lu = factorize(f, st.mode);
      p = solve_program(lu, st.trans);
      fs.method = lu.method == "gbtrf" ? message("gbtrf kl=", lu.lapack_kl, " ku=", lu.lapack_ku) : lu.method;
      fs.result = message("L nnz=", lu.nnz_lower(), " U nnz=", lu.nnz_upper(), " swaps=", lu.swaps.size());
      st.method = "lu_subst";
    } else {
      p = apply_program(f, st.trans);
      fs.method = "matvec";
      fs.result = message("nnz=", p.coef.size());
      st.method = f.kind == factor_kind::dense ? "dense_matvec" : "band_matvec";
    }
    const double lines = double(product(m_shape)) / double(f.n);
    st.flops = lines * (double(p.madds()) * madd_flops + double(p.multiplies()) * mul_flops);
    m_payload.push_back(m_programs.size());
    m_programs.push_back(std::move(p));
  }

  // A function solver: the plan keeps its own copy of the function. Lines of a mode that is not
  // the last are gathered into contiguous vectors, up to function_lines at a time.
  void add_function_solve(const operator_desc<T>& d, step& st) {
    const auto& f = d.factors[st.mode];
    auto& fs = m_desc.setup[st.mode];
    fs.method = "function";
    st.method = "function";
    st.flops = 0;  // unknown: the function's own work
    m_payload.push_back(m_functions.size());
    m_functions.push_back(*f.solve);
    if (st.view[2] > 1) m_lines.resize(std::max(m_lines.size(), f.n * std::min(st.view[2], function_lines(f.n))));
  }

  static std::size_t function_lines(std::size_t n) { return std::max<std::size_t>(1, (std::size_t(64) << 10) / (n * sizeof(T))); }

  void run_function_solve(const std::function<void(T*, std::size_t)>& solve, std::size_t L, std::size_t n,
                          std::size_t R, const T* src, T* dst) {
    if (src != dst) std::memcpy(dst, src, L * n * R * sizeof(T));
    if (R == 1) {  // the lines are contiguous already
      solve(dst, L);
      return;
    }
    const std::size_t chunk = std::min(R, function_lines(n));
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

  // Solve and apply steps with a row program run in panels; function solves do not.
  bool panel_step(std::size_t s) const {
    const step& st = m_desc.steps[s];
    return (st.kind == step_kind::solve || st.kind == step_kind::apply) && st.method != "function";
  }

  // Step s on the tensor view (L, n, R) from src to dst (which may be equal).
  void run_step(std::size_t s, std::size_t L, std::size_t n, std::size_t R, const T* src, T* dst) {
    switch (m_desc.steps[s].kind) {
      case step_kind::copy:
        if (src != dst) std::memcpy(dst, src, L * n * R * sizeof(T));
        break;
      case step_kind::scale:
        scale_mode(L, n, R, m_scales[m_payload[s]].data(), src, dst);
        break;
      case step_kind::solve: {
        if (!panel_step(s)) {
          run_function_solve(m_functions[m_payload[s]], L, n, R, src, dst);
          break;
        }
        const auto& p = m_programs[m_payload[s]];
        const panel_walk<T> walk{L, n, R, strips_per_panel<T>(n, L * R)};
        walk.run(src, dst, m_panels.data(), [&](T* panel, std::size_t strips) {
          for (std::size_t k = 0; k < strips; ++k) run_solve_program(p, panel + k * n * V);
          return panel;
        });
        break;
      }
      case step_kind::apply: {
        const auto& p = m_programs[m_payload[s]];
        const panel_walk<T> walk{L, n, R, strips_per_panel<T>(n, L * R)};
        T* out = m_panels.data() + m_panels.size() / 2;  // the output panel
        walk.run(src, dst, m_panels.data(), [&](T* panel, std::size_t strips) {
          for (std::size_t k = 0; k < strips; ++k) run_apply_program(p, panel + k * n * V, out + k * n * V);
          return out;
        });
        break;
      }
      case step_kind::exchange:
        break;  // never in a host plan (see the constructor)
    }
  }

  // Two consecutive panel steps on adjacent modes k, k+1 whose slab (n_k x n_k+1 x R_k+1 values,
  // contiguous for each index of the modes before) fits in L2 run slab by slab: the tensor is
  // read and written once for both, instead of twice. As many slabs as fit are taken at once,
  // so small slabs still fill whole strips. Only the pairing and grouping are decided here.
  void fuse_adjacent_modes() {
    constexpr std::size_t slab_budget = std::size_t(512) << 10;
    std::size_t slab_size = 0;
    auto& steps = m_desc.steps;
    m_slab_group.assign(steps.size(), 0);
    for (std::size_t s = 0; s + 1 < steps.size(); ++s) {
      const step &a = steps[s], &b = steps[s + 1];
      const std::size_t slab = a.view[1] * a.view[2];
      if (!panel_step(s) || !panel_step(s + 1) || b.mode != a.mode + 1 || a.view[0] == 1 ||
          slab * sizeof(T) > slab_budget)
        continue;
      steps[s].fused_with_next = true;
      steps[s].bytes = steps[s + 1].bytes = double(product(m_shape)) * sizeof(T);  // one read, one write
      m_slab_group[s] = std::min(a.view[0], slab_budget / (slab * sizeof(T)));
      slab_size = std::max(slab_size, m_slab_group[s] * slab);
      ++s;
    }
    m_slab.assign(slab_size, T(0));
  }

  // Identity and diagonal factors need no setup; solve/apply steps fill in their own lines.
  void setup_factor(const factor_view<T>& f, std::size_t k) {
    factor_setup fs;
    fs.mode = k;
    fs.factor = f.describe();
    fs.method = f.kind == factor_kind::identity ? "skipped" : (f.kind == factor_kind::diagonal ? "scale" : "");
    m_desc.setup.push_back(std::move(fs));
  }

  shape_t m_shape;
  plan_description m_desc;
  std::vector<std::size_t> m_payload;           // per step: index into m_programs or m_scales
  std::vector<row_program<T>> m_programs;
  std::vector<std::vector<T>> m_scales;
  std::vector<T> m_panels;
  std::vector<std::function<void(T*, std::size_t)>> m_functions;
  std::vector<T> m_slab;                        // a group of slabs of a fused step pair
  std::vector<T> m_lines;                       // gathered lines for function solves
  std::vector<std::size_t> m_slab_group;        // per fused step: slabs processed at once
};

} // namespace kronex::detail
