#pragma once
// chain_executable<T, D, Backend>: an evaluated program compiled for one value type, rank and
// backend. The backend policy says what a tensor is there and how it moves (host_policy.hpp,
// device_policy.hpp); the stages are built with the C++ API below, never by hand.
#include <algorithm>
#include <array>
#include <chrono>
#include <complex>
#include <cstddef>
#include <deque>
#include <optional>
#include <random>
#include <utility>
#include <vector>

#include <kronex/compile.hpp>
#include <kronex/factors/any_factor.hpp>
#include <kronex/plan/factor_store.hpp>

#include "core/memory.hpp"
#include "core/rank.hpp"
#include "exec/composite_program.hpp"
#include "exec/executable.hpp"

namespace kronex::dsl::exec {

// The program's factors as any_factor<T>, each held once however many stages use it: a typed
// factor is the evaluator's own (kept alive here, never copied, so the program may go away and a
// large dense factor is not held twice); an untyped identity is made into one of type T, once.
// Stages refer to them by address, so stages that share a factor_value share one factor (and,
// through one factor_store, its factorization).
template <class T>
class program_factors {
public:
  // The operator's factors.
  std::vector<const any_factor<T>*> of(const operator_value& op) {
    std::vector<const any_factor<T>*> out;
    for (const auto& f : op.factors) out.push_back(&hold(f));
    return out;
  }

private:
  const any_factor<T>& hold(const std::shared_ptr<const factor_value>& f) {
    for (const auto& [from, factor] : m_index)
      if (from == f.get()) return *factor;
    const any_factor<T>* held = std::visit([&](const auto& x) -> const any_factor<T>* {
      using F = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<F, identity_factor>) return &m_identities.emplace_back(x);
      else if constexpr (std::is_same_v<F, any_factor<T>>) return &x;
      else throw kronex::error("kronex dsl: internal error: a factor's value type differs from the program's");
    }, f->factor);
    m_held.push_back(f);
    m_index.emplace_back(f.get(), held);
    return *held;
  }

  std::vector<std::shared_ptr<const factor_value>> m_held;
  std::deque<any_factor<T>> m_identities;  // a deque: stable addresses as it grows
  // A linear search: a program's distinct factors are few (at most 6 per stage, mostly shared).
  std::vector<std::pair<const factor_value*, const any_factor<T>*>> m_index;
};

template <class T, std::size_t... I>
auto kron_of(const std::vector<const any_factor<T>*>& f, std::index_sequence<I...>) {
  return kronex::kron(*f[I]...);
}

// The operator's methods, called in the order the program wrote them (each returns the same
// expression type: a kron_expr over references to the factors). A loop, not a recursion: the
// evaluator bounds the count (max_operator_methods), not the stack.
template <class E>
E replay(const E& e, const std::vector<op_method>& methods) {
  std::optional<E> k(e);
  for (const op_method m : methods) {
    switch (m) {
      case op_method::transpose: k.emplace(k->transpose()); break;
      case op_method::adjoint: k.emplace(k->adjoint()); break;
      case op_method::inverse: k.emplace(k->inverse()); break;
    }
  }
  return std::move(*k);
}

// kronex::compile of `K.solve(b)` or `K.apply(b)`: what the C++ API evaluates for that result.
template <class T, std::size_t D, class Tensor>
auto compile_stage(const std::vector<const any_factor<T>*>& f, const stage& s, const Tensor& b, const compile_options& o) {
  const auto K = replay(kron_of<T>(f, std::make_index_sequence<D>{}), s.op->methods);
  if (s.what == result_value::kind::solve) {
    auto r = K.solve(b);
    return kronex::compile(r.op(), r.operand(), o);
  }
  auto r = K.apply(b);
  return kronex::compile(r.op(), r.operand(), o);
}

// kronex::explain_plan of the same result, from the shape alone (`like` stands for an operand of
// that shape on the backend): the check and plan phases only, nothing factored or allocated.
template <class T, std::size_t D, class Like>
plan_description explain_stage(const std::vector<const any_factor<T>*>& f, const stage& s, const Like& like,
                               const compile_options& o) {
  const auto K = replay(kron_of<T>(f, std::make_index_sequence<D>{}), s.op->methods);
  return kronex::explain_plan(s.what == result_value::kind::solve ? K.inverse() : K, like, o);
}

// The innermost operand on the host: the array, random(seed) or ones(); zeros for a bare operator.
template <class T, std::size_t D>
xt::xtensor<T, D> make_operand(const evaluated_program& p) {
  std::array<std::size_t, D> shape{};
  for (std::size_t k = 0; k < D; ++k) shape[k] = p.shape[k];
  xt::xtensor<T, D> b = xt::xtensor<T, D>::from_shape(shape);
  if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&p.operand)) {
    const auto& x = std::get<xt::xarray<T>>((*a)->array().data);
    std::copy(x.begin(), x.end(), b.begin());
  } else if (auto* g = std::get_if<std::shared_ptr<const generated_tensor>>(&p.operand)) {
    if ((*g)->what == generated_tensor::kind::ones) {
      b.fill(T(1));
    } else {
      std::mt19937_64 gen((*g)->seed);
      std::uniform_real_distribution<real_t<T>> u(-1, 1);
      for (auto& v : b) {
        if constexpr (value_traits<T>::is_complex) {
          const auto re = u(gen);
          v = T(re, u(gen));
        } else {
          v = u(gen);
        }
      }
    }
  } else {
    b.fill(T(0));
  }
  return b;
}

