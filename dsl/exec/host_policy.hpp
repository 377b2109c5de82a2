#pragma once
// The host backend as chain_executable sees it: tensors are xt::xtensor, nothing moves.
#include <chrono>
#include <string>

#include <kronex/backends/host/host_operator.hpp>

#include <kronex_bench/membw.hpp>

namespace kronex::dsl::exec {

struct host_policy {
  template <class T, std::size_t D>
  using tensor = xt::xtensor<T, D>;
  struct run_guard {};

  static std::string name() { return "host"; }
  // Operator sums, multiples and compositions (exec/composite_program.hpp).
  template <class T, std::size_t D>
  using composite_operator = host_operator<T, D, kronex::detail::host_composite_plan<T>>;
  template <class T>
  static plan_description explain_composite(const operator_tree<T>& t, const shape_t& shape) {
    return kronex::detail::host_composite_plan<T>::explain(t, shape);
  }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> upload(xt::xtensor<T, D> b) { return b; }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> like(const xt::xtensor<T, D>& b) { return xt::xtensor<T, D>::from_shape(b.shape()); }
  // What explain() takes for an operand of this shape: the shape itself.
  template <class T, std::size_t D>
  static std::array<std::size_t, D> explain_like(const std::array<std::size_t, D>& shape) { return shape; }
  template <class T, std::size_t D>
  static const xt::xtensor<T, D>& download(const xt::xtensor<T, D>& x) { return x; }
  static double memory_bandwidth() { return kronex_bench::triad_bandwidth(); }
  // Times one call of f.
  struct stopwatch {
    template <class F>
    double time(F&& f) {
      const auto t0 = std::chrono::steady_clock::now();
      f();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
  };
};

} // namespace kronex::dsl::exec
