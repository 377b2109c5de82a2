#pragma once
// krylov_executable<T, D, Backend>: a program ending with cg(A, b [, P], options), bicgstab, gmres
// or minres, run on a backend (host_policy.hpp, device_policy.hpp) with the library's solver
// (kronex::compile_krylov, whose solver type follows the tensor: krylov_solver on the host,
// device_krylov_solver on the device). A and P are what kronex::cg takes: an assembled operator
// is the kronex::sparse_operator<T> read from its file (or kronex::jacobi of it); a DSL operator
// is compiled exactly as the C++ API compiles the same expression for the backend's tensors (a
// Kronecker product: kronex::compile of it, as chain_executable compiles an apply; a
// combination: composite_stages), and handed to the solver as a kronex::matrix_free<T> calling
// that compiled operator (on the device, with device pointers), which is what the solver itself
// calls for an expression. So a DSL solve gives the C++ call's result bit for bit
// (tests/dsl/test_dsl_vs_cpp.cpp). On the host an assembled operator is handed over as a
// matrix_free calling its CSR product; on the device as the sparse_operator itself, which the
// solver uploads once and multiplies there.
#include <chrono>
#include <deque>
#include <optional>
#include <type_traits>
#include <variant>

#include <kronex/krylov/solver.hpp>
#include <kronex/operators/matrix_free.hpp>

#include "exec/chain_program.hpp"

namespace kronex::dsl::exec {

template <class T, std::size_t D, class Backend>
class krylov_executable final : public executable {
  using tensor = typename Backend::template tensor<T, D>;
  using compiled = typename backend_traits<tensor>::template compiled_type<T, D>;
  using solver_type = typename kronex::detail::krylov_target<tensor>::solver;
  static constexpr bool on_host = std::is_same_v<tensor, xt::xtensor<T, D>>;
  // What the solver gets as A or P.
  using operand = std::variant<matrix_free<T>, sparse_operator<T>>;

public:
  // Plans for A and P where they are DSL operators (A first); with `allocate` the operators are
  // compiled, the operand made and the solver (its workspace) allocated, once.
  krylov_executable(const evaluated_program& p, bool allocate) : m_allocated(allocate) {
    const krylov_value& k = *p.krylov;
    std::array<std::size_t, D> shape{};
    for (std::size_t i = 0; i < D; ++i) shape[i] = p.shape[i];
    const krylov_operand* roles[] = {&k.A, k.P ? &k.P : nullptr};
    for (const krylov_operand* o : roles) {
      if (!o || !o->op) continue;
      const stage s{result_value::kind::apply, o->op, o->text, o->where};
      if (o->op->combined()) {
        m_plans.push_back(m_composite.prepare(m_plans.size(), s, p.shape, p.options, false));
      } else {
        m_plans.push_back(at_stage(s, [&] {
          return explain_stage<T, D>(m_factors.of(*o->op), s, Backend::template explain_like<T, D>(shape), p.options);
        }));
      }
    }
    if (!allocate) return;
    check_memory(bytes_needed(p), "the program", p.where);
    m_b = Backend::upload(make_operand<T, D>(p));
    m_x = Backend::like(m_b);
    if constexpr (!on_host) m_zero = Backend::upload(xt::xtensor<T, D>(xt::zeros<T>(shape)));
    compile_options options = p.options;
    options.store = std::make_shared<factor_store>();
    std::size_t plan = 0;
    std::optional<operand> maps[2];
    for (std::size_t r = 0; r < 2; ++r) {
      const krylov_operand* o = roles[r];
      if (!o) continue;
      if (o->assembled) {
        const auto& a = std::get<sparse_operator<T>>(o->assembled->op);
        if constexpr (on_host) maps[r].emplace(matrix_free<T>(p.shape, [a](const T* x, T* y) { a.run(x, y); }));
        else maps[r].emplace(a);
        continue;
      }
      const stage s{result_value::kind::apply, o->op, o->text, o->where};
      if (o->op->combined()) {
        m_plans[plan] = m_composite.prepare(plan, s, p.shape, p.options, true);
        auto* op = m_composite.at(plan);
        maps[r].emplace(matrix_free<T>(p.shape, [op](const T* x, T* y) { op->run(x, y); }));
      } else {
        m_ops.push_back(at_stage(s, [&] { return compile_stage<T, D>(m_factors.of(*o->op), s, m_b, options); }));
        m_plans[plan] = m_ops.back().plan();
        auto* op = &m_ops.back();
        maps[r].emplace(matrix_free<T>(p.shape, [op](const T* x, T* y) { op->run(x, y); }));
      }
      ++plan;
    }
    krylov_options<double> opt = k.options;
    opt.history = p.krylov_history;
    try {
      std::visit([&](const auto& a) {
        if (!maps[1]) {
          m_solver.emplace(compile_krylov(k.method, a, m_b, opt));
          return;
        }
        std::visit([&](const auto& pre) { m_solver.emplace(compile_krylov(k.method, a, pre, m_b, opt)); }, *maps[1]);
      }, *maps[0]);
    } catch (const dsl_error&) {
      throw;
    } catch (const kronex::error& e) {
      throw dsl_error(k.where, e.what());
    }
  }

