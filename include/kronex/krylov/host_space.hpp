#pragma once
// The host's Krylov vector space (the concept is in space.hpp): vectors are C-order arrays in
// host memory, the scalars a plain array, read() a load. Copying a host_space copies its
// workspace (handles are taken from the space at each solve, never kept across solves).
#include <cmath>
#include <complex>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <optional>
#include <vector>

#include "../core/value_traits.hpp"
#include "space.hpp"

namespace kronex::krylov {

template <class T>
class host_space : public space_handles<T> {
public:
  using value_type = T;
  using real_type = real_t<T>;
  using typename space_handles<T>::cvec;
  using typename space_handles<T>::vec;
  using typename space_handles<T>::map;
  using typename space_handles<T>::dot_term;

  host_space(std::size_t n, std::size_t vectors, std::size_t slots)
      : m_n(n), m_vectors(vectors, std::vector<T>(n)), m_slots(slots, T(0)) {}

  // A sparse_operator or a matrix_free as a map: its own product on host buffers (a copy of the
  // operator, which shares a sparse_operator's arrays).
  template <class O>
  static map flat_map(const O& o) {
    return [o](const T* x, T* y) { o.run(x, y); };
  }

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

  void dots(std::initializer_list<dot_term> terms) {
    for (const dot_term& t : terms) dot(t);
  }
  // The same for a run-time number of terms (GMRES's Gram-Schmidt).
  void dots(const std::vector<dot_term>& terms) {
    for (const dot_term& t : terms) dot(t);
  }

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

  void dot(const dot_term& t) {
    T sum(0);
    for (std::size_t i = 0; i < m_n; ++i) sum += detail::conj_if_complex(t.x.data[i]) * t.y.data[i];
    m_slots[t.out.index] = sum;
  }

  std::size_t m_n;
  std::vector<std::vector<T>> m_vectors;
  std::vector<T> m_slots;
  std::optional<krylov_status> m_breakdown;
};

} // namespace kronex::krylov
