#pragma once
// Fast diagonalisation (Lynch, Rice and Thomas): the set-up that makes a separable sum
// (separable.hpp) solvable by 2D mode-wise products and one scaling:
//   L^{-1} = (V_1 ⊗ ... ⊗ V_D) diag(1 / s) (V_1^H ⊗ ... ⊗ V_D^H),
//   s(i) = sum_t c_t prod_d w_{t,d}[i_d],  w_{t,d} = lambda_d if term t uses K_d, else 1.
// Per axis one generalized eigenproblem (?sygv/?hegv, O(n_d^3) once); the scaling is computed
// from the eigenvalue vectors when it runs, so set-up memory stays O(sum n_d^2).
//
// Singular sums: an eigenvalue sum at or below threshold * max|s| is refused (singular_factor
// naming its multi-index), or, for a pseudo-inverse, dropped. The minimum-norm least-squares
// solution then also needs the dropped eigenvectors' span N removed from the right-hand side and
// from the result (V is M-orthogonal, not orthogonal): x = P V D^+ V^H P b with
// P = I - N (N^H N)^{-1} N^H. Each column of N is a rank-one tensor, so P costs a few dot
// products and rank-one updates (pseudo_projection below).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "../lapack/lapack.hpp"
#include "separable.hpp"

namespace kronex::detail {

// The most eigenvectors a pseudo-inverse may drop: its projections cost k dot products and k
// rank-one updates per solve, and a k x k Gram matrix.
inline constexpr std::size_t max_dropped_modes = 64;

// What the scaling step reads: the coefficients and, per term and axis, the weights w_{t,d}.
template <class T>
struct eigen_scaling {
  shape_t sizes;
  std::vector<T> coefs;                // c_t
  std::vector<real_t<T>> weights;      // w_{t,d}[i] at t * axis_total + axis_offset[d] + i
  std::vector<std::size_t> axis_offset;
  std::size_t axis_total = 0;
  T scale = T(1);                      // the inverse's own coefficient: x(i) *= scale / s(i)
  double cutoff = -1;                  // |s| <= cutoff: dropped (pseudo-inverse only)

  std::size_t terms() const { return coefs.size(); }
  const real_t<T>* weight(std::size_t t, std::size_t d) const { return weights.data() + t * axis_total + axis_offset[d]; }

  // Calls f(flat, s) for every entry of the block `local` at global offset `origin` (C order,
  // flat index within the block), with s the eigenvalue sum there.
  template <class F>
  void for_each_sum(const shape_t& local, const shape_t& origin, F&& f) const {
    const std::size_t D = sizes.size(), T_ = terms(), last = local[D - 1];
    if (product(local) == 0) return;
    std::array<std::size_t, 6> idx{};  // the index of the axes before the last (rank <= 6)
    std::vector<T>& prefix = m_prefix;
    prefix.resize(T_);                 // allocates on the first call only (at compile time)
    std::size_t flat = 0;
    for (;;) {
      for (std::size_t t = 0; t < T_; ++t) {
        T p = coefs[t];
        for (std::size_t d = 0; d + 1 < D; ++d) p *= weight(t, d)[origin[d] + idx[d]];
        prefix[t] = p;
      }
      for (std::size_t j = 0; j < last; ++j, ++flat) {
        T s(0);
        for (std::size_t t = 0; t < T_; ++t) s += prefix[t] * weight(t, D - 1)[origin[D - 1] + j];
        f(flat, s);
      }
      bool done = true;  // the next index (an odometer)
      for (std::size_t d = D - 1; d-- > 0;) {
        if (++idx[d] < local[d]) {
          done = false;
          break;
        }
        idx[d] = 0;
      }
      if (done) return;
    }
  }

private:
  mutable std::vector<T> m_prefix;  // scratch: each term's product over the axes before the last
};

// The pseudo-inverse's projections: the dropped multi-indices, and per dropped mode k and axis d
// the column V_d[:, j_kd] (physical basis) and g_kd = V_d^H V_d[:, j_kd] (eigenbasis), with the
// inverse Gram matrix (N^H N)^{-1}, equal in both bases.
template <class T>
struct pseudo_projection {
  std::vector<shape_t> dropped;
  std::vector<std::vector<std::vector<T>>> physical, eigenbasis;  // [k][d][i]
  xt::xtensor<T, 2> gram_inverse;
  std::size_t rank() const { return dropped.size(); }
};

template <class T>
struct fd_axis {
  std::size_t n = 0;
  bool identity = false;        // V = I: the axis needs no transform
  xt::xtensor<T, 2> v;          // row-major V, V^H M V = I
  std::vector<real_t<T>> lambda;
  std::string m_name, k_name;   // as separable_axis
};

template <class T>
struct fd_setup {
  std::vector<fd_axis<T>> axes;
  eigen_scaling<T> scaling;
  pseudo_projection<T> projection;
  double min_abs = 0, max_abs = 0;
  shape_t min_index;
};

// The inverse of a small k x k matrix (the pseudo-inverse's Gram matrix, k <= 64) by
// Gauss-Jordan elimination with partial pivoting: kronex's headers need no BLAS wrapper library.
template <class T>
xt::xtensor<T, 2> small_inverse(xt::xtensor<T, 2> a) {
  const std::size_t k = a.shape()[0];
  xt::xtensor<T, 2> inv = xt::zeros<T>({k, k});
  for (std::size_t i = 0; i < k; ++i) inv(i, i) = T(1);
  for (std::size_t c = 0; c < k; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < k; ++r)
      if (std::abs(a(r, c)) > std::abs(a(p, c))) p = r;
    if (a(p, c) == T(0))
      throw error("kronex: the dropped eigenvectors of a pseudo-inverse are linearly dependent (singular Gram matrix)");
    for (std::size_t j = 0; j < k; ++j) {
      std::swap(a(c, j), a(p, j));
      std::swap(inv(c, j), inv(p, j));
    }
    const T d = T(1) / a(c, c);
    for (std::size_t j = 0; j < k; ++j) {
      a(c, j) *= d;
      inv(c, j) *= d;
    }
    for (std::size_t r = 0; r < k; ++r) {
      if (r == c || a(r, c) == T(0)) continue;
      const T f = a(r, c);
      for (std::size_t j = 0; j < k; ++j) {
        a(r, j) -= f * a(c, j);
        inv(r, j) -= f * inv(c, j);
      }
    }
  }
  return inv;
}

