#pragma once
// device_plan<T>: a compiled device plan, in the four phases every backend has:
//   check        check_device(): shapes, the schedule's rules, and the device's size limits
//                (the BLAS integer range, the dense factor size), before anything is allocated;
//   plan         plan_device(): the steps, their costs, the uploads and buffers it will need,
//                the printable description; no device, no allocation (explain stops here);
//   instantiate  the device_plan constructor: each 1D factor becomes a dense n x n matrix built
//                on the host by the host plan itself (its inverse M = solve(I) for solves, op(A)
//                for applies, so pivoting, periodic corners, transposes and conjugation are
//                exactly the host path's), uploaded once; the ping-pong buffers are allocated;
//   run          one GEMM per mode on the device, reading and writing the tensor in place in
//                memory order (no transposes), ping-ponging between the two buffers; the last
//                step writes the output. Diagonal factors are scales; identities are skipped.
// A factor the device cannot densify (a function_solver, which has no entries) runs as a
// stage_through_host step.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/value_traits.hpp"
#include "../../plan/operator_desc.hpp"
#include "../../plan/plan.hpp"
#include "../../plan/schedule.hpp"
#include "../host/host_plan.hpp"
#include "device_buffer.hpp"
#include "runtime.hpp"
#include "transfers.hpp"

