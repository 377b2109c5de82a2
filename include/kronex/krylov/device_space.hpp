#pragma once
// The device's Krylov vector space (the concept is in space.hpp): vectors are device memory, and
// so are the scalars, one device array
//   s[0 .. slots-1]   the solve's slots
//   s[flag]           0, or 1 + the krylov_status of the breakdown flagged
//   s[flag + 1]       where read() stages the value it reads
// so that read() is one device-to-host copy of two values (the only transfer of a check), and
// the flag never has to reach the host between checks: vector kernels read it themselves.
//
// Every operation is a runtime kernel (backends/device/runtime.hpp) on the process's device
// context, in order. Slot arithmetic is queued and run as one small kernel (a batch of up to
// krylov_slot_batch ops) just before the next vector operation, reduction, apply or read, so a
// GMRES back substitution is one launch, not one per op. set() passes its value in the kernel's
// arguments: constants cost no transfer.
//
// What differs from host_space: apply(A, x, y) runs even while a breakdown is flagged (skipping
// it would need the flag on the host, a transfer); y is always workspace, and every update of the
// iterate x is a guarded vector kernel, so the iterate still stays the last one before the
// breakdown.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <vector>

#include "../backends/device/device_buffer.hpp"
#include "../backends/device/device_csr.hpp"
#include "../backends/device/runtime.hpp"
#include "../backends/device/transfers.hpp"
#include "../core/value_traits.hpp"
#include "../operators/matrix_free.hpp"
#include "../operators/sparse_operator.hpp"
#include "space.hpp"

namespace kronex::detail {

// The device context a Krylov solve runs on, after checking there is a device to run on.
inline std::shared_ptr<device::context> krylov_device_context() {
  if (!device::available())
    throw backend_unavailable(message("kronex: a Krylov solve on device tensors: the device backend (",
                                      device::system_name(), ") has no device to run on: no GPU is visible to this process"));
  return device::default_context();
}

template <class O>
struct is_sparse_operator : std::false_type {};
template <class T>
struct is_sparse_operator<sparse_operator<T>> : std::true_type {};

} // namespace kronex::detail

namespace kronex::krylov {

template <class T>
class device_space : public space_handles<T> {
  using op = kronex::detail::device::krylov_slot_op;
  using args = kronex::detail::device::krylov_slot_args<T>;

public:
  using value_type = T;
  using real_type = real_t<T>;
  using typename space_handles<T>::cvec;
  using typename space_handles<T>::vec;
  using typename space_handles<T>::map;
  using typename space_handles<T>::dot_term;

  // A sparse_operator as a map: its CSR arrays uploaded now (once per compiled solver), its
  // product a device kernel. A matrix_free's function is called with device pointers (device
  // memory: on a GPU, not readable by host code), after kronex's earlier device work is
  // complete; it must have written y when it returns.
  template <class O>
  static map flat_map(const O& o) {
    if constexpr (kronex::detail::is_sparse_operator<O>::value) {
      auto csr = std::make_shared<const kronex::detail::device_csr<T>>(*o.csr_arrays(),
                                                                        kronex::detail::krylov_device_context());
      return [csr](const T* x, T* y) { csr->run(x, y); };
    } else {
      auto ctx = kronex::detail::krylov_device_context();
      return [o, ctx](const T* x, T* y) {
        ctx->synchronize();
        o.run(x, y);
      };
    }
  }

  device_space(std::size_t n, std::size_t vectors, std::size_t slots)
      : m_n(n), m_ctx(kronex::detail::krylov_device_context()), m_vectors(vectors * n), m_scalars(slots + 2),
        m_flag(slots), m_partials(kronex::detail::device::krylov_dot_batch *
                                  std::min(std::max<std::size_t>(n, 1), kronex::detail::device::krylov_dot_partitions)) {
    m_pending.reserve(kronex::detail::device::krylov_slot_batch);
    // The scalars start at zero, as host_space's do (device memory comes uninitialised).
    for (std::size_t i = 0; i < slots; ++i) set(slot{i}, T(0));
    reset();
    flush();
  }

  std::size_t size() const noexcept { return m_n; }
  // Batches of inner products (dots calls) so far.
  std::size_t reductions() const noexcept { return m_reductions; }
  vec vector(std::size_t i) noexcept { return {m_vectors.data() + i * m_n}; }

  // Vector operations: kernels that do nothing while a breakdown is flagged (apply: see above).
  void apply(const map& A, cvec x, vec y) {
    flush();
    A(x.data, y.data);
  }
  void copy(cvec x, vec y) {
    if (x.data != y.data) vector_op(vop::copy, 0, x.data, y.data);
  }
  void zero(vec y) { vector_op(vop::zero, 0, nullptr, y.data); }
  void axpy(slot a, cvec x, vec y) { vector_op(vop::axpy, a.index, x.data, y.data); }
  void xpay(cvec x, slot a, vec y) { vector_op(vop::xpay, a.index, x.data, y.data); }
  void scale(slot a, vec y) { vector_op(vop::scale, a.index, nullptr, y.data); }

