#pragma once
// operator_desc<T>: the type-erased form of a kron expression that plans are compiled from.
// It views the user's factors (no copy); compiling copies what the plan needs, so a compiled plan
// never refers to the factors afterwards.
#include <cstddef>
#include <string>
#include <vector>

#include "../core/error.hpp"
#include "../core/op.hpp"
#include "../core/shape.hpp"
#include "../factors/factor_view.hpp"

namespace kronex {

template <class T>
struct operator_desc {
  std::vector<factor_view<T>> factors;
  op trans = op::none;
  bool inverse = false;

  shape_t sizes() const {
    shape_t s;
    for (const auto& f : factors) s.push_back(f.n);
    return s;
  }

  // "kron(f0,f1,f2)" with ^T, ^H or conj(...), inside inverse(...) for solves (after folding).
  std::string text() const {
    std::string s = "kron(";
    for (std::size_t k = 0; k < factors.size(); ++k) s += (k ? ",f" : "f") + std::to_string(k);
    s += ")";
    if (trans == op::transpose) s += "^T";
    if (trans == op::adjoint) s += "^H";
    if (trans == op::conjugate) s = "conj(" + s + ")";
    return inverse ? "inverse(" + s + ")" : s;
  }
};

namespace detail {
// The operand's shape must equal the factor sizes, mode by mode.
template <class T>
void check_operand_shape(const operator_desc<T>& d, const shape_t& shape, const char* what) {
  const shape_t sizes = d.sizes();
  if (shape.size() != sizes.size()) {
    throw dimension_mismatch(message("kronex: ", what, " has rank ", shape.size(), " (shape ",
                                     format_shape(shape), ") but the operator has ", sizes.size(),
                                     " factors (sizes ", format_shape(sizes), ")"));
  }
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    if (shape[k] != sizes[k]) {
      throw dimension_mismatch(message("kronex: ", what, " shape ", format_shape(shape),
                                       " does not match the operator's sizes ", format_shape(sizes),
                                       " at mode ", k, " (", shape[k], " != ", sizes[k], ")"));
    }
  }
}
} // namespace detail

} // namespace kronex
