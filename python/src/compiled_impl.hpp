#pragma once
// compile_as<Backend, T> and explain_as<Backend, T>, included once per value type and backend by
// compiled_*.cpp (host) and device/compiled_device_*.cpp. A Backend names the backend's two
// operator types and plans:
//   template <class T, std::size_t D> using kron_operator = ...;   // one Kronecker product
//   template <class T, std::size_t D> using tree_operator = ...;   // anything built with the algebra
//   template <class T> using kron_plan = ...;  template <class T> using tree_plan = ...;
//   static constexpr memory_space memory;  static void finish();    // waits for the run's work
#include <optional>
#include <utility>

#include <kronex/compile.hpp>

#include "compiled.hpp"
#include "core/rank.hpp"

namespace kronex::python {

namespace detail {

// A Kronecker product (maybe transposed or inverted) runs the single-product plan, as
// kronex::compile(kron(...), b) does; anything built with the algebra the composite plan.
template <class Backend, class T, std::size_t D>
class compiled_on final : public compiled {
public:
  compiled_on(const operator_tree<T>& t, dtype type, const shape_t& shape, std::vector<factor_ptr> factors)
      : compiled(Backend::memory, type, shape, std::move(factors)) {
    if (t.is_plain_kron()) {
      operator_desc<T> d = t.leaf;
      d.options = t.options;
      m_kron.emplace(d, shape);
    } else {
      m_tree.emplace(t, shape);
    }
  }

  const plan_description& plan() const override { return m_kron ? m_kron->plan() : m_tree->plan(); }

private:
  void run_plan(const void* b, void* x) override {
    const T* in = static_cast<const T*>(b);
    T* out = static_cast<T*>(x);
    if (m_kron) m_kron->run(in, out);
    else m_tree->run(in, out);
    Backend::finish();
  }

  std::optional<typename Backend::template kron_operator<T, D>> m_kron;
  std::optional<typename Backend::template tree_operator<T, D>> m_tree;
};

template <class T>
operator_tree<T> tree_for(const expression_ptr& e, bool solve, const shape_t& shape, const compile_options& options) {
  kronex::detail::check_shape(shape, e->sizes(), "the operand", kronex::detail::shape_source::factors);
  operator_tree<T> t = e->tree<T>();
  if (solve) kronex::detail::invert(t);
  t.options = options;
  return t;
}

} // namespace detail

template <class Backend, class T>
std::unique_ptr<compiled> compile_as(const expression_ptr& e, bool solve, const shape_t& shape,
                                     const compile_options& options) {
  const operator_tree<T> t = detail::tree_for<T>(e, solve, shape, options);
  return dsl::with_rank(shape.size(), [&](auto d) -> std::unique_ptr<compiled> {
    return std::make_unique<detail::compiled_on<Backend, T, decltype(d)::value>>(t, dsl::dtype_of<T>(), shape,
                                                                                  e->factors());
  });
}

template <class Backend, class T>
plan_description explain_as(const expression_ptr& e, bool solve, const shape_t& shape, const compile_options& options) {
  const operator_tree<T> t = detail::tree_for<T>(e, solve, shape, options);
  if (t.is_plain_kron()) {
    operator_desc<T> d = t.leaf;
    d.options = t.options;
    return Backend::template kron_plan<T>::explain(d, shape);
  }
  return Backend::template tree_plan<T>::explain(t, shape);
}

} // namespace kronex::python

// Inside namespace kronex::python.
#define KRONEX_PYTHON_INSTANTIATE(Backend, T)                                                                 \
  template std::unique_ptr<compiled> compile_as<Backend, T>(const expression_ptr&, bool, const shape_t&,      \
                                                            const compile_options&);                          \
  template plan_description explain_as<Backend, T>(const expression_ptr&, bool, const shape_t&,               \
                                                   const compile_options&);
