#pragma once
// What both kinds of extension module need to turn Python's arguments into kronex calls: value
// type names, compile options, compiling with the GIL released, plans as (text, JSON). _kronex
// (module.cpp) compiles for the host; _kronex_cuda and _kronex_omp (device/module_device.cpp)
// for their device runtime.
#include <cstddef>
#include <memory>
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <kronex/core/error.hpp>
#include <kronex/core/options.hpp>

#include "compiled.hpp"
#include "core/dtype.hpp"
#include "exec/plan_json.hpp"

namespace kronex::python {

// A value type that does not fit (Python's DTypeError, a TypeError too).
class dtype_error : public kronex::error {
public:
  using kronex::error::error;
};

inline dtype dtype_from_name(const std::string& name) {
  if (auto t = dsl::dtype_from_name(name)) return *t;
  throw kronex::error("kronex: unsupported value type " + name + " (float32, float64, complex64 or complex128)");
}

inline compile_options options_of(std::size_t threads, double min_rcond, bool check_factors) {
  compile_options o;
  o.threads = threads;
  o.min_rcond = min_rcond;
  o.check_finite = check_factors;
  return o;
}

// Compiles on Backend with the GIL released: factoring may take long, and other Python threads
// may run.
template <class Backend>
std::shared_ptr<compiled> compile_released(const expression_ptr& e, bool solve, const shape_t& shape,
                                           const std::string& type, const compile_options& o) {
  const dtype t = dtype_from_name(type);
  // Factors are built in T (a conversion) with the GIL held: their caches are shared.
  dsl::with_dtype(t, [&](auto zero) {
    for (const auto& f : e->factors()) f->get<decltype(zero)>();
  });
  pybind11::gil_scoped_release release;
  return compile<Backend>(e, solve, shape, t, o);
}

// A plan as the package takes it: (the printed text, the JSON of `kronex explain --json`).
inline pybind11::tuple plan_text_and_json(const plan_description& p) {
  return pybind11::make_tuple(to_string(p), dsl::to_json(p).dump());
}

// The module's compile and explain functions on Backend, as the package calls them:
//   compile(expression, solve, shape, dtype name, threads, min_rcond, check_factors) -> compiled
//   explain(expression, solve, shape, dtype name, threads, min_rcond) -> (text, JSON)
template <class Backend>
void def_compile_and_explain(pybind11::module_& m, const char* compile_name, const char* explain_name) {
  m.def(compile_name, [](const std::shared_ptr<expression>& e, bool solve, const shape_t& shape, const std::string& type,
                         std::size_t threads, double min_rcond, bool check_factors) {
    return compile_released<Backend>(e, solve, shape, type, options_of(threads, min_rcond, check_factors));
  });
  m.def(explain_name, [](const std::shared_ptr<expression>& e, bool solve, const shape_t& shape, const std::string& type,
                         std::size_t threads, double min_rcond) {
    return plan_text_and_json(explain<Backend>(e, solve, shape, dtype_from_name(type), options_of(threads, min_rcond, false)));
  });
}

} // namespace kronex::python
