#include "compiled.hpp"

namespace kronex::python {

std::unique_ptr<compiled> compile(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                                  const compile_options& options) {
  return dsl::with_dtype(t, [&](auto zero) { return compile_as<decltype(zero)>(e, solve, shape, options); });
}

plan_description explain(const expression_ptr& e, bool solve, const shape_t& shape, dtype t,
                         const compile_options& options) {
  return dsl::with_dtype(t, [&](auto zero) { return explain_as<decltype(zero)>(e, solve, shape, options); });
}

} // namespace kronex::python