namespace kronex {

// The device backend's size limits, checked before anything is allocated.
struct device_limits {
  // A solved or applied factor becomes a dense n x n matrix on the device: n at most this
  // (32768: 8 GiB in double, 16 GiB in complex<double>).
  static constexpr std::size_t max_factor_size = std::size_t(1) << 15;
  // cuBLAS takes int dimensions and leading dimensions (its strides are 64-bit): the lines before
  // a mode, n, and the lines after it, each at most this.
  static constexpr std::size_t max_blas_dimension = std::size_t(INT_MAX);
};

namespace detail {

// The step kinds the device runs.
using device_step = std::variant<copy_step, scale_step, gemm_step, staged_step>;

// The device backend's rule: a factor with entries becomes a dense matrix; a function solver,
// known only by its solve, stays on the host.
template <class T>
bool densified_on_device(const factor_view<T>& f) {
  return f.kind != factor_kind::function;
}

// Check phase.
template <class T>
void check_device(const operator_desc<T>& d, const shape_t& shape) {
  check_host(d, shape);
  for (const auto& t : schedule(d)) {
    if (t.kind != task_kind::solve && t.kind != task_kind::apply) continue;
    const factor_view<T>& f = d.factors[t.mode];
    if (!densified_on_device(f)) continue;
    if (f.n > device_limits::max_factor_size)
      throw size_limit_exceeded(message("kronex: device plan: the factor for mode ", t.mode, " (", f.describe(),
                                        ") would be a dense ", f.n, "x", f.n, " matrix on the device: more than the "
                                        "limit of n = ", device_limits::max_factor_size,
                                        " (device_limits::max_factor_size); use the host backend"));
    const auto view = mode_view(shape, t.mode).first;
    for (std::size_t v : {view[0], view[1], view[2]})  // strides (n R) are 64-bit in the runtime
      if (v > device_limits::max_blas_dimension)
        throw size_limit_exceeded(message("kronex: device plan: mode ", t.mode, " of shape ", format_shape(shape),
                                          " needs a GEMM dimension of ", v, ", more than the BLAS integer range (",
                                          device_limits::max_blas_dimension, ", device_limits::max_blas_dimension)"));
  }
}

// The factor k alone, every other mode an identity of `shape`'s size: what the host runs for
// mode k. Mode numbers stay those of the user's expression, in plans and in errors.
template <class T>
operator_desc<T> single_mode(const operator_desc<T>& d, std::size_t k, const shape_t& shape) {
  operator_desc<T> one;
  one.trans = d.trans;
  one.inverse = d.inverse;
  for (std::size_t j = 0; j < shape.size(); ++j) {
    factor_view<T> id;
    id.kind = factor_kind::identity;
    id.n = shape[j];
    one.factors.push_back(j == k ? d.factors[j] : id);
  }
  return one;
}

// The shape of one line along mode k: n_k there, 1 elsewhere.
inline shape_t line_shape(const shape_t& shape, std::size_t k) {
  shape_t s(shape.size(), 1);
  s[k] = shape[k];
  return s;
}

// The result of the plan phase.
struct device_blueprint {
  plan_description desc;
  std::vector<device_step> steps;  // parallel to desc.steps
  std::size_t buffers = 0;         // ping-pong buffers of the tensor's size
  bool staging = false;            // a host copy of the tensor for staged steps
};

// Plan phase (after the check): no device is needed, nothing is allocated.
template <class T>
device_blueprint plan_device(const operator_desc<T>& d, const shape_t& shape) {
  using C = host_costs<T>;
  check_device(d, shape);
  device_blueprint bp;
  plan_description& desc = bp.desc;
  desc.backend = std::string("device ") + device::system_name();
  desc.value_type = value_traits<T>::name;
  desc.expression = d.text();
  desc.shape = shape;
  desc.counts_transfers = true;
  desc.setup = skipped_setup(d);
  const std::size_t size = product(shape);
  auto upload = [&](std::size_t values) {
    ++desc.setup_transfers;
    desc.setup_transfer_bytes += values * sizeof(T);
    desc.factor_bytes += values * sizeof(T);
  };
  for (const auto& t : schedule(d)) {
    factor_setup& fs = desc.setup[t.mode];
    const factor_view<T>& f = d.factors[t.mode];
    switch (t.kind) {
      case task_kind::copy: {
        auto st = make_step<copy_step>(t, d.trans, shape, sizeof(T));
        st.on_device = true;
        bp.steps.push_back(st);
        break;
      }
      case task_kind::scale: {
        auto st = make_step<scale_step>(t, d.trans, shape, sizeof(T));
        fs.method = "scale";
        fs.result = message("uploaded ", f.n, " values (", format_count(double(f.n * sizeof(T))), "B)");
        st.flops = double(size) * C::mul_flops;
        upload(f.n);
        bp.steps.push_back(st);
        break;
      }
      case task_kind::solve:
      case task_kind::apply:
        if (densified_on_device(f)) {
          auto st = make_step<gemm_step>(t, d.trans, shape, sizeof(T));
          const std::size_t n = f.n, L = st.view[0], R = st.view[2];
          const std::string host_method = host_plan<T>::explain(single_mode(d, t.mode, line_shape(shape, t.mode)),
                                                                 line_shape(shape, t.mode)).setup[t.mode].method;
          st.how = R == 1 ? gemm_step::layout::last : (L == 1 ? gemm_step::layout::first : gemm_step::layout::batched);
          st.solve = t.kind == task_kind::solve;
          fs.method = message(d.inverse ? "inverse by host solve (" : "matrix by host apply (", host_method, ")");
          fs.result = message("uploaded ", n, "x", n, " (", format_count(double(n * n * sizeof(T))), "B)");
          st.flops = double(size) * double(n) * C::madd_flops;
          st.bytes += double(n * n * sizeof(T));
          upload(n * n);
          bp.steps.push_back(st);
        } else {
          auto st = make_step<staged_step>(t, d.trans, shape, sizeof(T));  // flops: the user's function's
          fs.method = "staged through host";
          fs.result = "host method function";
          st.transfers = 2;
          st.transfer_bytes = 2.0 * double(size) * sizeof(T);
          bp.staging = true;
          bp.steps.push_back(st);
        }
        break;
    }
  }
  // Ping-pong buffers: every step but the last writes one that it does not read; a lone GEMM
  // step needs one too, for in-place runs (x == b).
  const std::size_t steps = bp.steps.size();
  const bool lone_gemm = steps == 1 && std::holds_alternative<gemm_step>(bp.steps[0]);
  bp.buffers = steps >= 3 ? 2 : (steps == 2 || lone_gemm ? 1 : 0);
  desc.workspace_bytes = (bp.buffers + (bp.staging ? 1 : 0)) * size * sizeof(T);
  for (const device_step& s : bp.steps) desc.steps.push_back(to_step(s));
  return bp;
}

template <class T>
class device_plan {
public:
  using value_type = T;

