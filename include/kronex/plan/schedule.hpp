#pragma once
// The backend-neutral part of compiling: which mode gets which kind of step. All rewrites live
// here, so every backend agrees on them:
//  - identity factors are skipped (no step at all);
//  - diagonal factors become scale steps (by d, or 1/d for a solve; conjugated for adjoints);
//  - transposes and adjoints are folded into each factor's step, never formed;
//  - function solvers are solve-only and untransposed (invalid_factor otherwise);
//  - when every factor is skipped, a single copy step remains.
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include "operator_desc.hpp"
#include "plan.hpp"
#include "step.hpp"

namespace kronex::detail {

// What the schedule asks of one mode, before a backend picks how (its step kind).
enum class task_kind { copy, scale, solve, apply };

struct mode_task {
  task_kind kind;
  std::size_t mode;
};

template <class T>
std::vector<mode_task> schedule(const operator_desc<T>& d) {
  std::vector<mode_task> tasks;
  for (std::size_t k = 0; k < d.factors.size(); ++k) {
    switch (d.factors[k].kind) {
      case factor_kind::identity: break;
      case factor_kind::diagonal: tasks.push_back({task_kind::scale, k}); break;
      case factor_kind::banded:
      case factor_kind::dense: tasks.push_back({d.inverse ? task_kind::solve : task_kind::apply, k}); break;
      case factor_kind::function:
        if (!d.inverse)
          throw invalid_factor(message("kronex: factor f", k, " (", d.factors[k].describe(),
                                       ") is a solver only: use it in solve() or inverse(), not apply()"));
        if (d.trans != op::none)
          throw invalid_factor(message("kronex: factor f", k, " (", d.factors[k].describe(), ") cannot be used ",
                                       d.trans == op::conjugate ? "conjugated" : "transposed",
                                       ": it provides only the solve with A"));
        tasks.push_back({task_kind::solve, k});
        break;
    }
  }
  if (tasks.empty()) tasks.push_back({task_kind::copy, 0});
  return tasks;
}

// One setup line per factor, each "skipped" until the backend says what it does with it.
template <class T>
std::vector<factor_setup> skipped_setup(const operator_desc<T>& d) {
  std::vector<factor_setup> setup;
  for (std::size_t k = 0; k < d.factors.size(); ++k) {
    factor_setup f;
    f.mode = k;
    f.factor = d.factors[k].describe();
    f.method = "skipped";
    setup.push_back(f);
  }
  return setup;
}

// The tensor as a step on mode k sees it: (lines before, n_k, lines after), C order.
inline std::pair<shape_t, shape_t> mode_view(const shape_t& shape, std::size_t k) {
  const std::size_t L = product(shape, 0, k), n = shape[k], R = product(shape, k + 1);
  return {shape_t{L, n, R}, shape_t{n * R, R, 1}};
}

// A step of kind K for a task, with the backend-neutral fields filled: mode, factor, op, the
// view, and the traffic of reading and writing the tensor once. A copy step sees the tensor as
// one line. Backends fill in the costs and their kind's own fields.
template <class K>
K make_step(const mode_task& t, op trans, const shape_t& shape, std::size_t value_bytes) {
  K st;
  st.mode = t.mode;
  st.factor = t.kind == task_kind::copy ? -1 : long(t.mode);
  st.trans = trans;
  const std::size_t size = product(shape);
  if (t.kind == task_kind::copy) {
    st.view = shape_t{1, size, 1};
    st.view_strides = shape_t{size, 1, 1};
  } else {
    std::tie(st.view, st.view_strides) = mode_view(shape, t.mode);
  }
  st.bytes = 2.0 * double(size) * double(value_bytes);
  return st;
}

} // namespace kronex::detail
