#pragma once
// compiled: an expression compiled by kronex::compile for one value type and shape, on the host,
// run on raw C-order buffers (NumPy's, used in place). One translation unit per value type
// (compiled_*.cpp) instantiates compile_as<T>; the rank is a run-time value up to 6.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <kronex/core/options.hpp>
#include <kronex/core/shape.hpp>
#include <kronex/plan/plan.hpp>

#include "expression.hpp"

namespace kronex::python {

class compiled {
public:
  virtual ~compiled() = default;
  // x = op(b) on C-order buffers of shape(); x may be b. No allocation, no check. Calls from
  // several threads take turns: a plan has one workspace.
  void run(const void* b, void* x) {
    std::lock_guard<std::mutex> lock(m_running);
    run_plan(b, x);
  }
  virtual const plan_description& plan() const = 0;

  dtype type() const noexcept { return m_type; }
  const shape_t& shape() const noexcept { return m_shape; }

protected:
  virtual void run_plan(const void* b, void* x) = 0;

  compiled(dtype t, shape_t shape, std::vector<factor_ptr> factors)
      : m_type(t), m_shape(std::move(shape)), m_factors(std::move(factors)) {}

private:
  dtype m_type;
  shape_t m_shape;
  std::vector<factor_ptr> m_factors;  // alive while the plan refers to them
  std::mutex m_running;
};

// kronex::compile of `e` (solve: of its inverse, as K.solve(b) compiles) for operands of
// `shape` in value type T.
template <class T>
std::unique_ptr<compiled> compile_as(const expression_ptr& e, bool solve, const shape_t& shape,
                                     const compile_options& options);
// kronex::explain_plan of the same: the check and plan phases only, nothing factored.
template <class T>
plan_description explain_as(const expression_ptr& e, bool solve, const shape_t& shape, const compile_options& options);

// The two, for the run-time value type t.
std::unique_ptr<compiled> compile(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                                  const compile_options& options);
plan_description explain(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                         const compile_options& options);

} // namespace kronex::python
