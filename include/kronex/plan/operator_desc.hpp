#pragma once
// operator_desc<T>: the type-erased form of a kron expression that plans are compiled from.
// It views the user's factors (no copy); compiling copies what the plan needs, so a compiled plan
// never refers to the factors afterwards.
#include <cstddef>
#include <string>
#include <vector>

#include "../core/error.hpp"
#include "../core/op.hpp"
#include "../core/options.hpp"
#include "../core/shape.hpp"
#include "../factors/factor_view.hpp"

namespace kronex {

template <class T>
struct operator_desc {
  std::vector<factor_view<T>> factors;
  op trans = op::none;
  bool inverse = false;
  compile_options options;  // set by compile(expr, like, options); copied into every derived description

  shape_t sizes() const {
    shape_t s;
    for (const auto& f : factors) s.push_back(f.n);
    return s;
  }

  // "kron(f0,f1,f2)" with ^T, ^H or conj(...), inside inverse(...) for solves (after folding).
  // Factors are numbered from `first` (an operator sum numbers them across its terms).
  std::string text(std::size_t first = 0) const {
    std::string s = "kron(";
    for (std::size_t k = 0; k < factors.size(); ++k) s += (k ? ",f" : "f") + std::to_string(first + k);
    s += ")";
    if (trans == op::transpose) s += "^T";
    if (trans == op::adjoint) s += "^H";
    if (trans == op::conjugate) s = "conj(" + s + ")";
    return inverse ? "inverse(" + s + ")" : s;
  }
};

namespace detail {
// `shape` must equal `expected` mode by mode; the message names both shapes and the first
// offending mode, or both ranks. `what` names the argument ("right-hand side", "output", ...);
// `against` says what the expected shape is: the operator's factor sizes or a compiled shape.
enum class shape_source { factors, compiled };

inline void check_shape(const shape_t& shape, const shape_t& expected, const char* what, shape_source against) {
  const bool factors = against == shape_source::factors;
  if (shape.size() != expected.size()) {
    throw dimension_mismatch(
        factors ? message("kronex: ", what, " has rank ", shape.size(), " (shape ", format_shape(shape),
                          ") but the operator has ", expected.size(), " factors (sizes ", format_shape(expected), ")")
                : message("kronex: ", what, " has rank ", shape.size(), " (shape ", format_shape(shape),
                          ") but the compiled shape ", format_shape(expected), " has rank ", expected.size()));
  }
  for (std::size_t k = 0; k < expected.size(); ++k) {
    if (shape[k] != expected[k]) {
      throw dimension_mismatch(message("kronex: ", what, " shape ", format_shape(shape), " does not match ",
                                       factors ? "the operator's sizes " : "the compiled shape ",
                                       format_shape(expected), " at mode ", k, " (", shape[k], " != ", expected[k], ")"));
    }
  }
}

// The operand's shape must equal the factor sizes, mode by mode.
template <class T>
void check_operand_shape(const operator_desc<T>& d, const shape_t& shape, const char* what) {
  check_shape(shape, d.sizes(), what, shape_source::factors);
}
} // namespace detail

} // namespace kronex