// The threshold below which |s| / max|s| counts as zero: min_rcond when set, else
// (sum_d n_d) eps of the value type.
template <class T>
double eigen_threshold(const shape_t& sizes, const compile_options& o) {
  if (o.min_rcond >= 0) return o.min_rcond;
  std::size_t n = 0;
  for (std::size_t s : sizes) n += s;
  return double(n) * double(std::numeric_limits<real_t<T>>::epsilon());
}

template <class T>
std::vector<T> column_major(const xt::xtensor<T, 2>& a) {
  const std::size_t n = a.shape()[0];
  std::vector<T> c(n * n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) c[i + j * n] = a(i, j);
  return c;
}

// K v = lambda M v on one axis (M = I when m_identity). Returns LAPACK's info.
template <class T>
long solve_axis(const separable_axis<T>& a, fd_axis<T>& out) {
  const std::size_t n = a.n;
  std::vector<T> k = column_major(a.k), m(n * n, T(0));
  if (a.m_identity) for (std::size_t i = 0; i < n; ++i) m[i + i * n] = T(1);
  else m = column_major(a.m);
  out.lambda.assign(n, real_t<T>(0));
  const long info = lapack::sygv<T>(lapack::int_t(n), k.data(), m.data(), out.lambda.data());
  if (info != 0) return info;
  out.v = xt::xtensor<T, 2>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) out.v(i, j) = k[i + j * n];
  return 0;
}

