#pragma once
// Variable-coefficient operators on tensor-product B-spline spaces, assembled as sparse_operator:
// the operators that are *not* Kronecker products, and that a Kronecker product (or sum) of the
// 1D gallery matrices preconditions well. For tests, examples and benchmarks of Krylov solves.
//
//   gallery::variable_mass<T>(shape, p, c)        A_IJ = ∫ c(x) N_I(x) N_J(x) dx
//   gallery::variable_stiffness<T>(shape, p, c)   A_IJ = ∫ c(x) ∇N_I(x)·∇N_J(x) dx
//   gallery::variable_helmholtz<T>(shape, p, c, σ) A_IJ = ∫ c(x) (∇N_I·∇N_J + σ N_I N_J) dx
//
// over the unit cube [0, 1]^D (D = shape.size(), 1 to 3), N_I = N_{i_0} ⊗ ... ⊗ N_{i_{D-1}} the
// clamped B-splines of degree p on uniform knots, shape[d] of them along axis d (the 1D spaces of
// gallery::bspline_mass and bspline_stiffness), I flattened in C order. c(const double* x) takes
// the D coordinates of a point. Quadrature: p + 2 Gauss-Legendre points per axis and element, so
// for a constant c the result is exact and equals the Kronecker products of the 1D gallery
// matrices (c ⊗_d M_d, and c Σ_k M⊗..⊗K_k⊗..⊗M), and a polynomial c of degree up to 2 per axis
// is integrated exactly. No boundary condition is imposed: the stiffness matrix has the constants
// in its kernel (add a mass matrix, or use the mass matrix alone, for a definite operator).
//
// Cost: O(E (p+2)^D (p+1)^{2D}) for E elements; memory: the (2p+1)^D entries per row of the CSR
// matrix. Assembled directly into the CSR pattern (the Kronecker product of the 1D band patterns).
#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

#include "../core/error.hpp"
#include "../core/shape.hpp"
#include "../factors/gallery.hpp"
#include "sparse_operator.hpp"