  std::string backend_name() const override { return Backend::name(); }
  const std::vector<plan_description>& plans() const override { return m_plans; }

  // One solve from x = 0. On the device, x is zeroed by a device copy and the solve makes only the
  // solver's reads (device_solver.hpp): no upload.
  void run() override {
    if (!m_allocated) throw kronex::error("kronex dsl: internal error: running a program prepared for explain only");
    if constexpr (on_host) m_x.fill(T(0));
    else Backend::copy(m_zero, m_x);
    m_result = (*m_solver)(m_b, m_x);
  }

  io::npy_array result() const override {
    if (!m_allocated) throw kronex::error("kronex dsl: internal error: no result for a program prepared for explain only");
    return io::to_npy_array(xt::xarray<T>(Backend::download(m_x)));
  }

  double memory_bandwidth() const override { return Backend::memory_bandwidth(); }
  double timed_run() override {
    if (!m_stopwatch) m_stopwatch.emplace();
    return m_stopwatch->time([this] { run(); });
  }
  const krylov_result* krylov() const override { return &m_result; }

private:
  // The operand and the solution (and, on the device, the zeros x starts from), the solver's
  // vectors (its method's, at most restart + 6 for gmres), and the plans' factors and
  // workspaces; the assembled matrices are already in host memory (on the device, a copy of each
  // is uploaded: counted too).
  double bytes_needed(const evaluated_program& p) const {
    double values = 1;
    for (std::size_t n : p.shape) values *= double(n);
    const std::size_t restart = p.krylov->method == krylov_method::gmres ? p.krylov->options.restart : 0;
    double needs = (8.0 + double(std::min<double>(double(restart), values))) * values * sizeof(T);
    for (const plan_description& d : m_plans) needs += double(d.workspace_bytes) + 3 * double(d.factor_bytes);
    if constexpr (!on_host) {
      needs += values * sizeof(T);
      for (const krylov_operand* o : {&p.krylov->A, &p.krylov->P}) {
        if (o->assembled) needs += double(o->assembled->nnz) * (sizeof(T) + sizeof(std::size_t)) + (values + 1) * sizeof(std::size_t);
      }
    }
    return needs;
  }

  bool m_allocated;
  tensor m_b, m_x, m_zero;  // m_zero: the device's x = 0, uploaded once (empty on the host)
  program_factors<T> m_factors;
  std::deque<compiled> m_ops;  // never moved: the solver's maps point at them
  composite_stages<T, D, Backend> m_composite;
  std::vector<plan_description> m_plans;
  std::optional<solver_type> m_solver;
  krylov_result m_result;
  std::optional<typename Backend::stopwatch> m_stopwatch;
};

template <class Backend, class T>
std::unique_ptr<executable> prepare_krylov_on(const evaluated_program& p, bool allocate) {
  return with_rank(p.shape.size(), [&](auto d) -> std::unique_ptr<executable> {
    return std::make_unique<krylov_executable<T, decltype(d)::value, Backend>>(p, allocate);
  });
}

} // namespace kronex::dsl::exec
