#pragma once
// device_plan<T>: a compiled device plan. At compile time each 1D factor becomes a dense n x n
// matrix built on the host by the host plan itself (its inverse M = solve(I) for solves, op(A)
// for applies, so pivoting, periodic corners, transposes and conjugation are exactly the host
// path's), uploaded once. A run is then one GEMM per mode on the device, reading and writing the
// tensor in place in memory order (no transposes), ping-ponging between two buffers allocated
// here; the last step writes the output. Diagonal factors are scales; identities are skipped.
// A factor that must not be densified (function_solver) runs as a stage_through_host step.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
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

namespace kronex::detail {

template <class T>
class device_plan {
  static constexpr double madd_flops = value_traits<T>::is_complex ? 8.0 : 2.0;
  static constexpr double mul_flops = value_traits<T>::is_complex ? 6.0 : 1.0;

  // How a step runs on the device.
  enum class method { copy, scale, gemm_last, gemm_first, gemm_batched, stage };
  struct device_step {
    method how = method::copy;
    std::size_t payload = 0;  // index into m_matrices, m_scales or m_staged
  };

public:
  device_plan(const operator_desc<T>& d, const shape_t& shape)
      : m_shape(shape), m_size(product(shape)), m_ctx(acquire_context()) {
    check_operand_shape(d, shape, d.inverse ? "right-hand side" : "operand");
    m_desc.backend = std::string("device ") + device::system_name();
    m_desc.value_type = value_traits<T>::name;
    m_desc.expression = d.text();
    m_desc.shape = shape;
    m_desc.counts_transfers = true;
    m_desc.setup = skipped_setup(d);
    const auto before = transfers();
    for (const auto& t : schedule(d)) {
      step st = make_step(t, d.trans, shape, sizeof(T));
      switch (t.kind) {
        case step_kind::copy:
          st.method = "copy";
          m_steps.push_back({method::copy, 0});
          break;
        case step_kind::scale:
          add_scale(d, st);
          break;
        case step_kind::solve:
        case step_kind::apply:
          if (d.factors[t.mode].densify_on_device) add_gemm(d, st);
          else add_stage(d, st);
          break;
        case step_kind::exchange:
          throw error("kronex: device plan internal error: the schedule has no exchange steps");
      }
      m_desc.steps.push_back(std::move(st));
    }
    const auto uploaded = transfers() - before;
    m_desc.setup_transfers = uploaded.calls();
    m_desc.setup_transfer_bytes = uploaded.bytes();
    // Ping-pong buffers: every step but the last writes one that it does not read; a lone GEMM
    // step needs one too, for in-place runs (x == b).
    const std::size_t steps = m_steps.size();
    const bool lone_gemm = steps == 1 && is_gemm(m_steps[0].how);
    m_buffers.resize(steps >= 3 ? 2 : (steps == 2 || lone_gemm ? 1 : 0));
    for (auto& b : m_buffers) b = device_buffer<T>(m_size);
    m_desc.workspace_bytes = m_buffers.size() * m_size * sizeof(T) + m_staging.size() * sizeof(T);
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
      if (last && src == x && is_gemm(m_steps[s].how)) {
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

  static bool is_gemm(method m) { return m == method::gemm_first || m == method::gemm_last || m == method::gemm_batched; }

  T* buffer_other_than(const T* p) {
    for (auto& b : m_buffers)
      if (b.data() != p) return b.data();
    throw error("kronex: device plan internal error: no free ping-pong buffer");
  }

  // Uploads n values from the host into a new device buffer (counted: a setup transfer).
  std::size_t upload(std::vector<device_buffer<T>>& to, const std::vector<T>& values, const char* what) {
    to.emplace_back(values.size());
    transfer(device::copy_direction::host_to_device, to.back().data(), values.data(),
             values.size() * sizeof(T), what);
    return to.size() - 1;
  }

  // Factor k alone, every other mode an identity of `shape`'s size: what the host runs for mode
  // k. Mode numbers stay those of the user's expression, in plans and in errors.
  static operator_desc<T> single_mode(const operator_desc<T>& d, std::size_t k, const shape_t& shape) {
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
  shape_t line_shape(std::size_t k) const {
    shape_t s(m_shape.size(), 1);
    s[k] = m_shape[k];
    return s;
  }

  void add_scale(const operator_desc<T>& d, step& st) {
    // The host plan's scale step holds exactly the values to multiply by (inverted, conjugated):
    // run it on a line of ones to get them, so both backends share one rule (and its errors).
    const std::size_t n = d.factors[st.mode].n;
    const shape_t line = line_shape(st.mode);
    host_plan<T> host(single_mode(d, st.mode, line), line);
    std::vector<T> values(n, T(1));
    host.run(values.data(), values.data());
    m_desc.setup[st.mode].method = "scale";
    m_desc.setup[st.mode].result = message("uploaded ", n, " values (", format_count(double(n * sizeof(T))), "B)");
    st.method = "scale";
    st.flops = double(m_size) * mul_flops;
    m_steps.push_back({method::scale, upload(m_scales, values, "device plan setup: scale factors")});
    m_desc.factor_bytes += n * sizeof(T);
  }

  // The dense matrix of op(A)^{-1} (solve) or op(A) (apply), built by the host plan of this mode
  // alone: column j is the host result for e_j (same factorization, pivoting, corners, op and
  // errors as the host path). Uploaded in column-major order, as cuBLAS reads it.
  void add_gemm(const operator_desc<T>& d, step& st) {
    const std::size_t n = d.factors[st.mode].n;
    const shape_t line = line_shape(st.mode);
    host_plan<T> host(single_mode(d, st.mode, line), line);
    std::vector<T> column_major(n * n, T(0));
    for (std::size_t j = 0; j < n; ++j) {
      T* column = column_major.data() + j * n;
      column[j] = T(1);
      host.run(column, column);
    }

    const std::size_t L = st.view[0], R = st.view[2];
    for (std::size_t v : {L, n, R, n * R})
      if (v > std::size_t(INT_MAX))
        throw error(message("kronex: device plan: mode ", st.mode, " of shape ", format_shape(m_shape),
                            " exceeds the BLAS integer range (", v, " > ", INT_MAX, ")"));
    const method how = R == 1 ? method::gemm_last : (L == 1 ? method::gemm_first : method::gemm_batched);
    auto& fs = m_desc.setup[st.mode];
    fs.method = message(d.inverse ? "inverse by host solve (" : "matrix by host apply (",
                        host.description().setup[st.mode].method, ")");
    fs.result = message("uploaded ", n, "x", n, " (", format_count(double(n * n * sizeof(T))), "B)");
    st.method = how == method::gemm_batched ? "gemm_strided_batched" : "gemm";
    st.flops = double(m_size) * double(n) * madd_flops;
    st.bytes += double(n * n * sizeof(T));
    m_steps.push_back({how, upload(m_matrices, column_major, "device plan setup: factor matrix")});
    m_desc.factor_bytes += n * n * sizeof(T);
  }

  // A factor that must stay on the host: each run downloads the tensor, runs the host plan of
  // this mode alone in place, and uploads the result (two counted transfers).
  void add_stage(const operator_desc<T>& d, step& st) {
    m_staged.push_back(std::make_unique<host_plan<T>>(single_mode(d, st.mode, m_shape), m_shape));
    m_staging.resize(m_size);
    const auto& host_step = m_staged.back()->description().steps.at(0);
    m_desc.setup[st.mode].method = "staged through host";
    m_desc.setup[st.mode].result = message("host method ", host_step.method);
    st.method = "stage_through_host";
    st.flops = host_step.flops;
    st.transfers = 2;
    st.transfer_bytes = 2.0 * double(m_size) * sizeof(T);
    m_steps.push_back({method::stage, m_staged.size() - 1});
  }

  void run_step(std::size_t s, const T* src, T* dst) {
    const step& st = m_desc.steps[s];
    const device_step& ds = m_steps[s];
    const long L = long(st.view[0]), n = long(st.view[1]), R = long(st.view[2]);
    auto matrix = [&] { return m_matrices[ds.payload].data(); };
    switch (ds.how) {
      case method::copy:
        if (src != dst) device::copy_on_device(*m_ctx, dst, src, m_size * sizeof(T));
        break;
      case method::scale:
        device::scale_mode(*m_ctx, st.view[0], st.view[1], st.view[2],
                           m_scales[ds.payload].data(), src, dst);
        break;
      case method::gemm_last:  // lines contiguous: Y^c (n x L) = M (n x n) * X^c (n x L)
        device::blas<T>::gemm(*m_ctx, 'N', 'N', n, L, n, matrix(), n, src, n, dst, n);
        break;
      case method::gemm_first:  // Y^c (R x n) = X^c (R x n) * M^T
        device::blas<T>::gemm(*m_ctx, 'N', 'T', R, n, n, src, R, matrix(), n, dst, R);
        break;
      case method::gemm_batched:  // the same for each of the L slabs of n*R values
        device::blas<T>::gemm_strided_batched(*m_ctx, 'N', 'T', R, n, n, src, R, n * R, matrix(), n, 0, dst, R,
                                              n * R, L);
        break;
      case method::stage: {
        m_ctx->synchronize();  // the host reads what earlier steps wrote
        const std::string what = message("stage_through_host step ", s);
        transfer(device::copy_direction::device_to_host, m_staging.data(), src, m_size * sizeof(T), what.c_str());
        m_staged[ds.payload]->run(m_staging.data(), m_staging.data());
        transfer(device::copy_direction::host_to_device, dst, m_staging.data(), m_size * sizeof(T), what.c_str());
        break;
      }
    }
  }

  shape_t m_shape;
  std::size_t m_size;
  std::shared_ptr<device::context> m_ctx;
  plan_description m_desc;
  std::vector<device_step> m_steps;                  // parallel to m_desc.steps
  std::vector<device_buffer<T>> m_matrices;  // column-major n x n, one per GEMM step
  std::vector<device_buffer<T>> m_scales;
  std::vector<std::unique_ptr<host_plan<T>>> m_staged;
  std::vector<T> m_staging;                          // host copy of the tensor for staged steps
  std::vector<device_buffer<T>> m_buffers;   // ping-pong
};

} // namespace kronex::detail
