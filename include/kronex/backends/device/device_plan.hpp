#pragma once
// device_plan<T>: a compiled device plan, in the four phases every backend has:
//   check        check_device(): shapes, the schedule's rules, and the device's size limits
//                (the dense factor size), before anything is allocated;
//   plan         plan_device(): the steps, their costs, how each GEMM splits into BLAS calls
//                within the BLAS integer range (gemm_split.hpp), the uploads and buffers it will
//                need, the printable description; no device, no allocation (explain stops here);
//   instantiate  the device_plan constructor: each 1D factor becomes a dense n x n matrix built
//                on the host by the host plan itself (its inverse M = solve(I) for solves, op(A)
//                for applies, so pivoting, periodic corners, transposes and conjugation are
//                exactly the host path's), uploaded once; the ping-pong buffer is allocated;
//   run          one GEMM per mode on the device (several BLAS calls for very large tensors),
//                reading and writing the tensor in memory order (no transposes), ping-ponging
//                between the output and one buffer so that the last step writes the output.
//                Diagonal factors are scales; identities are skipped.
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
#include "../../plan/factor_store.hpp"
#include "../../plan/operator_desc.hpp"
#include "../../plan/plan.hpp"
#include "../../plan/schedule.hpp"
#include "../host/host_plan.hpp"
#include "device_buffer.hpp"
#include "gemm_split.hpp"
#include "runtime.hpp"
#include "transfers.hpp"

namespace kronex {

// The device backend's size limits, checked before anything is allocated.
struct device_limits {
  // A solved or applied factor becomes a dense n x n matrix on the device: n at most this
  // (32768: 8 GiB in double, 16 GiB in complex<double>).
  static constexpr std::size_t max_factor_size = std::size_t(1) << 15;
  // cuBLAS takes int sizes, leading dimensions and batch counts (its strides are 64-bit): a
  // mode's GEMM is split into calls that each stay within this (gemm_split.hpp), so only a
  // factor's n must be at most this, which max_factor_size ensures.
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

// Check phase. blas_limit: the largest size one BLAS call takes (device_limits::max_blas_dimension;
// tests set a small one to exercise the splitting).
template <class T>
void check_device(const operator_desc<T>& d, const shape_t& shape,
                  std::size_t blas_limit = device_limits::max_blas_dimension) {
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
    if (f.n > blas_limit)  // the GEMM's inner size: a split would need accumulating calls
      throw size_limit_exceeded(message("kronex: device plan: the factor for mode ", t.mode, " has n = ", f.n,
                                        ", more than one BLAS call takes (", blas_limit, ")"));
  }
}

// The factor k alone, every other mode an identity of `shape`'s size: what the host runs for
// mode k. Mode numbers stay those of the user's expression, in plans and in errors.
template <class T>
operator_desc<T> single_mode(const operator_desc<T>& d, std::size_t k, const shape_t& shape) {
  operator_desc<T> one;
  one.trans = d.trans;
  one.inverse = d.inverse;
  one.options = d.options;
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
  bool buffer = false;             // a ping-pong buffer of the tensor's size
  std::size_t scratch = 0;         // values of scratch for packed GEMM calls
  bool staging = false;            // a host copy of the tensor for staged steps
};

// Plan phase (after the check): no device is needed, nothing is allocated.
template <class T>
device_blueprint plan_device(const operator_desc<T>& d, const shape_t& shape,
                             std::size_t blas_limit = device_limits::max_blas_dimension) {
  using C = host_costs<T>;
  check_device(d, shape, blas_limit);
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
          split_gemm(st, blas_limit);
          bp.scratch = std::max(bp.scratch, gemm_scratch_values(st));
          if (st.packed) st.bytes += 4.0 * double(size) * sizeof(T);  // packing reads and writes it twice more
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
  // One ping-pong buffer: steps alternate between it and the output (run_steps). A lone GEMM
  // step needs it too, for in-place runs (x == b).
  const std::size_t steps = bp.steps.size();
  bp.buffer = steps >= 2 || (steps == 1 && std::holds_alternative<gemm_step>(bp.steps[0]));
  desc.workspace_bytes = ((bp.buffer ? 1 : 0) + (bp.staging ? 1 : 0)) * size * sizeof(T) + bp.scratch * sizeof(T);
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
    if (bp.buffer) m_buffer = device_buffer<T>(m_size);
    m_scratch = device_buffer<T>(bp.scratch);
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
    run_steps(b, x, [](std::size_t, auto&& step) { step(); });
    m_ctx->synchronize();
  }

