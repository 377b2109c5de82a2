#pragma once
// The host's hooks for composite plans (operator sums, compositions, fast diagonalisation; see
// backends/composite/composite_plan.hpp): leaves are host plans, buffers are std::vector, and
// the whole-tensor kernels are plain loops.
#include <complex>
#include <cstddef>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "../composite/composite_plan.hpp"
#include "host_plan.hpp"

namespace kronex::detail {

template <class T>
struct host_composite_ops {
  using leaf_plan = host_plan<T>;
  using buffer = std::vector<T>;
  using scaling_type = eigen_scaling<T>;
  // A rank-one tensor v_0 ⊗ ... ⊗ v_{D-1}.
  using rank_one_type = std::vector<std::vector<T>>;

  static std::string name() { return "host"; }
  static buffer allocate(std::size_t n) { return buffer(n, T(0)); }
  static T* data(buffer& b) { return b.data(); }

  static void axpy(std::size_t n, const T& a, const T* x, T* y) {
    for (std::size_t i = 0; i < n; ++i) y[i] += a * x[i];
  }
  static void scale(std::size_t n, const T& a, T* y) {
    for (std::size_t i = 0; i < n; ++i) y[i] *= a;
  }
  static void copy(std::size_t n, const T* x, T* y) { std::memcpy(y, x, n * sizeof(T)); }

  static constexpr bool projections = true;
  static void finish() {}

  static scaling_type prepare_scaling(const eigen_scaling<T>& s) { return s; }
  static std::pair<std::size_t, std::size_t> scaling_uploads(std::size_t, std::size_t) { return {0, 0}; }
  // x(i) *= scale / s(i), or 0 where |s(i)| <= cutoff (a dropped mode).
  static void eigen_scale(const scaling_type& s, T* x) {
    s.for_each_sum(s.sizes, shape_t(s.sizes.size(), 0), [&](std::size_t i, const T& v) {
      x[i] = double(std::abs(v)) <= s.cutoff ? T(0) : x[i] * (s.scale / v);
    });
  }

  static rank_one_type prepare_rank_one(const std::vector<std::vector<T>>& v) { return v; }

  // Calls f(i, w) with w = prod_d v_d[i_d] for every entry (C order).
  template <class F>
  static void for_each_entry(const rank_one_type& v, F&& f) {
    const std::size_t D = v.size();
    shape_t sizes(D);
    for (std::size_t d = 0; d < D; ++d) sizes[d] = v[d].size();
    const std::size_t N = product(sizes);
    std::vector<std::size_t> idx(D, 0);
    for (std::size_t i = 0; i < N; ++i) {
      T w(1);
      for (std::size_t d = 0; d < D; ++d) w *= v[d][idx[d]];
      f(i, w);
      for (std::size_t d = D; d-- > 0;) {
        if (++idx[d] < sizes[d]) break;
        idx[d] = 0;
      }
    }
  }
  // (⊗ v)^H x.
  static T rank_one_dot(const rank_one_type& v, const T* x) {
    T s(0);
    for_each_entry(v, [&](std::size_t i, const T& w) { s += conj_if_complex(w) * x[i]; });
    return s;
  }
  // x += a (⊗ v).
  static void rank_one_axpy(const rank_one_type& v, const T& a, T* x) {
    for_each_entry(v, [&](std::size_t i, const T& w) { x[i] += a * w; });
  }
};

template <class T>
using host_composite_plan = composite_plan<T, host_composite_ops<T>>;

} // namespace kronex::detail