// f() for stage s, with the errors that are the program's pointing into it.
template <class F>
auto at_stage(const stage& s, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const singular_factor& e) {
    // Point at the factor where the program defined it.
    const auto& factor = *s.op->factors.at(e.mode());
    throw dsl_error(factor.where, "singular factor " + factor.text + " (mode " + std::to_string(e.mode()) +
                                 ", LAPACK info " + std::to_string(e.info()) + "): " + e.what());
  } catch (const invalid_factor& e) {
    throw dsl_error(s.where, e.what());
  } catch (const dimension_mismatch& e) {
    throw dsl_error(s.where, e.what());
  } catch (const size_limit_exceeded& e) {
    throw dsl_error(s.where, e.what());
  }  // other errors (a missing device, LAPACK or device failures) are not the program's
}

template <class T, std::size_t D, class Backend>
class chain_executable final : public executable {
  using tensor = typename Backend::template tensor<T, D>;
  using compiled = typename backend_traits<tensor>::template compiled_type<T, D>;

public:
  // The plans are made first (check and plan phases); with `allocate` false (explain) that is
  // all: no factorization, no operand, no buffers. Else what they need is checked against the
  // memory limit before anything is allocated, and the stages are compiled with one
  // factor_store, so a factor that several stages use is factored (and uploaded) once; the store
  // goes with the constructor, freeing the LU factors, while the plans keep the forms they run.
  chain_executable(const evaluated_program& p, bool allocate) : m_allocated(allocate) {
    std::array<std::size_t, D> shape{};
    for (std::size_t k = 0; k < D; ++k) shape[k] = p.shape[k];
    for (const stage& s : p.stages) {
      if (s.op->combined()) {  // an operator sum, multiple or composition: its own path
        m_plans.push_back(m_composite.prepare(m_plans.size(), s, p.shape, p.options, false));
        continue;
      }
      m_plans.push_back(at_stage(s, [&] {
        return explain_stage<T, D>(m_factors.of(*s.op), s, Backend::template explain_like<T, D>(shape), p.options);
      }));
    }
    if (!allocate) return;
    check_memory(bytes_needed(p), "the program", p.where);
    m_b = Backend::upload(make_operand<T, D>(p));
    m_x = Backend::like(m_b);
    compile_options options = p.options;
    options.store = std::make_shared<factor_store>();
    for (std::size_t k = 0; k < p.stages.size(); ++k) {
      const stage& s = p.stages[k];
      if (s.op->combined()) {
        m_plans[k] = m_composite.prepare(k, s, p.shape, p.options, true);
        continue;
      }
      m_ops.push_back(at_stage(s, [&] { return compile_stage<T, D>(m_factors.of(*s.op), s, m_b, options); }));
      m_plans[k] = m_ops.back().plan();
    }
  }

  std::string backend_name() const override { return Backend::name(); }
  const std::vector<plan_description>& plans() const override { return m_plans; }

  void run() override {
    if (!m_allocated) throw kronex::error("kronex dsl: internal error: running a program prepared for explain only");
    [[maybe_unused]] typename Backend::run_guard guard;
    const tensor* in = &m_b;
    for (std::size_t k = 0, next = 0; k < m_plans.size(); ++k, in = &m_x) {
      if (!m_composite.run(k, *in, m_x)) m_ops[next++](*in, m_x);
    }
  }

  io::npy_array result() const override {
    if (!m_allocated) throw kronex::error("kronex dsl: internal error: no result for a program prepared for explain only");
    return io::to_npy_array(xt::xarray<T>(Backend::download(m_x)));
  }

  double memory_bandwidth() const override { return Backend::memory_bandwidth(); }
  double timed_run() override {
    if (!m_stopwatch) m_stopwatch.emplace();  // on first use: explain-only programs need none
    return m_stopwatch->time([this] { run(); });
  }

private:
  // What preparing and running the program allocates, from the explained plans (m_plans): four
  // tensors of the operand's size (the operand, the result, and the result's two copies on its
  // way to a file; the device's are in memory too on the CPU device), every stage's factors and
  // workspace (counted per stage, though stages may share them), and the factoring of the
  // largest: LAPACK's working copy and the LU's rows, about twice the program it becomes.
  double bytes_needed(const evaluated_program& p) const {
    double values = 1;
    for (std::size_t n : p.shape) values *= double(n);
    double needs = 4 * values * sizeof(T), largest = 0;
    for (const plan_description& d : m_plans) {
      needs += double(d.workspace_bytes) + double(d.factor_bytes);
      largest = std::max(largest, double(d.factor_bytes));
    }
    return needs + 2 * largest;
  }

  bool m_allocated;
  tensor m_b, m_x;
  // The factors the stages were compiled from, held so that the program may go away.
  program_factors<T> m_factors;
  std::deque<compiled> m_ops;  // a deque: compiled operators are built in place, never moved
  std::vector<plan_description> m_plans;
  composite_stages<T, D, Backend> m_composite;  // the stages whose operator is a combination
  std::optional<typename Backend::stopwatch> m_stopwatch;
};

template <class Backend, class T>
std::unique_ptr<executable> prepare_on(const evaluated_program& p, bool allocate) {
  return with_rank(p.shape.size(), [&](auto d) -> std::unique_ptr<executable> {
    return std::make_unique<chain_executable<T, decltype(d)::value, Backend>>(p, allocate);
  });
}

} // namespace kronex::dsl::exec
