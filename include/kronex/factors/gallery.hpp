#pragma once
// Realistic 1D factors for tests, benchmarks and demos:
//   bspline_mass(n, p, bc):      M_ij = ∫ N_i N_j   over [0, 1]
//   bspline_stiffness(n, p, bc): K_ij = ∫ N_i' N_j'
// with n B-splines of degree p on uniform knots (clamped: open knot vector, n - p elements;
// periodic: n elements, the splines wrap around), assembled element by element with (p+1)-point
// Gauss-Legendre quadrature, which is exact for these polynomial integrands;
//   laplacian(n, bc): the second-order finite-difference -d²/dx² on [0, 1] (clamped: Dirichlet,
// n interior points, h = 1/(n+1); periodic: n points, h = 1/n).
// Both stiffness matrices are singular (constants are in their kernel: no boundary condition is
// imposed), and so is the periodic Laplacian; use them in apply, or in sums with a mass matrix.
#include <cmath>
#include <cstddef>
#include <vector>

#include "../core/error.hpp"
#include "banded.hpp"

namespace kronex::gallery {

namespace detail {

// Gauss-Legendre nodes and weights on [0, 1] (Newton on the Legendre polynomial).
inline void gauss_legendre(std::size_t m, std::vector<double>& x, std::vector<double>& w) {
  x.assign(m, 0.0);
  w.assign(m, 0.0);
  const double pi = std::acos(-1.0);
  for (std::size_t i = 0; i < m; ++i) {
    double z = std::cos(pi * (double(i) + 0.75) / (double(m) + 0.5)), dp = 1.0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1.0, p1 = 0.0;
      for (std::size_t k = 1; k <= m; ++k) {
        const double p2 = p1;
        p1 = p0;
        p0 = ((2.0 * double(k) - 1.0) * z * p1 - (double(k) - 1.0) * p2) / double(k);
      }
      dp = double(m) * (z * p0 - p1) / (z * z - 1.0);
      const double dz = p0 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[i] = 0.5 * (1.0 - z);
    w[i] = 1.0 / ((1.0 - z * z) * dp * dp);
  }
}

// Values of the p+1 B-splines of degree p that are nonzero on knot span `span`, at x
// (the triangular Cox-de Boor recursion).
inline std::vector<double> basis(const std::vector<double>& t, std::size_t p, std::size_t span, double x) {
  std::vector<double> N(p + 1, 0.0), left(p + 1), right(p + 1);
  N[0] = 1.0;
  for (std::size_t j = 1; j <= p; ++j) {
    left[j] = x - t[span + 1 - j];
    right[j] = t[span + j] - x;
    double saved = 0.0;
    for (std::size_t r = 0; r < j; ++r) {
      const double tmp = N[r] / (right[r + 1] + left[j - r]);
      N[r] = saved + right[r + 1] * tmp;
      saved = left[j - r] * tmp;
    }
    N[j] = saved;
  }
  return N;
}

// First derivatives of the same p+1 B-splines, from the degree p-1 values.
inline std::vector<double> basis_derivative(const std::vector<double>& t, std::size_t p, std::size_t span, double x) {
  std::vector<double> dN(p + 1, 0.0);
  if (p == 0) return dN;
  const std::vector<double> Nm = basis(t, p - 1, span, x);  // splines span-p+1 .. span
  for (std::size_t r = 0; r <= p; ++r) {
    const std::size_t i = span - p + r;
    double v = 0.0;
    if (r >= 1 && t[i + p] > t[i]) v += Nm[r - 1] / (t[i + p] - t[i]);
    if (r < p && t[i + p + 1] > t[i + 1]) v -= Nm[r] / (t[i + p + 1] - t[i + 1]);
    dN[r] = double(p) * v;
  }
  return dN;
}

// The (p+1) x (p+1) element matrix of the splines nonzero on knot span `span` of t, row-major:
// (p+1)-point Gauss-Legendre quadrature of N_r N_s (or N_r' N_s').
inline std::vector<double> element_matrix(const std::vector<double>& t, std::size_t p, std::size_t span,
                                          bool derivative, const std::vector<double>& gx,
                                          const std::vector<double>& gw) {
  std::vector<double> m((p + 1) * (p + 1), 0.0);
  const double a = t[span], b = t[span + 1];
  for (std::size_t q = 0; q < gx.size(); ++q) {
    const double x = a + (b - a) * gx[q], wq = (b - a) * gw[q];
    const std::vector<double> v = derivative ? basis_derivative(t, p, span, x) : basis(t, p, span, x);
    for (std::size_t r = 0; r <= p; ++r)
      for (std::size_t s = 0; s <= p; ++s) m[r * (p + 1) + s] += wq * v[r] * v[s];
  }
  return m;
}

// O(n p^2): on uniform knots every element whose 2p+2 surrounding knots are uniform (all of them
// when periodic; all but p at each end when clamped) has the same element matrix, computed once
// on a reference span; only the clamped boundary elements are integrated one by one.
template <class T>
banded<T> assemble(std::size_t n, std::size_t p, boundary bc, bool derivative, const char* name) {
  const bool periodic = bc == boundary::periodic;
  if (!periodic && n < p + 1) {
    throw invalid_factor(kronex::detail::message("kronex::gallery::", name, ": a clamped spline space of degree ",
                                                 p, " needs n >= ", p + 1, " basis functions, got n=", n));
  }
  if (periodic && n < 2 * p + 1) {
    throw invalid_factor(kronex::detail::message("kronex::gallery::", name, ": a periodic spline space of degree ",
                                                 p, " needs n >= ", 2 * p + 1, " basis functions, got n=", n));
  }
  const std::size_t ne = periodic ? n : n - p;
  const double h = 1.0 / double(ne);
  std::vector<double> t(n + p + 1 + (periodic ? p : 0));
  for (std::size_t k = 0; k < t.size(); ++k) {
    if (periodic) t[k] = (double(k) - double(p)) * h;
    else t[k] = k <= p ? 0.0 : (k >= n ? 1.0 : double(k - p) * h);
  }
  std::vector<double> gx, gw;
  gauss_legendre(p + 1, gx, gw);
  // The reference span [0, h] among uniform knots -p h, ..., (p+1) h.
  std::vector<double> t_ref(2 * p + 2);
  for (std::size_t k = 0; k < t_ref.size(); ++k) t_ref[k] = (double(k) - double(p)) * h;
  const std::vector<double> uniform = element_matrix(t_ref, p, p, derivative, gx, gw);

  banded<T> A(n, p, p, bc);
  for (std::size_t e = 0; e < ne; ++e) {
    // Element e covers knots t[e .. e+2p+1]; clamped knots are uniform for p <= k <= n.
    const bool interior = periodic || (e >= p && e + p + 1 <= ne);
    const std::vector<double> boundary_matrix =
        interior ? std::vector<double>() : element_matrix(t, p, e + p, derivative, gx, gw);
    const std::vector<double>& m = interior ? uniform : boundary_matrix;
    for (std::size_t r = 0; r <= p; ++r)
      for (std::size_t s = 0; s <= p; ++s) A((e + r) % n, (e + s) % n) += T(m[r * (p + 1) + s]);
  }
  return A;
}

} // namespace detail

template <class T>
banded<T> bspline_mass(std::size_t n, std::size_t degree, boundary bc = boundary::clamped) {
  return detail::assemble<T>(n, degree, bc, false, "bspline_mass");
}

template <class T>
banded<T> bspline_stiffness(std::size_t n, std::size_t degree, boundary bc = boundary::clamped) {
  if (degree == 0) throw invalid_factor("kronex::gallery::bspline_stiffness: degree must be at least 1");
  return detail::assemble<T>(n, degree, bc, true, "bspline_stiffness");
}

template <class T>
banded<T> laplacian(std::size_t n, boundary bc = boundary::clamped) {
  const bool periodic = bc == boundary::periodic;
  if (periodic && n < 3) {
    throw invalid_factor(kronex::detail::message("kronex::gallery::laplacian: a periodic Laplacian needs n >= 3, got n=", n));
  }
  if (n == 0) throw invalid_factor("kronex::gallery::laplacian: n must be at least 1");
  const double h = periodic ? 1.0 / double(n) : 1.0 / double(n + 1), s = 1.0 / (h * h);
  const std::size_t w = n > 1 ? 1 : 0;
  banded<T> A(n, w, w, bc);
  for (std::size_t i = 0; i < n; ++i) {
    A(i, i) = T(2.0 * s);
    if (i + 1 < n || periodic) A(i, (i + 1) % n) = T(-s);
    if (i > 0 || periodic) A(i, (i + n - 1) % n) = T(-s);
  }
  return A;
}

} // namespace kronex::gallery
