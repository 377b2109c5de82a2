#pragma once
// The host's hooks for composite plans (operator sums, compositions, fast diagonalisation; see
// backends/composite/composite_plan.hpp): leaves are host plans, buffers are std::vector, and
// the whole-tensor kernels are plain loops.
#include <array>
#include <complex>
#include <cstddef>
#include <cstring>
#include <memory>
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

  explicit host_composite_ops(shape_t s) : host_composite_ops(s, s, shape_t(s.size(), 0)) {}
  // The kernels on one block of a larger tensor (a distributed tensor's block): global shape,
  // the block's extent and its offset.
  host_composite_ops(shape_t global, shape_t extent, shape_t origin)
      : m_shape(std::move(global)), m_extent(std::move(extent)), m_origin(std::move(origin)), m_size(product(m_extent)) {}

  const shape_t& shape() const { return m_shape; }
  std::size_t local_size() const { return m_size; }
  static std::string name() { return "host"; }
  std::unique_ptr<leaf_plan> make_leaf(const operator_desc<T>& d) const { return std::make_unique<leaf_plan>(d, m_shape); }
  plan_description explain_leaf(const operator_desc<T>& d) const { return leaf_plan::explain(d, m_shape); }

  buffer allocate() const { return buffer(m_size, T(0)); }
  static T* data(buffer& b) { return b.data(); }

  void axpy(const T& a, const T* x, T* y) const {
    for (std::size_t i = 0; i < m_size; ++i) y[i] += a * x[i];
  }
  void scale(const T& a, T* y) const {
    for (std::size_t i = 0; i < m_size; ++i) y[i] *= a;
  }
  void copy(const T* x, T* y) const { std::memcpy(y, x, m_size * sizeof(T)); }

  static constexpr bool projections = true;
  static void finish() {}

  static scaling_type prepare_scaling(const eigen_scaling<T>& s) { return s; }
  static std::pair<std::size_t, std::size_t> scaling_uploads(std::size_t, std::size_t) { return {0, 0}; }

  // x(i) *= scale / s(i), or 0 where |s(i)| <= cutoff (a dropped mode).
  void eigen_scale(const scaling_type& s, T* x) const {
    s.for_each_sum(m_extent, m_origin, [&](std::size_t i, const T& v) {
      x[i] = double(std::abs(v)) <= s.cutoff ? T(0) : x[i] * (s.scale / v);
    });
  }

  // The rank-one tensor's part in this block.
  rank_one_type prepare_rank_one(const std::vector<std::vector<T>>& v) const {
    rank_one_type part(v.size());
    for (std::size_t d = 0; d < v.size(); ++d)
      part[d].assign(v[d].begin() + long(m_origin[d]), v[d].begin() + long(m_origin[d] + m_extent[d]));
    return part;
  }

  // Calls f(i, w) with w = prod_d v_d[i_d] for every entry (C order).
  template <class F>
  static void for_each_entry(const rank_one_type& v, F&& f) {
    const std::size_t D = v.size();
    std::size_t N = 1;
    for (const auto& vd : v) N *= vd.size();
    std::array<std::size_t, 6> idx{};  // rank <= 6: no allocation on the solve path
    for (std::size_t i = 0; i < N; ++i) {
      T w(1);
      for (std::size_t d = 0; d < D; ++d) w *= v[d][idx[d]];
      f(i, w);
      for (std::size_t d = D; d-- > 0;) {
        if (++idx[d] < v[d].size()) break;
        idx[d] = 0;
      }
    }
  }
  // out[j] = (⊗ r[j])^H x.
  static void rank_one_dots(const std::vector<rank_one_type>& r, const T* x, T* out) {
    for (std::size_t j = 0; j < r.size(); ++j) {
      T s(0);
      for_each_entry(r[j], [&](std::size_t i, const T& w) { s += conj_if_complex(w) * x[i]; });
      out[j] = s;
    }
  }
  // x += a (⊗ v).
  static void rank_one_axpy(const rank_one_type& v, const T& a, T* x) {
    for_each_entry(v, [&](std::size_t i, const T& w) { x[i] += a * w; });
  }

private:
  shape_t m_shape, m_extent, m_origin;
  std::size_t m_size;
};

template <class T>
using host_composite_plan = composite_plan<T, host_composite_ops<T>>;

} // namespace kronex::detail