  void dots(std::initializer_list<dot_term> terms) { dots(terms.begin(), terms.size()); }
  // The same for a run-time number of terms (GMRES's Gram-Schmidt): krylov_dot_batch per launch.
  void dots(const std::vector<dot_term>& terms) { dots(terms.data(), terms.size()); }

  // Slot arithmetic, queued (see above).
  void set(slot a, T v) {
    args o;
    o.op = op::set;
    o.a = a.index;
    o.value = v;
    push(o);
  }
  void assign(slot a, slot b) { push(op::assign, a, b); }
  void add(slot a, slot b, slot c) { push(op::add, a, b, c); }
  void sub(slot a, slot b, slot c) { push(op::sub, a, b, c); }
  void mul(slot a, slot b, slot c) { push(op::mul, a, b, c); }
  void div(slot a, slot b, slot c) { push(op::div, a, b, c); }
  void sub_mul(slot a, slot b, slot c) { push(op::sub_mul, a, b, c); }
  void neg(slot a, slot b) { push(op::neg, a, b); }
  void real(slot a, slot b) { push(op::real, a, b); }
  void abs(slot a, slot b) { push(op::abs, a, b); }
  void sqrt(slot a, slot b) { push(op::sqrt, a, b); }
  void hypot(slot a, slot b, slot c) { push(op::hypot, a, b, c); }
  void givens(slot c, slot sn, slot a, slot b) { push(op::givens, c, sn, a, b); }
  void rotate(slot c, slot sn, slot a, slot b) { push(op::rotate, c, sn, a, b); }
  void guard(slot a, guard_test test, krylov_status status) {
    args o;
    o.op = test == guard_test::positive ? op::guard_positive
           : test == guard_test::nonnegative ? op::guard_nonnegative
                                              : op::guard_nonzero;
    o.a = a.index;
    o.status = int(status);
    push(o);
  }

  void reset() { push(op::reset, slot{0}); }
  // One device-to-host copy: {s[flag], s[a]}.
  slot_value<T> read(slot a) {
    push(op::read, a);
    flush();
    m_ctx->synchronize();
    T h[2];
    kronex::detail::transfer(kronex::detail::device::copy_direction::device_to_host, h, m_scalars.data() + m_flag,
                             sizeof h, "Krylov convergence check");
    slot_value<T> r{h[1], std::nullopt};
    const int code = int(std::real(h[0]));
    if (code != 0) r.breakdown = krylov_status(code - 1);
    return r;
  }

private:
  using vop = kronex::detail::device::krylov_vector_op;

  void vector_op(vop o, std::size_t a, const T* x, T* y) {
    flush();
    kronex::detail::device::krylov_vector(*m_ctx, o, m_n, m_scalars.data(), m_flag, a, x, y);
  }

  void dots(const dot_term* terms, std::size_t count) {
    flush();
    ++m_reductions;
    constexpr std::size_t batch = kronex::detail::device::krylov_dot_batch;
    kronex::detail::device::krylov_dot_term<T> t[batch];
    for (std::size_t first = 0; first < count; first += batch) {
      const std::size_t k = std::min(batch, count - first);
      for (std::size_t j = 0; j < k; ++j) t[j] = {terms[first + j].x.data, terms[first + j].y.data, terms[first + j].out.index};
      kronex::detail::device::krylov_dots(*m_ctx, m_n, t, k, m_partials.data(), m_scalars.data());
    }
  }

  void push(op o, slot a, slot b = slot{0}, slot c = slot{0}, slot d = slot{0}) {
    args x;
    x.op = o;
    x.a = a.index;
    x.b = b.index;
    x.c = c.index;
    x.d = d.index;
    push(x);
  }
  void push(const args& o) {
    m_pending.push_back(o);
    if (m_pending.size() == kronex::detail::device::krylov_slot_batch) flush();
  }
  void flush() {
    if (m_pending.empty()) return;
    kronex::detail::device::krylov_slots(*m_ctx, m_scalars.data(), m_flag, int(krylov_status::non_finite),
                                         m_pending.data(), m_pending.size());
    m_pending.clear();
  }

  std::size_t m_n;
  std::shared_ptr<kronex::detail::device::context> m_ctx;
  device_buffer<T> m_vectors;   // the workspace vectors, one after the other
  device_buffer<T> m_scalars;   // the slots, the flag, the read staging value
  std::size_t m_flag;
  device_buffer<T> m_partials;  // the dot products' partial sums
  std::vector<args> m_pending;  // slot ops not yet run
  std::size_t m_reductions = 0;
};

} // namespace kronex::krylov
