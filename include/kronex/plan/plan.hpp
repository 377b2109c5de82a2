#pragma once
// plan_description: what a compiled plan will do, as a value. Backends fill it at compile time;
// printing it never shows pointers or timings, so printed plans are stable golden-test material.
#include <cmath>
#include <cstddef>
#include <iomanip>
#include <locale>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "../core/shape.hpp"
#include "step.hpp"

namespace kronex {

// One line of setup work per factor, done once at compile time.
struct factor_setup {
  std::size_t mode = 0;
  std::string factor;   // e.g. "banded n=64 kl=3 ku=3 clamped"
  std::string method;   // e.g. "gbtrf kl=3 ku=3", "getrf", "skipped", "scale"
  std::string result;   // e.g. "L nnz=189 U nnz=253 swaps=0"
  double rcond = -1;    // a solved factor's reciprocal condition estimate, once factored (else -1)
  std::string name;     // printed instead of "f<mode>" when set: "f4" in a sum, "axis 1" for an eigen set-up
};

struct plan_description {
  std::string backend;      // "host"
  std::string value_type;   // "double"
  std::string expression;   // e.g. "inverse(kron(f0,f1,f2)^T)"
  shape_t shape;
  std::vector<factor_setup> setup;
  std::vector<step> steps;
  std::size_t workspace_bytes = 0;  // all threads' together
  std::size_t factor_bytes = 0;
  // Threads a host plan splits its steps between (compile_options::threads); printed when > 1.
  std::size_t threads = 1;
  // Device plans count host<->device copies: those made once at compile time (uploads of the
  // factors' matrices) and those each run makes (the sum over the steps). Printed when set.
  bool counts_transfers = false;
  std::size_t setup_transfers = 0;
  std::size_t setup_transfer_bytes = 0;

  // True once the plan is instantiated (factored, allocated, uploaded): what a compiled operator
  // holds. An explained plan (check and plan phases only) has estimates where the numbers depend
  // on the factorization: see docs/plans.md.
  bool instantiated = false;

  double flops() const { double s = 0; for (auto& st : steps) s += step_info(st).flops; return s; }
  double bytes() const { double s = 0; for (auto& st : steps) s += step_info(st).bytes; return s; }
  std::size_t run_transfers() const { std::size_t s = 0; for (auto& st : steps) s += step_transfers(st); return s; }
  double run_transfer_bytes() const { double s = 0; for (auto& st : steps) s += step_transfer_bytes(st); return s; }
};

namespace detail {
inline std::string format_count(double v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  if (v >= 1e9) os << v / 1e9 << "G";
  else if (v >= 1e6) os << v / 1e6 << "M";
  else if (v >= 1e3) os << v / 1e3 << "k";
  else os << v;
  return os.str();
}
// Two significant digits: what the estimate is good for, and stable across machines' rounding.
inline std::string format_rcond(double v) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.precision(2);
  os << v;
  return os.str();
}
// A model's predicted time to two significant digits, in s, ms, us or ns: 270ns, 35us, 2.1ms.
inline std::string format_seconds(double s) {
  const char* unit = "s";
  if (s < 1e-6) s *= 1e9, unit = "ns";
  else if (s < 1e-3) s *= 1e6, unit = "us";
  else if (s < 1) s *= 1e3, unit = "ms";
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os.setf(std::ios::fixed);
  if (s >= 100) os << std::setprecision(0) << std::round(s / 10) * 10;
  else os << std::setprecision(s >= 10 ? 0 : 1) << s;
  os << unit;
  return os.str();
}
} // namespace detail

// Printed in the classic locale whatever the stream's, so plans compare equal everywhere.
inline std::ostream& operator<<(std::ostream& out, const plan_description& p) {
  std::ostringstream os;
  os.imbue(std::locale::classic());
  os << "plan " << p.expression << " on " << detail::format_layout(p.shape, detail::c_strides(p.shape))
     << " [" << p.backend << ", " << p.value_type << "]\n";
  os << "  setup\n";
  for (const auto& f : p.setup) {
    os << "    " << (f.name.empty() ? "f" + std::to_string(f.mode) : f.name) << "  " << f.factor << "  " << f.method;
    if (!f.result.empty()) os << "  " << f.result;
    if (f.rcond >= 0) os << "  rcond=" << detail::format_rcond(f.rcond);
    os << "\n";
  }
  os << "  steps\n";
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const step& st = p.steps[s];
    const step_base& b = step_info(st);
    const step_kind k = kind_of(st);
    os << "    " << s << "  " << to_string(k);
    if (const auto* e = std::get_if<exchange_step>(&st)) {
      os << "  " << step_method(st) << "  " << e->comm << "  messages=" << e->messages
         << "  bytes/rank=" << detail::format_count(e->message_bytes) << "  local "
         << detail::format_layout(b.view, b.view_strides);
      if (e->own_bytes > 0) os << "  own=" << detail::format_count(e->own_bytes) << "B";
      if (e->own_written_by >= 0) os << " written by step " << e->own_written_by;
      if (e->parts_packed) os << "  parts packed";
      if (e->chunks > 0) os << "  pipelined with the steps before in " << e->chunks << " chunks";
      if (e->read_by_next) os << "  read by step " << s + 1;
    } else {
      const bool acts_on_mode = k != step_kind::copy && k != step_kind::combine && k != step_kind::project &&
                                !std::holds_alternative<eigen_scale_step>(st) && !std::holds_alternative<flat_step>(st);
      if (acts_on_mode)
        os << "  mode " << b.mode << "  " << (b.factor_name.empty() ? "f" + std::to_string(b.factor) : b.factor_name)
           << ' ' << trans_letter(b.trans);
      os << "  " << step_method(st) << (fused_with_next(st) ? "  fused with " + std::to_string(s + 1) : std::string())
         << (interleaved_with_next(st) ? "  interleaved with " + std::to_string(s + 1) : std::string())
         << "  " << detail::format_layout(b.view, b.view_strides) << "  flops=" << detail::format_count(b.flops)
         << "  bytes=" << detail::format_count(b.bytes);
      if (b.model_subst_s >= 0)
        os << "  model: lu_subst " << detail::format_seconds(b.model_subst_s) << ", gemm "
           << detail::format_seconds(b.model_gemm_s);
    }
    if (!b.part.empty()) os << "  (" << b.part << ")";
    if (step_transfers(st))
      os << "  transfers=" << step_transfers(st) << " (" << detail::format_count(step_transfer_bytes(st)) << "B)";
    os << "\n";
  }
  os << "  total  steps=" << p.steps.size() << "  flops=" << detail::format_count(p.flops())
     << "  bytes=" << detail::format_count(p.bytes())
     << "  workspace=" << detail::format_count(double(p.workspace_bytes))
     << "B  factors=" << detail::format_count(double(p.factor_bytes)) << "B"
     << (p.threads > 1 ? "  threads=" + std::to_string(p.threads) : std::string()) << "\n";
  if (p.counts_transfers) {
    os << "  transfers  setup=" << p.setup_transfers << " (" << detail::format_count(double(p.setup_transfer_bytes))
       << "B)  per run=" << p.run_transfers() << " (" << detail::format_count(p.run_transfer_bytes()) << "B)\n";
  }
  return out << os.str();
}

inline std::string to_string(const plan_description& p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

} // namespace kronex
