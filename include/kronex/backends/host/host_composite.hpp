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

  static void finish() {}

  static scaling_type prepare_scaling(const eigen_scaling<T>& s) { return s; }
  static std::pair<std::size_t, std::size_t> scaling_uploads(std::size_t, std::size_t) { return {0, 0}; }

  // x(i) *= scale / s(i), or 0 where |s(i)| <= cutoff (a dropped mode).
  void eigen_scale(const scaling_type& s, T* x) const {
    s.for_each_sum(m_extent, m_origin, [&](std::size_t i, const T& v) {
      x[i] = double(std::abs(v)) <= s.cutoff ? T(0) : x[i] * (s.scale / v);
    });
  }

  // The pseudo-inverse's rank-one tensors (their parts in this block), with G^{-1} and scratch.
  using rank_one = std::vector<std::vector<T>>;  // v_0 ⊗ ... ⊗ v_{D-1}
  struct rank_ones_type {
    std::vector<rank_one> parts;
    xt::xtensor<T, 2> gram_inverse;
    std::vector<T> dots;
  };
  using coefs_type = std::vector<T>;
  static std::pair<std::size_t, std::size_t> reduction_transfers(std::size_t) { return {0, 0}; }
  static std::pair<std::size_t, std::size_t> projection_uploads(std::size_t) { return {0, 0}; }

  rank_ones_type prepare_rank_ones(const std::vector<rank_one>& tensors, const xt::xtensor<T, 2>& gram_inverse) const {
    rank_ones_type r;
    for (const rank_one& v : tensors) {
      rank_one part(v.size());
      for (std::size_t d = 0; d < v.size(); ++d)
        part[d].assign(v[d].begin() + long(m_origin[d]), v[d].begin() + long(m_origin[d] + m_extent[d]));
      r.parts.push_back(std::move(part));
    }
    r.gram_inverse = gram_inverse;
    r.dots.assign(tensors.size(), T(0));
    return r;
  }
  static coefs_type allocate_coefs(std::size_t k) { return coefs_type(k, T(0)); }

  // c = G^{-1} [r_j^H x]_j.
  void projection_coefs(rank_ones_type& r, const T* x, coefs_type& c) const {
    block_dots(r, x);
    apply_gram_inverse(r, c);
  }
  // y -= sum_j c_j r_j.
  static void subtract_rank_ones(const rank_ones_type& r, const coefs_type& c, T* y) {
    for (std::size_t j = 0; j < r.parts.size(); ++j)
      for_each_entry(r.parts[j], [&](std::size_t i, const T& w) { y[i] -= c[j] * w; });
  }

protected:
  // r.dots = [r_j^H x]_j over this block.
  static void block_dots(rank_ones_type& r, const T* x) {
    for (std::size_t j = 0; j < r.parts.size(); ++j) {
      T s(0);
      for_each_entry(r.parts[j], [&](std::size_t i, const T& w) { s += conj_if_complex(w) * x[i]; });
      r.dots[j] = s;
    }
  }
  static void apply_gram_inverse(const rank_ones_type& r, coefs_type& c) {
    const std::size_t k = r.dots.size();
    for (std::size_t a = 0; a < k; ++a) {
      T s(0);
      for (std::size_t b = 0; b < k; ++b) s += r.gram_inverse(a, b) * r.dots[b];
      c[a] = s;
    }
  }

  // Calls f(i, w) with w = prod_d v_d[i_d] for every entry (C order).
  template <class F>
  static void for_each_entry(const rank_one& v, F&& f) {
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

private:
  shape_t m_shape, m_extent, m_origin;
  std::size_t m_size;
};

template <class T>
using host_composite_plan = composite_plan<T, host_composite_ops<T>>;

// Host tensors are in host memory, whole: a sparse_operator's or matrix_free's action runs on them.
template <class T>
struct runs_flat_operators<host_composite_ops<T>> : std::true_type {};

} // namespace kronex::detail
