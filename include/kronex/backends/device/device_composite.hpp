#pragma once
// The device's hooks for composite plans (operator sums, compositions, fast diagonalisation; see
// backends/composite/composite_plan.hpp): leaves are device plans (dense GEMMs), buffers are
// device memory, and the whole-tensor kernels (axpy, the eigenvalue scaling, a pseudo-inverse's
// projections) run in the device runtime on the default context's stream, which the leaves'
// plans share. Their data (the scaling's coefficients and eigenvalue vectors, the projections'
// rank-one tensors and Gram inverse) is uploaded once, at compile time, and the projections'
// dot products and coefficients stay on the device: a solve makes no host<->device transfer.
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../composite/composite_plan.hpp"
#include "device_buffer.hpp"
#include "device_csr.hpp"
#include "device_plan.hpp"
#include "transfers.hpp"

namespace kronex::detail {

template <class T>
struct device_composite_ops {
  using leaf_plan = device_plan<T>;
  using buffer = device_buffer<T>;
  struct scaling_type {
    device_buffer<T> coefs;
    device_buffer<real_t<T>> weights;
    device::eigen_scale_args<T> args;
  };
  // A pseudo-inverse's rank-one tensors (their parts in this block), G^{-1} and the reduction's
  // scratch, on the device.
  struct rank_ones_type {
    device_buffer<T> vectors, gram_inverse, partials, dots;
    device::rank_one_args<T> args;
  };
  using coefs_type = device_buffer<T>;

  explicit device_composite_ops(shape_t s) : device_composite_ops(s, s, shape_t(s.size(), 0)) { m_whole = true; }
  // The kernels on one block of a larger tensor (a distributed tensor's block): global shape,
  // the block's extent and its offset.
  device_composite_ops(shape_t global, shape_t extent, shape_t origin)
      : m_shape(std::move(global)), m_extent(std::move(extent)), m_origin(std::move(origin)), m_size(product(m_extent)) {}

  const shape_t& shape() const { return m_shape; }
  std::size_t local_size() const { return m_size; }
  static std::string name() { return std::string("device ") + device::system_name(); }
  std::unique_ptr<leaf_plan> make_leaf(const operator_desc<T>& d) const { return std::make_unique<leaf_plan>(d, m_shape); }
  plan_description explain_leaf(const operator_desc<T>& d) const { return leaf_plan::explain(d, m_shape); }
  static device::context& ctx() { return *device::default_context(); }
  buffer allocate() const { return buffer(m_size); }
  static T* data(buffer& b) { return b.data(); }

  void axpy(const T& a, const T* x, T* y) const { device::axpy<T>(ctx(), m_size, a, x, y); }
  void scale(const T& a, T* y) const { device::scale<T>(ctx(), m_size, a, y); }
  void copy(const T* x, T* y) const { device::copy_on_device(ctx(), y, x, m_size * sizeof(T)); }
  static void finish() { ctx().synchronize(); }

  static std::pair<std::size_t, std::size_t> scaling_uploads(std::size_t terms, std::size_t axis_total) {
    return {2, terms * (sizeof(T) + axis_total * sizeof(real_t<T>))};
  }
  scaling_type prepare_scaling(const eigen_scaling<T>& s) const {
    scaling_type d{device_buffer<T>(s.coefs.size()), device_buffer<real_t<T>>(s.weights.size()), {}};
    transfer(device::copy_direction::host_to_device, d.coefs.data(), s.coefs.data(), d.coefs.bytes(),
             "eigenvalue scaling coefficients");
    transfer(device::copy_direction::host_to_device, d.weights.data(), s.weights.data(), d.weights.bytes(),
             "eigenvalue scaling weights");
    device::eigen_scale_args<T>& a = d.args;
    a.rank = int(s.sizes.size());
    a.terms = s.terms();
    a.axis_total = s.axis_total;
    for (std::size_t k = 0; k < s.sizes.size(); ++k) {
      a.local[k] = m_extent[k];
      a.origin[k] = m_origin[k];
      a.axis_offset[k] = s.axis_offset[k];
    }
    a.coefs = d.coefs.data();
    a.weights = d.weights.data();
    a.scale = s.scale;
    a.cutoff = s.cutoff;
    return d;
  }
  void eigen_scale(const scaling_type& s, T* x) const { device::eigen_scale<T>(ctx(), s.args, x); }

