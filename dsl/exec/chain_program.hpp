#pragma once
// chain_executable<T, D, Backend>: an evaluated program compiled for one value type, rank and
// backend. The backend policy says what a tensor is there and how it moves (host_policy.hpp,
// device_policy.hpp); the stages are built with the C++ API below, never by hand.
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

#include "exec/composite_program.hpp"
#include "exec/executable.hpp"

namespace kronex::dsl::exec {

// The factors of an operator as any_factor<T> (an untyped identity takes T).
template <class T>
std::vector<any_factor<T>> factors_as(const operator_value& op) {
  std::vector<any_factor<T>> out;
  for (const auto& f : op.factors) {
    std::visit([&](const auto& x) {
      using F = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<F, identity_factor> || std::is_same_v<F, any_factor<T>>) out.emplace_back(x);
      else throw kronex::error("kronex dsl: internal error: a factor's value type differs from the program's");
    }, f->factor);
  }
  return out;
}

template <class T, std::size_t... I>
auto kron_of(const std::vector<any_factor<T>>& f, std::index_sequence<I...>) {
  return kronex::kron(f[I]...);
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
auto compile_stage(const std::vector<any_factor<T>>& f, const stage& s, const Tensor& b, const compile_options& o) {
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
plan_description explain_stage(const std::vector<any_factor<T>>& f, const stage& s, const Like& like) {
  const auto K = replay(kron_of<T>(f, std::make_index_sequence<D>{}), s.op->methods);
  return kronex::explain_plan(s.what == result_value::kind::solve ? K.inverse() : K, like);
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

template <class T, std::size_t D, class Backend>
class chain_executable final : public executable {
  using tensor = typename Backend::template tensor<T, D>;
  using compiled = typename backend_traits<tensor>::template compiled_type<T, D>;

public:
  // With `allocate` false (explain), only the plans are made (check and plan phases): no
  // factorization, no operand, no buffers.
  chain_executable(const evaluated_program& p, bool allocate) : m_allocated(allocate) {
    if (allocate) {
      m_b = Backend::upload(make_operand<T, D>(p));
      m_x = Backend::like(m_b);
    }
    std::array<std::size_t, D> shape{};
    for (std::size_t k = 0; k < D; ++k) shape[k] = p.shape[k];
    for (const stage& s : p.stages) {
      if (s.op->combined()) {  // an operator sum, multiple or composition: its own path
        m_plans.push_back(m_composite.prepare(m_plans.size(), s, p.shape, p.options, allocate));
        continue;
      }
      m_factors.push_back(factors_as<T>(*s.op));
      try {
        if (allocate) {
          m_ops.push_back(compile_stage<T, D>(m_factors.back(), s, m_b, p.options));
          m_plans.push_back(m_ops.back().plan());
        } else {
          m_plans.push_back(explain_stage<T, D>(m_factors.back(), s, Backend::template explain_like<T, D>(shape)));
        }
      } catch (const singular_factor& e) {
        // Point at the factor where the program defined it.
        const auto& f = *s.op->factors.at(e.mode());
        throw dsl_error(f.where, "singular factor " + f.text + " (mode " + std::to_string(e.mode()) +
                                     ", LAPACK info " + std::to_string(e.info()) + "): " + e.what());
      } catch (const invalid_factor& e) {
        throw dsl_error(s.where, e.what());
      } catch (const dimension_mismatch& e) {
        throw dsl_error(s.where, e.what());
      } catch (const size_limit_exceeded& e) {
        throw dsl_error(s.where, e.what());
      }  // other errors (a missing device, LAPACK or device failures) are not the program's
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
  bool m_allocated;
  tensor m_b, m_x;
  // The factors the compiled plans read (copies, so the program may go away); a deque: stable
  // addresses as it grows.
  std::deque<std::vector<any_factor<T>>> m_factors;
  std::deque<compiled> m_ops;  // a deque: compiled operators are built in place, never moved
  std::vector<plan_description> m_plans;
  composite_stages<T, D, Backend> m_composite;  // the stages whose operator is a combination
  std::optional<typename Backend::stopwatch> m_stopwatch;
};

// Calls f(std::integral_constant<std::size_t, D>{}) for the program's rank (1 to 6).
template <class F>
decltype(auto) with_rank(std::size_t d, F&& f) {
  switch (d) {
    case 1: return f(std::integral_constant<std::size_t, 1>{});
    case 2: return f(std::integral_constant<std::size_t, 2>{});
    case 3: return f(std::integral_constant<std::size_t, 3>{});
    case 4: return f(std::integral_constant<std::size_t, 4>{});
    case 5: return f(std::integral_constant<std::size_t, 5>{});
    case 6: break;
    default: throw kronex::error("kronex dsl: internal error: rank outside 1..6");
  }
  return f(std::integral_constant<std::size_t, 6>{});
}

template <class Backend, class T>
std::unique_ptr<executable> prepare_on(const evaluated_program& p, bool allocate) {
  return with_rank(p.shape.size(), [&](auto d) -> std::unique_ptr<executable> {
    return std::make_unique<chain_executable<T, decltype(d)::value, Backend>>(p, allocate);
  });
}

} // namespace kronex::dsl::exec