  // Check, plan and instantiate.
  device_plan(const operator_desc<T>& d, const shape_t& shape) : device_plan(d, plan_device<T>(d, shape)) {}

  // Instantiate a planned blueprint: d must be the description it was planned from.
  device_plan(const operator_desc<T>& d, device_blueprint bp)
      : m_shape(bp.desc.shape), m_size(product(m_shape)), m_ctx(acquire_context()), m_desc(std::move(bp.desc)),
        m_steps(std::move(bp.steps)) {
    // The uploads made here are the ones plan_device counted (setup=); test_device_transfers
    // checks it. Not rechecked here: the counter is process-wide, and other threads may transfer.
    for (device_step& s : m_steps) {
      std::visit(overloaded{[&](const copy_step&) { m_payload.push_back(0); },
                            [&](const scale_step& st) { add_scale(d, st); },
                            [&](const gemm_step& st) { add_gemm(d, st); },
                            [&](const staged_step& st) { add_stage(d, st); }},
                 s);
    }
    m_buffers.resize(bp.buffers);
    for (auto& b : m_buffers) b = device_buffer<T>(m_size);
    if (bp.staging) m_staging.resize(m_size);
    m_desc.instantiated = true;
  }

  // Check and plan only: the description explain() prints.
  static plan_description explain(const operator_desc<T>& d, const shape_t& shape) {
    return plan_device<T>(d, shape).desc;
  }

  const plan_description& description() const noexcept { return m_desc; }
  const shape_t& shape() const noexcept { return m_shape; }

  // x = plan(b) on device arrays of shape() in C order; x may equal b. Returns when the result is
  // complete on the device.
  void run(const T* b, T* x) {
    const T* src = b;
    for (std::size_t s = 0; s < m_steps.size(); ++s) {
      const bool last = s + 1 == m_steps.size();
      T* dst = last ? x : buffer_other_than(src);
      if (last && src == x && std::holds_alternative<gemm_step>(m_steps[s])) {
        // A GEMM cannot run in place: compute into a buffer, then copy on the device.
        T* tmp = buffer_other_than(src);
        run_step(s, src, tmp);
        device::copy_on_device(*m_ctx, x, tmp, m_size * sizeof(T));
      } else {
        run_step(s, src, dst);
      }
      src = dst;
    }
    m_ctx->synchronize();
  }

  device::context& context() noexcept { return *m_ctx; }

private:
  static std::shared_ptr<device::context> acquire_context() {
    if (!device::available()) {
      throw backend_unavailable(message("kronex: the device backend (", device::system_name(),
                                        ") has no device to run on: no GPU is visible to this process"));
    }
    return device::default_context();
  }

  T* buffer_other_than(const T* p) {
    for (auto& b : m_buffers)
      if (b.data() != p) return b.data();
    throw error("kronex: device plan internal error: no free ping-pong buffer");
  }

  // Uploads n values from the host into a new device buffer (counted: a setup transfer).
  std::size_t upload(std::vector<device_buffer<T>>& to, const std::vector<T>& values, const char* what) {
    to.emplace_back(values.size());
    transfer(device::copy_direction::host_to_device, to.back().data(), values.data(), values.size() * sizeof(T),
             what);
    return to.size() - 1;
  }

  void add_scale(const operator_desc<T>& d, const scale_step& st) {
    // The host plan's scale step holds exactly the values to multiply by (inverted, conjugated):
    // run it on a line of ones to get them, so both backends share one rule (and its errors).
    const shape_t line = line_shape(m_shape, st.mode);
    host_plan<T> host(single_mode(d, st.mode, line), line);
    std::vector<T> values(d.factors[st.mode].n, T(1));
    host.run(values.data(), values.data());
    m_payload.push_back(upload(m_scales, values, "device plan setup: scale factors"));
  }

