#pragma once
// compiled: an expression compiled by kronex::compile for one value type and shape, run on raw
// C-order buffers used in place: host memory (NumPy's) for a host plan, device memory (CuPy's,
// PyTorch's) for a device plan. One translation unit per value type (compiled_*.cpp, and
// device/compiled_device_*.cpp in the device modules) instantiates compile_as<Backend, T>; the
// rank is a run-time value up to 6.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <kronex/core/options.hpp>
#include <kronex/core/shape.hpp>
#include <kronex/plan/plan.hpp>

#include "core/dtype.hpp"
#include "expression.hpp"

namespace kronex::python {

// Where a compiled operator's operands live.
enum class memory_space { host, device };

class compiled {
public:
  virtual ~compiled() = default;
  // x = op(b) on C-order buffers of shape() in memory(); x may be b. No allocation, no check.
  // x is written when it returns (a device plan waits for its work). Calls from several threads
  // take turns: a plan has one workspace.
  void run(const void* b, void* x) {
    std::lock_guard<std::mutex> lock(m_running);
    run_plan(b, x);
  }
  virtual const plan_description& plan() const = 0;

  dtype type() const noexcept { return m_type; }
  const shape_t& shape() const noexcept { return m_shape; }
  memory_space memory() const noexcept { return m_memory; }

protected:
  virtual void run_plan(const void* b, void* x) = 0;

  compiled(memory_space where, dtype t, shape_t shape, std::vector<factor_ptr> factors)
      : m_memory(where), m_type(t), m_shape(std::move(shape)), m_factors(std::move(factors)) {}

private:
  memory_space m_memory;
  dtype m_type;
  shape_t m_shape;
  std::vector<factor_ptr> m_factors;  // alive while the plan refers to them
  std::mutex m_running;
};

// The backends a module compiles for: host_backend (compiled_host.hpp, in _kronex) and
// device_backend (device/compiled_device.hpp, in the device modules).
struct host_backend;
struct device_backend;

// kronex::compile of `e` (solve: of its inverse, as K.solve(b) compiles) for operands of
// `shape` in value type T, on Backend.
template <class Backend, class T>
std::unique_ptr<compiled> compile_as(const expression_ptr& e, bool solve, const shape_t& shape,
                                     const compile_options& options);
// kronex::explain_plan of the same: the check and plan phases only, nothing factored.
template <class Backend, class T>
plan_description explain_as(const expression_ptr& e, bool solve, const shape_t& shape, const compile_options& options);

// The two, for the run-time value type t.
template <class Backend>
std::unique_ptr<compiled> compile(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                                  const compile_options& options) {
  return dsl::with_dtype(t, [&](auto zero) { return compile_as<Backend, decltype(zero)>(e, solve, shape, options); });
}
template <class Backend>
plan_description explain(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                         const compile_options& options) {
  return dsl::with_dtype(t, [&](auto zero) { return explain_as<Backend, decltype(zero)>(e, solve, shape, options); });
}

} // namespace kronex::python
