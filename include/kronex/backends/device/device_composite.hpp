#pragma once
// The device's hooks for composite plans (operator sums, compositions, fast diagonalisation; see
// backends/composite/composite_plan.hpp): leaves are device plans (dense GEMMs), buffers are
// device memory, and the whole-tensor kernels (axpy, the eigenvalue scaling) run in the device
// runtime on the default context's stream, which the leaves' plans share. The scaling's
// coefficients and eigenvalue vectors are uploaded once, at compile time: a solve makes no
// host<->device transfer.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../composite/composite_plan.hpp"
#include "device_buffer.hpp"
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
  // Projections (a pseudo-inverse that drops eigenvalue sums) are not run on the device.
  static constexpr bool projections = false;
  using rank_one_type = int;

  explicit device_composite_ops(shape_t s) : m_shape(std::move(s)), m_size(product(m_shape)) {}

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
  static scaling_type prepare_scaling(const eigen_scaling<T>& s) {
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
      a.local[k] = s.sizes[k];
      a.axis_offset[k] = s.axis_offset[k];
    }
    a.coefs = d.coefs.data();
    a.weights = d.weights.data();
    a.scale = s.scale;
    a.cutoff = s.cutoff;
    return d;
  }
  void eigen_scale(const scaling_type& s, T* x) const { device::eigen_scale<T>(ctx(), s.args, x); }

  static rank_one_type prepare_rank_one(const std::vector<std::vector<T>>&) { return 0; }
  static void rank_one_dots(const std::vector<rank_one_type>&, const T*, T*) {}
  static void rank_one_axpy(const rank_one_type&, const T&, T*) {}

private:
  shape_t m_shape;
  std::size_t m_size;
};

template <class T>
using device_composite_plan = composite_plan<T, device_composite_ops<T>>;

} // namespace kronex::detail