  // An operator with no Kronecker structure (composite_plan.hpp, has_flat_hooks), on a whole
  // device tensor: a sparse_operator's op(A) is built in CSR on the host and uploaded once, then
  // multiplied by the runtime's kernel; a matrix_free's function is called with device pointers
  // (after the work before it is done), as the device Krylov solvers call it, and gives no
  // transpose. A block of a distributed tensor is not the whole operand: refused.
  std::pair<std::size_t, std::size_t> flat_uploads(const operator_tree<T>& t) const {
    if (!m_whole) {
      throw backend_unavailable(message("kronex: ", t.text(), " (an operator with no Kronecker structure) acts on whole "
                                        "tensors: host and device tensors, not distributed ones"));
    }
    if (t.flat->csr) return device_csr<T>::uploads(*t.flat->csr);
    if (flat_op(t) != op::none) {
      throw invalid_operator(message("kronex: ", t.text(), ": ", t.flat->name, " gives only its own action y = A x, not ",
                                     flat_op(t) == op::transpose ? "its transpose"
                                     : flat_op(t) == op::adjoint ? "its adjoint" : "its conjugate"));
    }
    return {0, 0};
  }
  std::function<void(const T*, T*)> make_flat(const operator_tree<T>& t) const {
    flat_uploads(t);
    if (t.flat->csr) {
      auto csr = std::make_shared<const device_csr<T>>(csr_with(*t.flat->csr, flat_op(t)), device::default_context());
      return [csr](const T* x, T* y) { csr->run(x, y); };
    }
    return [f = t.flat->apply](const T* x, T* y) {
      ctx().synchronize();
      f(x, y);
    };
  }

  static std::pair<std::size_t, std::size_t> reduction_transfers(std::size_t) { return {0, 0}; }
  std::pair<std::size_t, std::size_t> projection_uploads(std::size_t k) const {
    std::size_t block_total = 0;
    for (std::size_t n : m_extent) block_total += n;
    return {2, k * (block_total + k) * sizeof(T)};
  }
  // Uploads the parts of the rank-one tensors r_j in this block (at most axis_total values each)
  // and G^{-1}.
  rank_ones_type prepare_rank_ones(const std::vector<std::vector<std::vector<T>>>& tensors,
                                   const xt::xtensor<T, 2>& gram_inverse) const {
    const std::size_t k = tensors.size(), D = m_shape.size();
    std::size_t block_total = 0;
    for (std::size_t n : m_extent) block_total += n;
    std::vector<T> flat;  // [j][axis_offset[d] + i_d]
    flat.reserve(k * block_total);
    for (const auto& v : tensors)
      for (std::size_t d = 0; d < D; ++d)
        flat.insert(flat.end(), v[d].begin() + long(m_origin[d]), v[d].begin() + long(m_origin[d] + m_extent[d]));
    const std::vector<T> g(gram_inverse.begin(), gram_inverse.end());  // row-major k x k
    rank_ones_type r{device_buffer<T>(flat.size()), device_buffer<T>(g.size()),
                     device_buffer<T>(k * device::rank_one_partitions), device_buffer<T>(k), {}};
    transfer(device::copy_direction::host_to_device, r.vectors.data(), flat.data(), r.vectors.bytes(),
             "pseudo-inverse rank-one tensors");
    transfer(device::copy_direction::host_to_device, r.gram_inverse.data(), g.data(), r.gram_inverse.bytes(),
             "pseudo-inverse Gram inverse");
    device::rank_one_args<T>& a = r.args;
    a.rank = int(D);
    a.count = k;
    a.axis_total = block_total;
    for (std::size_t d = 0, off = 0; d < D; off += m_extent[d], ++d) {
      a.local[d] = m_extent[d];
      a.axis_offset[d] = off;
    }
    a.vectors = r.vectors.data();
    a.gram_inverse = r.gram_inverse.data();
    a.partials = r.partials.data();
    a.dots = r.dots.data();
    return r;
  }
  static coefs_type allocate_coefs(std::size_t k) { return coefs_type(k); }
  // c = G^{-1} [r_j^H x]_j.
  void projection_coefs(rank_ones_type& r, const T* x, coefs_type& c) const {
    block_dots(r, x);
    apply_gram_inverse(r, c);
  }
  // y -= sum_j c_j r_j.
  void subtract_rank_ones(const rank_ones_type& r, const coefs_type& c, T* y) const {
    device::rank_one_subtract<T>(ctx(), r.args, c.data(), y);
  }

protected:
  // r.dots = [r_j^H x]_j over this block (in device memory).
  static void block_dots(rank_ones_type& r, const T* x) { device::rank_one_dots<T>(ctx(), r.args, x); }
  static void apply_gram_inverse(rank_ones_type& r, coefs_type& c) { device::rank_one_combine<T>(ctx(), r.args, c.data()); }

private:
  // The leaf's op for a real T: an adjoint is a transpose, a conjugate nothing.
  static op flat_op(const operator_tree<T>& t) {
    if (value_traits<T>::is_complex) return t.flat_op;
    return t.flat_op == op::adjoint ? op::transpose : t.flat_op == op::conjugate ? op::none : t.flat_op;
  }

  shape_t m_shape, m_extent, m_origin;
  std::size_t m_size;
  bool m_whole = false;  // the operand's whole tensor (not a distributed tensor's block)
};

// Device tensors are whole in device memory: a sparse_operator's or matrix_free's action runs on
// them (the hooks above).
template <class T>
struct runs_flat_operators<device_composite_ops<T>> : std::true_type {};

template <class T>
using device_composite_plan = composite_plan<T, device_composite_ops<T>>;

} // namespace kronex::detail
