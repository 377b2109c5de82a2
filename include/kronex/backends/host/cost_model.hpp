#pragma once
// The host planner's cost model: the predicted time of a solve along one mode, run as the LU's
// row program in panels (substitution) or as GEMMs with the dense inverse, so the planner can
// pick the faster per mode (compile_options::solves). The constants are fixed, fitted to
// measurements (bench_solve_methods, docs/performance.md), not measured at compile time: the
// same expression gets the same plan on every machine, and plans stay golden-test material.
//
//   substitution: bytes * (move + madd * coefficients per row) [+ lines * line, last mode]
//   dense inverse: values * n multiply-adds at the GEMM rate + bytes * stream + calls * call
// (a middle mode makes one GEMM per slab, the others one). The substitution's cost hardly depends
// on n, the GEMMs' grows with it: small n and wide bands favour the GEMMs.
#include <cstddef>

#include "../../core/options.hpp"
#include "../../core/value_traits.hpp"

namespace kronex::detail {

struct solve_prediction {
  double subst_s = 0, gemm_s = 0;
};

template <class T>
struct solve_cost_model {
  // Per byte of the tensor (a value's gather into a panel and scatter back; twice as much per
  // value for double as for float), per byte and row-program coefficient (a multiply-add on V
  // lines at once, latency-bound), and per line of the last mode (its lines are transposed into
  // strips). Complex multiply-adds are four real ones; with real coefficients (a real matrix:
  // the kernels run on the values as reals, row_program::real_part) a complex value costs what
  // its two reals do.
  static constexpr double move_s = 0.24e-9;
  static constexpr double real_madd_s = 0.0125e-9;
  static constexpr double madd_s = (value_traits<T>::is_complex ? 4.0 : 1.0) * real_madd_s;
  static constexpr double last_mode_move = 1.3;
  static constexpr double last_line_s = 1.5e-9;
  // GEMMs: real flops at the single-core rate of the host BLAS (OpenBLAS, AVX-512: about
  // 55 GFLOP/s in double, twice that in float), plus streaming the tensor through (read, write,
  // an in-place chunk's copy back; complex GEMMs with small n stream at about a third of the
  // real ones' rate), and a fixed cost per BLAS call.
  static constexpr double flop_s = (sizeof(real_t<T>) == 4 ? 1.0 / 110e9 : 1.0 / 55e9);
  static constexpr double madd_flops = value_traits<T>::is_complex ? 8.0 : 2.0;
  static constexpr double stream_s = (value_traits<T>::is_complex ? 0.25e-9 : 0.09e-9);  // zgemm: slower at small n
  static constexpr double call_s = 0.1e-6;
  // Two adjacent modes solved as a fused pair move the tensor once for both, through a slab
  // that stays in cache: measured, that saves about half of one step's moves.
  static constexpr double fused_pair_saving = 0.5;

  static solve_prediction predict(std::size_t L, std::size_t n, std::size_t R, std::size_t coefficients,
                                  bool real_coefficients) {
    const double values = double(L) * double(n) * double(R), bytes = values * double(sizeof(T));
    const bool last = R == 1;
    const double madd = real_coefficients ? real_madd_s : madd_s;
    solve_prediction p;
    p.subst_s = bytes * (move_s * (last ? last_mode_move : 1.0) + madd * double(coefficients) / double(n)) +
                (last ? double(L) * last_line_s : 0.0);
    const double calls = last ? 1.0 : double(L);
    p.gemm_s = values * double(n) * madd_flops * flop_s + bytes * stream_s + calls * call_s;
    return p;
  }
};

// The smallest predicted substitution that automatic would replace by GEMMs, and the margin the
// GEMMs must win by: below them the saving is within the model's error, and the substitution
// (backward stable, no n^2 matrix) is kept: tensors of a few thousand values stay on it.
inline constexpr double dense_inverse_min_s = 10e-6;
inline constexpr double dense_inverse_margin = 0.8;

// Whether a solve runs as GEMMs with the dense inverse, for the options' choice.
inline bool use_dense_inverse(solve_method how, const solve_prediction& p) {
  switch (how) {
    case solve_method::substitution: return false;
    case solve_method::dense_inverse: return true;
    case solve_method::automatic: break;
  }
  return p.subst_s >= dense_inverse_min_s && p.gemm_s < dense_inverse_margin * p.subst_s;
}

} // namespace kronex::detail
