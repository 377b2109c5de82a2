#pragma once
// kronex::banded<T>: a square 1D band matrix, optionally periodic (band wraps around the corners).
//
// Storage is by diagonals, row-major: entry (i, d) holds A(i, i + d) for d in [-kl, ku] (indices
// taken mod n when periodic). It is the user-facing format; the LAPACK band layout (column-major,
// with room for pivoting fill) is built only when a plan factors the matrix.
#include <cstddef>
#include <vector>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "boundary.hpp"

namespace kronex {

template <class T>
class banded {
  static_assert(is_value_type_v<T>,
                "kronex::banded<T>: T must be float, double, std::complex<float> or std::complex<double>");

public:
  using value_type = T;

  // Writing through the proxy outside the band throws; reading outside it yields zero.
  class entry_ref {
  public:
    operator T() const { return m_owner->get(m_i, m_j); }
    entry_ref& operator=(const T& v) { m_owner->ref(m_i, m_j) = v; return *this; }
    entry_ref& operator=(const entry_ref& o) { return *this = T(o); }
    entry_ref& operator+=(const T& v) { m_owner->ref(m_i, m_j) += v; return *this; }
    entry_ref& operator-=(const T& v) { m_owner->ref(m_i, m_j) -= v; return *this; }
    entry_ref& operator*=(const T& v) { m_owner->ref(m_i, m_j) *= v; return *this; }

  private:
    friend class banded;
    entry_ref(banded* owner, std::size_t i, std::size_t j) : m_owner(owner), m_i(i), m_j(j) {}
    banded* m_owner;
    std::size_t m_i, m_j;
  };

  banded(std::size_t n, std::size_t kl, std::size_t ku, boundary bc = boundary::clamped)
      : m_n(n), m_kl(kl), m_ku(ku), m_bc(bc) {
    if (n == 0) throw invalid_factor("kronex::banded: size n must be at least 1");
    if (bc == boundary::clamped && (kl >= n || ku >= n)) {
      throw invalid_factor(detail::message("kronex::banded: band widths kl=", kl, ", ku=", ku,
                                           " must be smaller than n=", n));
    }
    if (bc == boundary::periodic && kl + ku >= n) {
      throw invalid_factor(detail::message("kronex::banded: a periodic band needs kl+ku < n (kl=", kl,
                                           ", ku=", ku, ", n=", n, "), else the wrapped diagonals overlap"));
    }
    m_data.assign(n * width(), T(0));
  }

  std::size_t size() const noexcept { return m_n; }
  std::size_t lower() const noexcept { return m_kl; }
  std::size_t upper() const noexcept { return m_ku; }
  boundary boundary_condition() const noexcept { return m_bc; }
  bool periodic() const noexcept { return m_bc == boundary::periodic; }
  std::size_t width() const noexcept { return m_kl + m_ku + 1; }

  // Diagonal storage: diagonals()[i * width() + (d + kl)] is A(i, i + d) (mod n when periodic).
  const std::vector<T>& diagonals() const noexcept { return m_data; }

  entry_ref operator()(std::size_t i, std::size_t j) { check_index(i, j); return entry_ref(this, i, j); }
  T operator()(std::size_t i, std::size_t j) const { check_index(i, j); return get(i, j); }

  bool in_band(std::size_t i, std::size_t j) const noexcept { return offset(i, j) >= 0; }

private:
  void check_index(std::size_t i, std::size_t j) const {
    if (i >= m_n || j >= m_n) {
      throw invalid_factor(detail::message("kronex::banded: index (", i, ", ", j, ") out of range for n=", m_n));
    }
  }

  // Position of A(i, j) in m_data, or -1 outside the band.
  long offset(std::size_t i, std::size_t j) const noexcept {
    long d = long(j) - long(i);
    if (m_bc == boundary::periodic) {
      const long n = long(m_n);
      if (d > long(m_ku)) d -= n;
      if (d < -long(m_kl)) d += n;
    }
    if (d < -long(m_kl) || d > long(m_ku)) return -1;
    return long(i * width()) + d + long(m_kl);
  }

  T get(std::size_t i, std::size_t j) const noexcept {
    const long o = offset(i, j);
    return o < 0 ? T(0) : m_data[std::size_t(o)];
  }

  T& ref(std::size_t i, std::size_t j) {
    const long o = offset(i, j);
    if (o < 0) {
      throw invalid_factor(detail::message("kronex::banded: entry (", i, ", ", j, ") is outside the ",
                                           to_string(m_bc), " band (kl=", m_kl, ", ku=", m_ku,
                                           ", n=", m_n, ")"));
    }
    return m_data[std::size_t(o)];
  }

  std::size_t m_n, m_kl, m_ku;
  boundary m_bc;
  std::vector<T> m_data;
};

} // namespace kronex