  // Runs as run() does, each step timed on its own with a device timer: seconds per step,
  // parallel to description().steps.
  std::vector<double> time_steps(const T* b, T* x) {
    std::vector<double> seconds(m_steps.size());
    device::timer timer(*m_ctx);
    run_steps(b, x, [&](std::size_t s, auto&& step) {
      timer.start();
      step();
      timer.stop();
      seconds[s] = timer.seconds();
    });
    m_ctx->synchronize();
    return seconds;
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

  // Runs the steps, calling each(s, step) with a callable that runs step s. Destinations
  // alternate between x and the buffer so that the last step writes x, and every step writes
  // what it does not read. A GEMM cannot write what it reads: when b is x and the first step is a
  // GEMM that would write x, the chain starts in the buffer instead, ends there, and one device
  // copy moves the result to x.
  template <class Each>
  void run_steps(const T* b, T* x, Each&& each) {
    const std::size_t k = m_steps.size();
    const bool shifted = b == x && (k - 1) % 2 == 0 && std::holds_alternative<gemm_step>(m_steps[0]);
    const T* src = b;
    for (std::size_t s = 0; s < k; ++s) {
      T* dst = (((k - 1 - s) % 2 == 0) != shifted) ? x : m_buffer.data();
      each(s, [&] {
        run_step(s, src, dst);
        if (shifted && s + 1 == k) device::copy_on_device(*m_ctx, x, dst, m_size * sizeof(T));
      });
      src = dst;
    }
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
  // errors as the host path). Uploaded in column-major order, as cuBLAS reads it. With a store
  // (compile_options::store) the matrix is shared per (factor, op, solve or apply) with the other
  // plans compiled with it, uploaded once (the host plan shares the LU too): a shared matrix is
  // no setup transfer of this plan.
  void add_gemm(const operator_desc<T>& d, const gemm_step& st) {
    const factor_view<T>& f = d.factors[st.mode];
    const std::size_t n = f.n;
    const shape_t line = line_shape(m_shape, st.mode);
    factor_setup& fs = m_desc.setup[st.mode];
    auto make = [&] {
      host_plan<T> host(single_mode(d, st.mode, line), line);
      fs.rcond = host.description().setup[st.mode].rcond;  // a solve's; -1 for an apply
      std::vector<T> column_major(n * n, T(0));
      for (std::size_t j = 0; j < n; ++j) {
        T* column = column_major.data() + j * n;
        column[j] = T(1);
        host.run(column, column);
      }
      device_buffer<T> m(column_major.size());
      transfer(device::copy_direction::host_to_device, m.data(), column_major.data(), column_major.size() * sizeof(T),
               "device plan setup: factor matrix");
      return m;
    };
    m_payload.push_back(m_matrices.size());
    if (!d.options.store) {
      m_matrices.push_back(std::make_shared<const device_buffer<T>>(make()));
      return;
    }
    const auto what = st.solve ? factor_store::form::device_solve : factor_store::form::device_apply;
    auto [matrix, shared] = d.options.store->template get<device_buffer<T>>(f, what, st.trans, make);
    m_matrices.push_back(std::move(matrix));
    if (!shared) return;
    if (st.solve) {  // the threshold is this plan's: check it on the shared LU's estimate
      const host_plan<T> host(single_mode(d, st.mode, line), line);  // from the store: no factoring
      fs.rcond = host.description().setup[st.mode].rcond;
    }
    fs.result += " shared";
    --m_desc.setup_transfers;
    m_desc.setup_transfer_bytes -= n * n * sizeof(T);
  }

  // A factor that must stay on the host: each run downloads the tensor, runs the host plan of
  // this mode alone in place, and uploads the result (two counted transfers).
  void add_stage(const operator_desc<T>& d, const staged_step& st) {
    m_payload.push_back(m_staged.size());
    m_staged.push_back(std::make_unique<host_plan<T>>(single_mode(d, st.mode, m_shape), m_shape));
  }

  void run_step(std::size_t s, const T* src, T* dst) {
    const std::size_t payload = m_payload[s];
    auto matrix = [&] { return m_matrices[payload]->data(); };
    std::visit(
        overloaded{
            [&](const copy_step&) {
              if (src != dst) device::copy_on_device(*m_ctx, dst, src, m_size * sizeof(T));
            },
            [&](const scale_step& st) {
              device::scale_mode(*m_ctx, st.view[0], st.view[1], st.view[2],
                                 m_scales[payload].data(), src, dst);
            },
            [&](const gemm_step& st) { run_gemm(*m_ctx, st, matrix(), src, dst, m_scratch.data()); },
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
  // Column-major n x n, one per GEMM step; read only, so plans compiled with one factor_store
  // share them.
  std::vector<std::shared_ptr<const device_buffer<T>>> m_matrices;
  std::vector<device_buffer<T>> m_scales;
  std::vector<std::unique_ptr<host_plan<T>>> m_staged;
  std::vector<T> m_staging;                          // host copy of the tensor for staged steps
  device_buffer<T> m_buffer;                         // ping-pong, with the output
  device_buffer<T> m_scratch;                        // packed GEMM calls' blocks
};

} // namespace detail
} // namespace kronex