// The eigen set-up of a separable sum (the inverse_sum node `s`, already analysed).
template <class T>
fd_setup<T> make_fd_setup(const operator_tree<T>& s, separable_sum<T> sum, const compile_options& options) {
  fd_setup<T> fd;
  const std::size_t D = sum.axes.size();
  for (std::size_t d = 0; d < D; ++d) {
    separable_axis<T>& a = sum.axes[d];
    fd_axis<T> ax;
    ax.n = a.n;
    if (!a.has_k) {
      ax.identity = true;
      ax.lambda.assign(a.n, real_t<T>(1));
      ax.m_name = a.m_name;
      fd.axes.push_back(std::move(ax));
      continue;
    }
    long info = solve_axis(a, ax);
    if (info > long(a.n) && !a.m_identity) {
      // M is not definite: K may be, with the roles swapped (every term's use flips).
      std::swap(a.m, a.k);
      std::swap(a.m_name, a.k_name);
      for (auto& u : sum.uses_k) u[d] = !u[d];
      const long swapped = solve_axis(a, ax);
      if (swapped != 0)
        throw not_separable(message("kronex: cannot solve ", s.text(), ": neither ", a.k_name, " nor ", a.m_name,
                                    " on axis ", d, " is positive definite (LAPACK ?sygv info ", info, " and ",
                                    swapped, "); fast diagonalisation needs one of them definite"));
      info = swapped;
    }
    if (info > long(a.n))
      throw not_separable(message("kronex: cannot solve ", s.text(), ": ", a.m_name, " on axis ", d,
                                  " is not positive definite (LAPACK ?sygv info ", info, ")"));
    if (info != 0) throw lapack_error(message("kronex: ?sygv failed on axis ", d, " with info ", info));
    ax.m_name = a.m_name;
    ax.k_name = a.k_name;
    fd.axes.push_back(std::move(ax));
  }

  // The scaling's weights.
  eigen_scaling<T>& e = fd.scaling;
  e.sizes = sum.sizes;
  e.coefs = sum.coefs;
  e.scale = s.coef;
  for (std::size_t d = 0; d < D; ++d) {
    e.axis_offset.push_back(e.axis_total);
    e.axis_total += sum.sizes[d];
  }
  e.weights.assign(e.terms() * e.axis_total, real_t<T>(1));
  for (std::size_t t = 0; t < e.terms(); ++t)
    for (std::size_t d = 0; d < D; ++d)
      if (sum.uses_k[t][d])
        std::copy(fd.axes[d].lambda.begin(), fd.axes[d].lambda.end(), e.weights.begin() + long(t * e.axis_total + e.axis_offset[d]));

  // The extremes of |s|, and what counts as zero.
  fd.min_abs = std::numeric_limits<double>::infinity();
  std::size_t min_flat = 0;
  e.for_each_sum(sum.sizes, shape_t(D, 0), [&](std::size_t flat, const T& v) {
    const double a = double(std::abs(v));
    if (a < fd.min_abs || (std::isnan(a) && !std::isnan(fd.min_abs))) { fd.min_abs = a; min_flat = flat; }
    fd.max_abs = std::max(fd.max_abs, a);
  });
  fd.min_index = unflatten(min_flat, sum.sizes);
  const double threshold = eigen_threshold<T>(sum.sizes, options);
  if (s.rtol < 0) {
    if (!(fd.min_abs > threshold * fd.max_abs) || !std::isfinite(fd.max_abs))
      throw singular_factor(0, 0, message("kronex: ", s.text(), " is singular: its eigenvalue sum at ",
                                          format_shape(fd.min_index), " is ", fd.min_abs, " (", fd.min_abs / fd.max_abs,
                                          " of the largest, ", fd.max_abs, "; the threshold is ", threshold,
                                          "); use pseudo_inverse(rtol) for the minimum-norm least-squares solution"));
    return fd;
  }

  // Pseudo-inverse: the dropped modes and their projections.
  for (const T& c : e.coefs)
    if (c != T(std::real(c)))
      throw not_separable(message("kronex: pseudo_inverse of ", s.text(),
                                  " needs real coefficients (a hermitian sum); a term's coefficient is complex"));
  e.cutoff = s.rtol * fd.max_abs;
  pseudo_projection<T>& p = fd.projection;
  e.for_each_sum(sum.sizes, shape_t(D, 0), [&](std::size_t flat, const T& v) {
    if (double(std::abs(v)) > e.cutoff) return;
    if (p.dropped.size() == max_dropped_modes)
      throw size_limit_exceeded(message("kronex: pseudo_inverse of ", s.text(), " with rtol ", s.rtol, " drops more than ",
                                        max_dropped_modes, " eigenvalue sums; use a smaller rtol"));
    p.dropped.push_back(unflatten(flat, sum.sizes));
  });
  const std::size_t k = p.rank();
  for (const shape_t& j : p.dropped) {
    std::vector<std::vector<T>> phys, eig;
    for (std::size_t d = 0; d < D; ++d) {
      const fd_axis<T>& ax = fd.axes[d];
      std::vector<T> col(ax.n), g(ax.n);
      for (std::size_t i = 0; i < ax.n; ++i) col[i] = ax.identity ? T(i == j[d] ? 1 : 0) : ax.v(i, j[d]);
      for (std::size_t i = 0; i < ax.n; ++i) {
        T acc(0);
        for (std::size_t r = 0; r < ax.n; ++r) acc += conj_if_complex(ax.identity ? T(r == i ? 1 : 0) : ax.v(r, i)) * col[r];
        g[i] = acc;
      }
      phys.push_back(std::move(col));
      eig.push_back(std::move(g));
    }
    p.physical.push_back(std::move(phys));
    p.eigenbasis.push_back(std::move(eig));
  }
  if (k > 0) {
    xt::xtensor<T, 2> gram = xt::xtensor<T, 2>::from_shape({k, k});
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t b = 0; b < k; ++b) {
        T g(1);  // (⊗ v_a)^H (⊗ v_b) = prod_d v_ad^H v_bd = prod_d g_bd[j_ad]
        for (std::size_t d = 0; d < D; ++d) g *= p.eigenbasis[b][d][p.dropped[a][d]];
        gram(a, b) = g;
      }
    p.gram_inverse = small_inverse(std::move(gram));
  }
  return fd;
}

} // namespace kronex::detail