  // The dense matrix of op(A)^{-1} (solve) or op(A) (apply), built by the host plan of this mode
  // alone: column j is the host result for e_j (same factorization, pivoting, corners, op and
  // errors as the host path). Uploaded in column-major order, as cuBLAS reads it.
  void add_gemm(const operator_desc<T>& d, const gemm_step& st) {
    const std::size_t n = d.factors[st.mode].n;
    const shape_t line = line_shape(m_shape, st.mode);
    host_plan<T> host(single_mode(d, st.mode, line), line);
    std::vector<T> column_major(n * n, T(0));
    for (std::size_t j = 0; j < n; ++j) {
      T* column = column_major.data() + j * n;
      column[j] = T(1);
      host.run(column, column);
    }
    m_payload.push_back(upload(m_matrices, column_major, "device plan setup: factor matrix"));
  }

  // A factor that must stay on the host: each run downloads the tensor, runs the host plan of
  // this mode alone in place, and uploads the result (two counted transfers).
  void add_stage(const operator_desc<T>& d, const staged_step& st) {
    m_payload.push_back(m_staged.size());
    m_staged.push_back(std::make_unique<host_plan<T>>(single_mode(d, st.mode, m_shape), m_shape));
  }

  void run_step(std::size_t s, const T* src, T* dst) {
    const std::size_t payload = m_payload[s];
    auto matrix = [&] { return m_matrices[payload].data(); };
    std::visit(
        overloaded{
            [&](const copy_step&) {
              if (src != dst) device::copy_on_device(*m_ctx, dst, src, m_size * sizeof(T));
            },
            [&](const scale_step& st) {
              device::scale_mode(*m_ctx, st.view[0], st.view[1], st.view[2],
                                 m_scales[payload].data(), src, dst);
            },
            [&](const gemm_step& st) {
              const long L = long(st.view[0]), n = long(st.view[1]), R = long(st.view[2]);
              switch (st.how) {
                case gemm_step::layout::last:  // lines contiguous: Y^c (n x L) = M (n x n) * X^c (n x L)
                  device::blas<T>::gemm(*m_ctx, 'N', 'N', n, L, n, matrix(), n, src, n, dst, n);
                  break;
                case gemm_step::layout::first:  // Y^c (R x n) = X^c (R x n) * M^T
                  device::blas<T>::gemm(*m_ctx, 'N', 'T', R, n, n, src, R, matrix(), n, dst, R);
                  break;
                case gemm_step::layout::batched:  // the same for each of the L slabs of n*R values
                  device::blas<T>::gemm_strided_batched(*m_ctx, 'N', 'T', R, n, n, src, R, n * R, matrix(), n, 0,
                                                        dst, R, n * R, L);
                  break;
              }
            },
            [&](const staged_step&) {
              m_ctx->synchronize();  // the host reads what earlier steps wrote
              const std::string what = message("stage_through_host step ", s);
              transfer(device::copy_direction::device_to_host, m_staging.data(), src, m_size * sizeof(T),
                       what.c_str());
              m_staged[payload]->run(m_staging.data(), m_staging.data());
              transfer(device::copy_direction::host_to_device, dst, m_staging.data(), m_size * sizeof(T),
                       what.c_str());
            }},
        m_steps[s]);
  }

  shape_t m_shape;
  std::size_t m_size;
  std::shared_ptr<device::context> m_ctx;
  plan_description m_desc;
  std::vector<device_step> m_steps;                  // parallel to m_desc.steps
  std::vector<std::size_t> m_payload;                // per step: index into m_matrices, m_scales or m_staged
  std::vector<device_buffer<T>> m_matrices;         // column-major n x n, one per GEMM step
  std::vector<device_buffer<T>> m_scales;
  std::vector<std::unique_ptr<host_plan<T>>> m_staged;
  std::vector<T> m_staging;                          // host copy of the tensor for staged steps
  std::vector<device_buffer<T>> m_buffers;          // ping-pong
};

} // namespace detail
} // namespace kronex
