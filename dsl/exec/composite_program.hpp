#pragma once
// composite_stages<T, D, Backend>: the stages of a program whose operator is a combination
// (operator sums, scalar multiples, compositions, pseudo-inverses; eval/operator_algebra.hpp).
// Each is compiled as kronex::compile compiles the same C++ expression: the operator_tree that
// composite_expr::describe would build (Kronecker products described as kron_expr describes
// them, then the same normalisation helpers in the same order), then the host's composite plan.
// An assembled operator is the flat leaf kronex makes of a sparse_operator<T> (a csr_spmv step:
// on the host its action(), on the device op(A) uploaded once in CSR and multiplied there).
// Plain Kronecker products keep chain_executable's own path.
#include <array>
#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <kronex/compile.hpp>
#include <kronex/factors/any_factor.hpp>
#include <kronex/operators/sparse_operator.hpp>

#include "eval/evaluator.hpp"

namespace kronex::dsl::exec {

// Defined in chain_program.hpp: a Kronecker product's methods, called in the program's order.
template <class E>
E replay(const E& e, const std::vector<op_method>& methods);

template <class T, std::size_t D, class Backend>
class composite_stages {
  using tensor = typename Backend::template tensor<T, D>;
  using compiled = typename Backend::template composite_operator<T, D>;

public:
  // Compiles (allocate) or only explains stage k, whose operator is a combination; its plan.
  plan_description prepare(std::size_t k, const stage& s, const shape_t& shape, const compile_options& o,
                           bool allocate) {
    {
      operator_tree<T> t;
      try {
        t = describe(*s.op, s.what == result_value::kind::solve);
      } catch (const dsl_error&) {
        throw;
      } catch (const kronex::error& e) {
        // The normalisation's refusals, such as the inverse of a pseudo-inverse in a composition.
        throw dsl_error(s.op->where, e.what());
      }
      t.options = o;
      try {
        if (!allocate) return Backend::template explain_composite<T>(t, shape);
        m_ops.emplace_back(t, shape);
        if (m_stage.size() <= k) m_stage.resize(k + 1, nullptr);
        m_stage[k] = &m_ops.back();
        return m_ops.back().plan();
      } catch (const not_separable& e) {
        // Such an operator can still be applied: as the operator of a Krylov solve (which the
        // library's message says already for a sum with an assembled operator in it).
        const std::string what = e.what();
        throw dsl_error(s.op->where, what +
                                         (s.what == result_value::kind::solve && what.find("Krylov") == std::string::npos
                                              ? "; to solve with it, use a Krylov solver: cg(A, b [, P]), "
                                                "bicgstab, gmres or minres"
                                              : ""));
      } catch (const backend_unavailable& e) {
        // A backend that cannot run here (the device backend with no device visible).
        throw dsl_error(s.op->where, e.what());
      } catch (const singular_factor& e) {
        // A sum's smallest eigenvalue sum, or a factor of one of its Kronecker products: the
        // message says which; the mode alone would not.
        throw dsl_error(s.op->where, "singular operator " + s.op->text + ": " + e.what());
      } catch (const invalid_factor& e) {
        throw dsl_error(s.where, e.what());
      } catch (const dimension_mismatch& e) {
        throw dsl_error(s.where, e.what());
      } catch (const size_limit_exceeded& e) {
        throw dsl_error(s.where, e.what());
      }
    }
  }

  // Stage k's compiled operator (prepared with allocate), or null.
  compiled* at(std::size_t k) { return k < m_stage.size() ? m_stage[k] : nullptr; }

  // x = op(b) for stage k when it is one of these (x may be b); false otherwise.
  bool run(std::size_t k, const tensor& b, tensor& x) {
    if (k >= m_stage.size() || !m_stage[k]) return false;
    (*m_stage[k])(b, x);
    return true;
  }

private:
  using tree = operator_tree<T>;

  // The factor as any_factor<T> (an untyped identity takes T), copied once per program.
  const any_factor<T>& factor(const factor_value& f) {
    auto it = m_factors.find(&f);
    if (it != m_factors.end()) return it->second;
    return std::visit([&](const auto& x) -> const any_factor<T>& {
      using F = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<F, identity_factor> || std::is_same_v<F, any_factor<T>>)
        return m_factors.emplace(&f, any_factor<T>(x)).first->second;
      else throw kronex::error("kronex dsl: internal error: a factor's value type differs from the program's");
    }, f.factor);
  }

  template <std::size_t... I>
  tree leaf(const operator_value& v, std::index_sequence<I...>) {
    const std::array<const any_factor<T>*, D> f{&factor(*v.factors.at(I))...};
    return tree::from_leaf(replay(kronex::kron(*f[I]...), v.methods).template describe<T>());
  }

  // An assembled leaf: the tree C++ gives for (1 * A).transpose() ..., A the sparse_operator<T>
  // (tree_of makes a flat leaf of its action(); a coefficient of 1 and no op leave it as it is).
  static tree assembled(const operator_value& v, const kronex::detail::inversion& inv) {
    const auto* a = std::get_if<sparse_operator<T>>(&v.assembled->op);
    if (!a) throw kronex::error("kronex dsl: internal error: an assembled operator's value type differs from the program's");
    std::vector<tree> operands;
    operands.push_back(kronex::detail::tree_of<T>(*a));
    return kronex::detail::combine_trees<T>(node_kind::scaled, std::move(operands), v.coefs.data(), v.transform, inv);
  }

  // composite_expr::describe for one combination, its operands' trees given.
  static tree combine(const operator_value& v, std::vector<tree> operands, const kronex::detail::inversion& inv) {
    const node_kind k = v.form == operator_form::scaled ? node_kind::scaled
                        : v.form == operator_form::sum  ? node_kind::sum
                                                        : node_kind::product;
    return kronex::detail::combine_trees<T>(k, std::move(operands), v.coefs.data(), v.transform, inv);
  }

  // The tree of `root` (inverted for a solve, as composite_expr::solve inverts), built bottom up
  // with an explicit stack: combinations may nest as deeply as the evaluator's limits allow.
  tree describe(const operator_value& root, bool solve) {
    struct frame {
      const operator_value* v;
      std::size_t next = 0;
      std::vector<tree> done;
    };
    std::vector<frame> stack;
    stack.push_back(frame{&root, 0, {}});
    while (true) {
      frame& f = stack.back();
      if (f.v->combined() && f.next < f.v->operands.size()) {
        const operator_value* child = f.v->operands[f.next++].get();
        stack.push_back(frame{child, 0, {}});  // f is not used after this
        continue;
      }
      const bool is_root = stack.size() == 1;
      const auto inv = is_root && solve ? f.v->inversion.inverted() : f.v->inversion;
      tree t = !f.v->combined()                          ? leaf(*f.v, std::make_index_sequence<D>{})
               : f.v->form == operator_form::assembled ? assembled(*f.v, inv)
                                                        : combine(*f.v, std::move(f.done), inv);
      stack.pop_back();
      if (stack.empty()) return t;
      stack.back().done.push_back(std::move(t));
    }
  }

  std::map<const factor_value*, any_factor<T>> m_factors;  // the copies the plans read
  std::deque<compiled> m_ops;                               // built in place, never moved
  std::vector<compiled*> m_stage;                           // by stage number
};

} // namespace kronex::dsl::exec
