#pragma once
// The host's Krylov vector space (the concept is in space.hpp): vectors are C-order arrays in
// host memory, the scalars a plain array, read() a load. Copying a host_space copies its
// workspace (handles are taken from the space at each solve, never kept across solves).
//
// Sum completes a batch of inner products: dots() sums each term over the space's own values
// into a buffer, then calls sum(buffer, terms) once before storing them in their slots. On the
// host the sums are complete (local_sums does nothing); a distributed space is this space over
// the rank's block with a Sum that adds the ranks' partial sums in one MPI_Allreduce
// (distributed_space.hpp), so the vector operations and the slot arithmetic are this code.
#include <cmath>
#include <complex>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "../core/value_traits.hpp"
#include "space.hpp"

namespace kronex::krylov {

// The host's Sum: a batch of inner products over the whole vector is complete.
struct local_sums {
  template <class T>
  void operator()(T*, std::size_t) noexcept {}
};

template <class T, class Sum = local_sums>
class host_space : public space_handles<T> {
public:
  using value_type = T;
  using real_type = real_t<T>;
  using typename space_handles<T>::cvec;
  using typename space_handles<T>::vec;
  using typename space_handles<T>::map;
  using typename space_handles<T>::dot_term;

  // A batch has at most `slots` terms (each writes a slot; GMRES's Gram-Schmidt pass writes
  // distinct ones), so the batch buffer is allocated here, not per solve.
  host_space(std::size_t n, std::size_t vectors, std::size_t slots, Sum sum = Sum())
      : m_n(n), m_vectors(vectors, std::vector<T>(n)), m_slots(slots, T(0)), m_batch(slots), m_sum(std::move(sum)) {}

  std::size_t size() const noexcept { return m_n; }
  vec vector(std::size_t i) noexcept { return {m_vectors[i].data()}; }

  // Vector operations: nothing happens while a breakdown is flagged.
  void apply(const map& A, cvec x, vec y) {
    if (!m_breakdown) A(x.data, y.data);
  }
  void copy(cvec x, vec y) {
    if (m_breakdown || x.data == y.data) return;
    for (std::size_t i = 0; i < m_n; ++i) y.data[i] = x.data[i];
  }
  void zero(vec y) {
    if (!m_breakdown)
      for (std::size_t i = 0; i < m_n; ++i) y.data[i] = T(0);
  }
  void axpy(slot a, cvec x, vec y) {
    if (m_breakdown) return;
    const T s = m_slots[a.index];
    for (std::size_t i = 0; i < m_n; ++i) y.data[i] += s * x.data[i];
  }
  void xpay(cvec x, slot a, vec y) {
    if (m_breakdown) return;
    const T s = m_slots[a.index];
    for (std::size_t i = 0; i < m_n; ++i) y.data[i] = x.data[i] + s * y.data[i];
  }
  void scale(slot a, vec y) {
    if (m_breakdown) return;
    const T s = m_slots[a.index];
    for (std::size_t i = 0; i < m_n; ++i) y.data[i] *= s;
  }

  void dots(std::initializer_list<dot_term> terms) { batch(terms.begin(), terms.size()); }
  // The same for a run-time number of terms (GMRES's Gram-Schmidt).
  void dots(const std::vector<dot_term>& terms) { batch(terms.data(), terms.size()); }
  // Batches of inner products (dots calls) so far: a distributed space's MPI_Allreduce calls.
  std::size_t reductions() const noexcept { return m_reductions; }

  // Slot arithmetic.
  void set(slot a, T v) { s(a) = v; }
  void assign(slot a, slot b) { s(a) = s(b); }
  void add(slot a, slot b, slot c) { s(a) = s(b) + s(c); }
  void sub(slot a, slot b, slot c) { s(a) = s(b) - s(c); }
  void mul(slot a, slot b, slot c) { s(a) = s(b) * s(c); }
  void div(slot a, slot b, slot c) { s(a) = s(c) == T(0) ? T(0) : s(b) / s(c); }
  void sub_mul(slot a, slot b, slot c) { s(a) -= s(b) * s(c); }
  void neg(slot a, slot b) { s(a) = -s(b); }
  void real(slot a, slot b) { s(a) = T(std::real(s(b))); }
  void abs(slot a, slot b) { s(a) = T(std::abs(s(b))); }
  void sqrt(slot a, slot b) {
    const real_type r = std::real(s(b));
    s(a) = T(r < 0 ? real_type(0) : std::sqrt(r));  // a NaN stays a NaN
  }
  void hypot(slot a, slot b, slot c) { s(a) = T(std::hypot(std::abs(s(b)), std::abs(s(c)))); }
  void givens(slot c, slot sn, slot a, slot b) {
    const T x = s(a), y = s(b);
    const real_type ax = std::abs(x), h = std::hypot(ax, std::abs(y));
    if (!std::isfinite(h)) {  // what it rotates becomes NaN too: the next check sees it
      s(c) = s(sn) = T(std::numeric_limits<real_type>::quiet_NaN());
      return;
    }
    if (h == 0) {  // (0, 0): the rotation that swaps, see space.hpp
      s(c) = T(0);
      s(sn) = T(1);
      return;
    }
    const T phase = ax == 0 ? T(1) : x / ax;  // x / |x|
    s(c) = T(ax / h);
    s(sn) = phase * detail::conj_if_complex(y) / h;
    s(a) = phase * h;
    s(b) = T(0);
  }
  void rotate(slot c, slot sn, slot a, slot b) {
    const T x = s(a), y = s(b), cs = s(c), ss = s(sn);
    s(a) = cs * x + ss * y;
    s(b) = -detail::conj_if_complex(ss) * x + cs * y;
  }
  void guard(slot a, guard_test test, krylov_status status) {
    if (m_breakdown) return;
    const T v = s(a);
    const real_type r = std::real(v);
    if (!std::isfinite(r) || !std::isfinite(std::imag(v))) {
      m_breakdown = krylov_status::non_finite;
      return;
    }
    const bool ok = test == guard_test::positive ? r > 0 : test == guard_test::nonnegative ? r >= 0 : v != T(0);
    if (!ok) m_breakdown = status;
  }

  void reset() noexcept { m_breakdown.reset(); }
  slot_value<T> read(slot a) const { return {m_slots[a.index], m_breakdown}; }

private:
  T& s(slot a) { return m_slots[a.index]; }

  void batch(const dot_term* terms, std::size_t count) {
    if (count > m_batch.size()) m_batch.resize(count);  // more terms than slots: never by the methods
    for (std::size_t k = 0; k < count; ++k) {
      T sum(0);
      const dot_term& t = terms[k];
      for (std::size_t i = 0; i < m_n; ++i) sum += detail::conj_if_complex(t.x.data[i]) * t.y.data[i];
      m_batch[k] = sum;
    }
    m_sum(m_batch.data(), count);
    ++m_reductions;
    for (std::size_t k = 0; k < count; ++k) m_slots[terms[k].out.index] = m_batch[k];
  }

  std::size_t m_n;
  std::vector<std::vector<T>> m_vectors;
  std::vector<T> m_slots;
  std::vector<T> m_batch;  // a batch's sums, before Sum completes them
  Sum m_sum;
  std::size_t m_reductions = 0;
  std::optional<krylov_status> m_breakdown;
};

} // namespace kronex::krylov
