#pragma once
// The closed set of step kinds a plan is made of, and the printable record of one step.
// Backends execute steps by kind (a switch without default: a kind a backend forgets to handle is
// a compiler warning, made an error in kronex's own build); they differ in how, not in what.
#include <cstddef>
#include <string>

#include "../core/op.hpp"
#include "../core/shape.hpp"

namespace kronex {

enum class step_kind {
  copy,   // x = b, when every factor is skipped (identity) and x is not b
  scale,  // a diagonal factor: multiply each hyperplane along the mode by d_i (or 1/d_i)
  solve,  // a 1D solve along the mode for every line of the tensor
  apply,  // a 1D matrix-vector product along the mode for every line of the tensor
  exchange,  // distributed plans: an all-to-all that changes which axes are split across ranks
};

inline const char* to_string(step_kind k) {
  switch (k) {
    case step_kind::copy: return "copy";
    case step_kind::scale: return "scale";
    case step_kind::solve: return "solve";
    case step_kind::apply: return "apply";
    case step_kind::exchange: return "exchange";
  }
  return "?";
}

struct step {
  step_kind kind = step_kind::copy;
  std::size_t mode = 0;
  long factor = -1;         // index of the factor (== mode) or -1 for copy
  op trans = op::none;
  std::string method;       // e.g. lu_subst, band_matvec, scale, memcpy
  shape_t view;             // the tensor as this step sees it: (lines before, n, lines after)
  shape_t view_strides;
  double flops = 0;         // real floating-point operations (complex multiply-add = 8)
  double bytes = 0;         // main-memory traffic estimate: read + write of the tensor
  // Runs slab by slab together with the next step (adjacent modes whose slab fits in cache):
  // this step reads the tensor, the next one writes it, and the slab between stays in cache.
  bool fused_with_next = false;
  // Host<->device copies this step makes each run (device plans: a stage_through_host step).
  std::size_t transfers = 0;
  double transfer_bytes = 0;
  // Exchange steps: the communicator, and the most messages and bytes any rank sends.
  std::string comm;
  std::size_t messages = 0;
  double message_bytes = 0;
};

} // namespace kronex