namespace kronex::gallery {

namespace detail {

// One axis: for each element e and quadrature point q, the point, its weight, and the values and
// first derivatives of the p+1 splines nonzero there (splines e .. e+p).
struct axis_quadrature {
  std::size_t n = 0, elements = 0, points = 0;
  std::vector<double> x, w;           // [e * points + q]
  std::vector<double> value, slope;   // [(e * points + q) * (p+1) + r]
};

inline axis_quadrature quadrature_of_axis(std::size_t n, std::size_t p) {
  if (n < p + 1) {
    throw invalid_factor(kronex::detail::message("kronex::gallery: a clamped spline space of degree ", p,
                                                 " needs n >= ", p + 1, " basis functions, got n=", n));
  }
  axis_quadrature a;
  a.n = n;
  a.elements = n - p;
  a.points = p + 2;
  const double h = 1.0 / double(a.elements);
  std::vector<double> t(n + p + 1);
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = k <= p ? 0.0 : (k >= n ? 1.0 : double(k - p) * h);
  std::vector<double> gx, gw;
  gauss_legendre(a.points, gx, gw);
  for (std::size_t e = 0; e < a.elements; ++e)
    for (std::size_t q = 0; q < a.points; ++q) {
      const double lo = t[e + p], hi = t[e + p + 1], x = lo + (hi - lo) * gx[q];
      a.x.push_back(x);
      a.w.push_back((hi - lo) * gw[q]);
      const std::vector<double> v = basis(t, p, e + p, x), s = basis_derivative(t, p, e + p, x);
      a.value.insert(a.value.end(), v.begin(), v.end());
      a.slope.insert(a.slope.end(), s.begin(), s.end());
    }
  return a;
}

template <class T, class F>
sparse_operator<T> assemble_variable(const shape_t& shape, std::size_t p, const F& c, double stiffness_weight,
                                     double mass_weight, const char* name) {
  const bool stiffness = stiffness_weight != 0;
  const std::size_t D = shape.size();
  if (D < 1 || D > 3) {
    throw invalid_operator(kronex::detail::message("kronex::gallery::", name, ": the shape ",
                                                   kronex::detail::format_shape(shape), " has ", D,
                                                   " axes; 1 to 3 are supported"));
  }
  if (stiffness && p == 0) throw invalid_factor(kronex::detail::message("kronex::gallery::", name, ": degree must be at least 1"));
  std::array<axis_quadrature, 3> ax;
  for (std::size_t d = 0; d < D; ++d) ax[d] = quadrature_of_axis(shape[d], p);
  const std::size_t N = kronex::detail::product(shape), L = p + 1;

  // The CSR pattern: row I couples with every J such that |i_d - j_d| <= p on every axis, in
  // C order. Row I's columns form a box; the entry of column J sits at the box's C-order index.
  std::array<std::size_t, 3> n{1, 1, 1}, lo{}, ext{};
  for (std::size_t d = 0; d < D; ++d) n[d] = shape[d];
  const auto box_of = [&](std::size_t row) {
    std::size_t rest = row;
    for (std::size_t d = D; d-- > 0;) {
      const std::size_t i = rest % n[d];
      rest /= n[d];
      lo[d] = i >= p ? i - p : 0;
      ext[d] = std::min(n[d] - 1, i + p) - lo[d] + 1;
    }
  };
  std::vector<std::size_t> row_ptr(N + 1, 0);
  for (std::size_t row = 0; row < N; ++row) {
    box_of(row);
    std::size_t k = 1;
    for (std::size_t d = 0; d < D; ++d) k *= ext[d];
    row_ptr[row + 1] = row_ptr[row] + k;
  }
  std::vector<std::size_t> col_idx(row_ptr[N]);
  for (std::size_t row = 0; row < N; ++row) {
    box_of(row);
    std::array<std::size_t, 3> j{};
    for (std::size_t k = row_ptr[row]; k < row_ptr[row + 1]; ++k) {
      std::size_t col = 0;
      for (std::size_t d = 0; d < D; ++d) col = col * n[d] + lo[d] + j[d];
      col_idx[k] = col;
      for (std::size_t d = D; d-- > 0 && ++j[d] == ext[d];) j[d] = 0;
    }
  }
  std::vector<double> values(col_idx.size(), 0.0);

  // Element by element: the element matrix at every quadrature point, added into the pattern.
  std::size_t local = 1, points = 1, elements = 1;
  for (std::size_t d = 0; d < D; ++d) {
    local *= L;
    points *= ax[d].points;
    elements *= ax[d].elements;
  }
  std::vector<double> phi(local), grad(local * D), element(local * local);
  std::array<std::size_t, 3> e{}, q{}, a{};
  double x[3] = {};
  for (std::size_t el = 0; el < elements; ++el) {
    std::size_t rest = el;
    for (std::size_t d = D; d-- > 0;) {
      e[d] = rest % ax[d].elements;
      rest /= ax[d].elements;
    }
    std::fill(element.begin(), element.end(), 0.0);
    for (std::size_t qp = 0; qp < points; ++qp) {
      rest = qp;
      double w = 1;
      for (std::size_t d = D; d-- > 0;) {
        q[d] = rest % ax[d].points;
        rest /= ax[d].points;
        const std::size_t at = e[d] * ax[d].points + q[d];
        x[d] = ax[d].x[at];
        w *= ax[d].w[at];
      }
      w *= c(static_cast<const double*>(x));
      // The local basis at this point: values and gradients of the L^D tensor-product splines.
      for (std::size_t f = 0; f < local; ++f) {
        rest = f;
        for (std::size_t d = D; d-- > 0;) {
          a[d] = rest % L;
          rest /= L;
        }
        double v = 1;
        for (std::size_t d = 0; d < D; ++d) v *= ax[d].value[(e[d] * ax[d].points + q[d]) * L + a[d]];
        phi[f] = v;
        if (stiffness)
          for (std::size_t k = 0; k < D; ++k) {
            double g = 1;
            for (std::size_t d = 0; d < D; ++d) {
              const std::size_t at = (e[d] * ax[d].points + q[d]) * L + a[d];
              g *= d == k ? ax[d].slope[at] : ax[d].value[at];
            }
            grad[f * D + k] = g;
          }
      }
      for (std::size_t f = 0; f < local; ++f)
        for (std::size_t g = 0; g < local; ++g) {
          double s = 0;
          if (stiffness)
            for (std::size_t k = 0; k < D; ++k) s += grad[f * D + k] * grad[g * D + k];
          element[f * local + g] += w * (stiffness_weight * s + mass_weight * phi[f] * phi[g]);
        }
    }
    // Scatter: local spline f of element e is global spline e_d + a_d on each axis.
    for (std::size_t f = 0; f < local; ++f) {
      std::size_t row = 0;
      rest = f;
      for (std::size_t d = D; d-- > 0;) {
        a[d] = rest % L;
        rest /= L;
      }
      for (std::size_t d = 0; d < D; ++d) row = row * n[d] + e[d] + a[d];
      box_of(row);
      for (std::size_t g = 0; g < local; ++g) {
        std::size_t r2 = g, at = 0;
        std::array<std::size_t, 3> b{};
        for (std::size_t d = D; d-- > 0;) {
          b[d] = r2 % L;
          r2 /= L;
        }
        for (std::size_t d = 0; d < D; ++d) at = at * ext[d] + (e[d] + b[d] - lo[d]);
        values[row_ptr[row] + at] += element[f * local + g];
      }
    }
  }
  std::vector<T> typed(values.begin(), values.end());
  return sparse_operator<T>(shape, std::move(row_ptr), std::move(col_idx), std::move(typed));
}

} // namespace detail

// ∫ c N_I N_J over [0, 1]^D (see the top of this file).
template <class T, class F>
sparse_operator<T> variable_mass(const shape_t& shape, std::size_t degree, const F& coefficient) {
  return detail::assemble_variable<T>(shape, degree, coefficient, 0.0, 1.0, "variable_mass");
}

// ∫ c ∇N_I·∇N_J over [0, 1]^D (see the top of this file).
template <class T, class F>
sparse_operator<T> variable_stiffness(const shape_t& shape, std::size_t degree, const F& coefficient) {
  return detail::assemble_variable<T>(shape, degree, coefficient, 1.0, 0.0, "variable_stiffness");
}

// ∫ c (∇N_I·∇N_J + σ N_I N_J) over [0, 1]^D: the weak form of -∇·(c ∇u) + σ c u with natural
// boundary conditions, definite for σ > 0 and c > 0 (see the top of this file).
template <class T, class F>
sparse_operator<T> variable_helmholtz(const shape_t& shape, std::size_t degree, const F& coefficient, double sigma) {
  return detail::assemble_variable<T>(shape, degree, coefficient, 1.0, sigma, "variable_helmholtz");
}

} // namespace kronex::gallery
