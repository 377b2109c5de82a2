#pragma once
// LU factors of one 1D factor in a form the substitution kernels read directly:
// A = P L U, with the row interchanges as a list of swaps, L unit lower and U upper, both stored
// as sparse rows with exact zeros and negligible entries dropped (drop_negligible).
//
// Periodic bands: a small one (n <= fold_above) is factored as a full band, whose LU only fills
// an "arrow" (last rows of L, last columns of U; dropping zeros keeps it cheap), but costs
// O(n^2) memory and O(n^3) time in LAPACK. A larger one is factored "folded": in the order
// 0, n-1, 1, n-2, 2, ... every pair of rows that are neighbours on the circle is at most about
// 2p positions apart, so B = Q A Q^T is an ordinary band of width w ~ 2p + 1, factored by gbtrf
// with partial pivoting in O(n w^2) time and O(n w) memory. The factors then live in that order
// (lu_factors::order); the solve programs address the rows of A through it, so nothing is
// permuted at run time.
#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "../../core/error.hpp"
#include "../../core/options.hpp"
#include "../../factors/banded.hpp"
#include "../../factors/factor_view.hpp"
#include "../../lapack/lapack.hpp"

namespace kronex::detail {

using index_t = std::uint32_t;

template <class T>
using sparse_row = std::vector<std::pair<index_t, T>>;

template <class T>
struct lu_factors {
  std::size_t n = 0;
  std::vector<std::pair<index_t, index_t>> swaps;  // applied in order for P^{-1} b
  std::vector<sparse_row<T>> lower;                // strictly lower part of L, by row
  std::vector<sparse_row<T>> upper;                // strictly upper part of U, by row
  std::vector<T> diag;                             // diagonal of U
  std::string method;                              // "gbtrf", "pbtrf" or "getrf"
  double rcond = 1;                                // reciprocal 1-norm condition estimate (gbcon/gecon)
  std::size_t lapack_kl = 0, lapack_ku = 0;        // band widths given to gbtrf (pbtrf: kd twice)
  std::vector<index_t> order;                      // position k of the factors is row order[k] of A
                                                   // (folded periodic bands); empty: k itself

  std::size_t nnz_lower() const { std::size_t s = 0; for (auto& r : lower) s += r.size(); return s; }
  std::size_t nnz_upper() const { std::size_t s = diag.size(); for (auto& r : upper) s += r.size(); return s; }
};

// info is LAPACK's: the 1-based index of the zero pivot (for a diagonal factor, of the zero entry).
[[noreturn]] inline void throw_singular(std::size_t mode, long info, const std::string& factor,
                                        const char* routine) {
  const std::string what =
      std::string(routine) == "diagonal"
          ? message("diagonal entry d(", info - 1, ") is zero, info=", info)
          : message(routine, " returned info=", info, " (U(", info - 1, ",", info - 1, ") is exactly zero)");
  throw singular_factor(mode, info, message("kronex: the factor for mode ", mode, " (", factor, ") is singular: ", what));
}

template <class T>
void check_info(lapack::int_t info, std::size_t mode, const factor_view<T>& f, const char* routine) {
  if (info < 0) {
    throw lapack_error(message("kronex: ", routine, " rejected argument ", -info, " for mode ", mode,
                               " (", f.describe(), "); this is a kronex bug"));
  }
  if (info > 0) throw_singular(mode, long(info), f.describe(), routine);
}

// Band widths that LAPACK must see; a periodic band's corners make it (nearly) full.
template <class T>
std::pair<std::size_t, std::size_t> lapack_band(const factor_view<T>& f) {
  if (f.bc == boundary::clamped) return {f.kl, f.ku};
  std::size_t kl = 0, ku = 0;
  for (std::size_t i = 0; i < f.n; ++i) {
    for (long d = -long(f.kl); d <= long(f.ku); ++d) {
      const std::size_t j = std::size_t((long(i) + d + long(f.n)) % long(f.n));
      if (i > j) kl = std::max(kl, i - j);
      if (j > i) ku = std::max(ku, j - i);
    }
  }
  return {kl, ku};
}

// Periodic bands larger than this are factored folded (see the top of this file).
constexpr std::size_t fold_above = 64;

// Where row i of A sits in the folding order 0, n-1, 1, n-2, 2, ...
inline std::size_t fold_position(std::size_t i, std::size_t n) { return 2 * i < n ? 2 * i : 2 * (n - 1 - i) + 1; }

// The folding order: position k holds row fold_order(n)[k].
inline std::vector<index_t> fold_order(std::size_t n) {
  std::vector<index_t> order(n);
  for (std::size_t k = 0; k < n; ++k) order[k] = index_t(k % 2 == 0 ? k / 2 : n - 1 - k / 2);
  return order;
}

// The band width of Q A Q^T: the largest distance, in the folding order, between the row and
// column of an entry of A's band. O(n (kl + ku)).
template <class T>
std::size_t fold_width(const factor_view<T>& f) {
  std::size_t w = 0;
  for (std::size_t i = 0; i < f.n; ++i)
    for (long d = -long(f.kl); d <= long(f.ku); ++d) {
      const std::size_t j = std::size_t((long(i) + d + long(f.n)) % long(f.n));
      const std::size_t a = fold_position(i, f.n), b = fold_position(j, f.n);
      w = std::max(w, a > b ? a - b : b - a);
    }
  return w;
}

// How a banded factor is given to gbtrf: its band widths there, and whether it is folded. A
// periodic band is folded when it is larger than fold_above and folding narrows it (w < n / 2).
struct band_layout {
  std::size_t kl = 0, ku = 0;
  bool folded = false;
};
template <class T>
band_layout layout_for_lapack(const factor_view<T>& f) {
  if (f.bc == boundary::periodic && f.n > fold_above) {
    const std::size_t w = fold_width(f);
    if (2 * w < f.n) return {w, w, true};
  }
  const auto [kl, ku] = lapack_band(f);
  return {kl, ku, false};
}

// B = Q A Q^T as an ordinary band of width w: B(fold_position(i), fold_position(j)) = A(i, j).
template <class T>
banded<T> fold(const factor_view<T>& f, std::size_t w) {
  banded<T> b(f.n, w, w, boundary::clamped);
  for (std::size_t i = 0; i < f.n; ++i)
    for (long d = -long(f.kl); d <= long(f.ku); ++d) {
      const std::size_t j = std::size_t((long(i) + d + long(f.n)) % long(f.n));
      b(fold_position(i, f.n), fold_position(j, f.n)) = f(i, j);
    }
  return b;
}

// ||A||_1: the largest column sum of absolute values, for the condition estimate.
template <class T>
double norm1(const factor_view<T>& f) {
  std::vector<double> col(f.n, 0.0);
  for (std::size_t i = 0; i < f.n; ++i) {
    if (f.kind == factor_kind::banded) {
      for (long d = -long(f.kl); d <= long(f.ku); ++d) {
        long j = long(i) + d;
        if (f.bc == boundary::periodic) j = (j + long(f.n)) % long(f.n);
        if (j >= 0 && j < long(f.n)) col[std::size_t(j)] += std::abs(f(i, std::size_t(j)));
      }
    } else {
      for (std::size_t j = 0; j < f.n; ++j) col[j] += std::abs(f(i, j));
    }
  }
  double m = 0;
  for (double c : col) m = std::max(m, c);
  return m;
}

// The smallest reciprocal condition number a factor may have: compile_options::min_rcond, or by
// default n eps of its value type. Below it, a solve loses every digit, so the factor is refused
// as singular.
template <class T>
double rcond_threshold(std::size_t n, const compile_options& opts = {}) {
  if (opts.min_rcond >= 0) return opts.min_rcond;
  return double(n) * double(std::numeric_limits<typename value_traits<T>::real_type>::epsilon());
}

// A successful factorization whose condition estimate says the factor is singular anyway (no
// exactly zero pivot, as rounding decides on some machines), or a pivot so small that a solve
// overflowed (the estimate is then 0): refused whatever the threshold.
template <class T>
void check_rcond(double rcond, std::size_t mode, const factor_view<T>& f, const char* routine,
                 const compile_options& opts) {
  const double threshold = rcond_threshold<T>(f.n, opts);
  if (!(rcond > 0) || rcond < threshold) {
    throw singular_factor(mode, 0,
                          message("kronex: the factor for mode ", mode, " (", f.describe(),
                                  ") is singular to working precision: its reciprocal condition number "
                                  "estimate (", routine, ") is ", rcond, ", below the threshold ", threshold,
                                  opts.min_rcond >= 0 ? " (compile_options::min_rcond)" : " (n eps)"));
  }
}

// x = A^{-1} x (adjoint = false) or A^{-H} x (true) with the factors A = P L U, on one vector,
// in the factors' own order (a folded band's B; the condition number is the same). The adjoint
// solves run column by column over the same rows (each solved entry updates the later ones), so
// no transposed copy of the factors is needed.
template <class T>
void lu_solve_vector(const lu_factors<T>& lu, bool adjoint, T* x) {
  const std::size_t n = lu.n;
  if (!adjoint) {
    for (const auto& [a, b] : lu.swaps) std::swap(x[a], x[b]);
    for (std::size_t i = 1; i < n; ++i)
      for (const auto& [j, v] : lu.lower[i]) x[i] -= v * x[j];
    for (std::size_t i = n; i-- > 0;) {
      for (const auto& [j, v] : lu.upper[i]) x[i] -= v * x[j];
      x[i] /= lu.diag[i];
    }
    return;
  }
  for (std::size_t i = 0; i < n; ++i) {  // U^H y = x: y_i final, then its column updates x_j, j > i
    x[i] /= conj_if_complex(lu.diag[i]);
    for (const auto& [j, v] : lu.upper[i]) x[j] -= conj_if_complex(v) * x[i];
  }
  for (std::size_t i = n; i-- > 0;)  // L^H y = x, backwards: y_i final, then x_j, j < i
    for (const auto& [j, v] : lu.lower[i]) x[j] -= conj_if_complex(v) * x[i];
  for (auto it = lu.swaps.rbegin(); it != lu.swaps.rend(); ++it) std::swap(x[it->first], x[it->second]);
}

// 1 / (||A||_1 ||A^{-1}||_1), ||A^{-1}||_1 estimated by LAPACK's ?lacn2 with solves on the sparse
// factors: O(nnz) per solve, a handful of solves. (?gbcon's triangular solver, ?latbs, takes a
// slow path that rescans the whole vector per column, O(n^2), once n is in the tens of thousands.)
// 0 when the estimate is not finite (a pivot so small that a solve overflowed).
template <class T>
double estimate_rcond(const lu_factors<T>& lu, double anorm) {
  const std::size_t n = lu.n;
  if (n == 0) return 1;
  std::vector<T> x(n, T(0));
  lapack::lacn2_state<T> state;
  double ainvnm = 0;
  lapack::int_t kase = 0;
  do {
    lapack::lacn2(lapack::int_t(n), x.data(), ainvnm, kase, state);
    if (kase != 0) lu_solve_vector(lu, kase == 2, x.data());
  } while (kase != 0);
  if (anorm == 0) return 0;
  const double r = 1.0 / (ainvnm * anorm);
  return std::isfinite(ainvnm) && std::isfinite(r) ? r : 0.0;
}

// Whether a band of half-width w is Hermitian (symmetric for real values) up to the rounding of
// its entries: |a_ij - conj(a_ji)| <= 8 eps |a_ij|, and |im a_jj| <= 8 eps |a_jj| (matrices
// assembled by quadrature, such as B-spline mass matrices, are symmetric only to rounding). Its
// band Cholesky reads the lower triangle: a backward error of that order, as LU's own.
template <class T>
bool is_hermitian_band(const factor_view<T>& band, std::size_t w) {
  using R = real_t<T>;
  const R tol = 8 * std::numeric_limits<R>::epsilon();
  for (std::size_t j = 0; j < band.n; ++j) {
    if (!(std::abs(std::imag(band(j, j))) <= tol * std::abs(band(j, j)))) return false;
    for (std::size_t i = j + 1; i <= std::min(band.n - 1, j + w); ++i) {
      const T a = band(i, j), b = conj_if_complex(band(j, i));
      if (!(std::abs(a - b) <= tol * std::abs(a))) return false;
    }
  }
  return true;
}

// A Hermitian band of half-width w as A = L U without row swaps, from its band Cholesky
// A = C C^H (?pbtrf): L = C D^-1 (unit lower) and U = D C^H, D = diag(C) (so u_jj = c_jj^2). Empty
// when A is not positive definite. For such matrices LU needs no pivoting (Cholesky is backward
// stable without), and partial pivoting only costs: B-spline mass matrices of degree 5 to 7 are
// positive definite, yet gbtrf swaps about every other row of them, which fills U up to 2w
// superdiagonals and keeps the kernels from holding the rows just written in registers (in
// cache, degree 7 at n = 256 solved 1.5-1.8x faster without the swaps).
template <class T>
std::optional<lu_factors<T>> factor_positive_definite_band(const factor_view<T>& band, std::size_t w) {
  const std::size_t n = band.n, ldab = w + 1;
  std::vector<T> ab(ldab * n, T(0));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j; i <= std::min(n - 1, j + w); ++i) ab[(i - j) + j * ldab] = band(i, j);
  if (lapack::pbtrf(lapack::int_t(n), lapack::int_t(w), ab.data(), lapack::int_t(ldab)) != 0) return std::nullopt;
  lu_factors<T> lu;
  lu.n = n;
  lu.method = "pbtrf";
  lu.lapack_kl = lu.lapack_ku = w;
  lu.lower.resize(n);
  lu.upper.resize(n);
  lu.diag.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const T d = ab[j * ldab];  // c_jj, real and positive
    lu.diag[j] = d * d;
    for (std::size_t i = j + 1; i <= std::min(n - 1, j + w); ++i) {
      const T c = ab[(i - j) + j * ldab];
      if (c == T(0)) continue;
      lu.lower[i].emplace_back(index_t(j), c / d);
      lu.upper[j].emplace_back(index_t(i), d * conj_if_complex(c));
    }
  }
  return lu;
}

// The factors gbtrf left in `ab` (band storage with widths kl, ku: ldab = 2 kl + ku + 1) and ipiv.
template <class T>
lu_factors<T> gbtrf_factors(const std::vector<T>& ab, const std::vector<lapack::int_t>& ipiv, std::size_t kl,
                            std::size_t ku) {
  const std::size_t n = ipiv.size(), kv = kl + ku, ldab = 2 * kl + ku + 1;
  lu_factors<T> lu;
  lu.n = n;
  lu.method = "gbtrf";
  lu.lapack_kl = kl;
  lu.lapack_ku = ku;
  lu.lower.resize(n);
  lu.upper.resize(n);
  lu.diag.resize(n);
  // gbtrf interleaves swaps with the columns of L; moving every swap in front (getrf's form)
  // permutes the rows of the earlier columns, which is a swap of whole rows here.
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t p = std::size_t(ipiv[k] - 1);
    if (p != k) {
      lu.swaps.emplace_back(index_t(k), index_t(p));
      std::swap(lu.lower[k], lu.lower[p]);
    }
    const std::size_t lm = std::min(kl, n - 1 - k);
    for (std::size_t t = 1; t <= lm; ++t) {
      const T v = ab[(kv + t) + k * ldab];
      if (v != T(0)) lu.lower[k + t].emplace_back(index_t(k), v);
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    lu.diag[j] = ab[kv + j * ldab];
    for (std::size_t i = j > kv ? j - kv : 0; i < j; ++i) {
      const T v = ab[(kv + i - j) + j * ldab];
      if (v != T(0)) lu.upper[i].emplace_back(index_t(j), v);
    }
  }
  return lu;
}

// gbtrf of `band` (A itself, or its folded form B) with band widths kl, ku; errors name `user`,
// the factor the user gave. A symmetric permutation keeps ||.||_1 and the condition number.
// Where gbtrf swaps rows of a Hermitian positive definite band, its band Cholesky is used
// instead (factor_positive_definite_band): the same solves without the swaps.
template <class T>
lu_factors<T> factor_band(const factor_view<T>& band, std::size_t kl, std::size_t ku, std::size_t mode,
                          const factor_view<T>& user, const compile_options& opts) {
  const std::size_t n = band.n, kv = kl + ku, ldab = 2 * kl + ku + 1;
  std::vector<T> ab(ldab * n, T(0));
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t i0 = j > ku ? j - ku : 0, i1 = std::min(n - 1, j + kl);
    for (std::size_t i = i0; i <= i1; ++i) ab[(kv + i - j) + j * ldab] = band(i, j);
  }
  std::vector<lapack::int_t> ipiv(n);
  check_info(lapack::gbtrf(lapack::int_t(n), lapack::int_t(kl), lapack::int_t(ku), ab.data(),
                           lapack::int_t(ldab), ipiv.data()),
             mode, user, "gbtrf");
  bool swapped = false;
  for (std::size_t k = 0; k < n; ++k) swapped = swapped || std::size_t(ipiv[k] - 1) != k;
  std::optional<lu_factors<T>> cholesky;
  if (swapped && kl == ku && is_hermitian_band(band, kl)) cholesky = factor_positive_definite_band(band, kl);
  lu_factors<T> lu = cholesky ? std::move(*cholesky) : gbtrf_factors(ab, ipiv, kl, ku);
  lu.rcond = estimate_rcond(lu, norm1(user));
  check_rcond(lu.rcond, mode, user, "lacn2", opts);
  drop_negligible(lu);
  return lu;
}

// Drops the entries of L and U below eps^2 times their row's largest magnitude (the unit
// diagonal for L, |u_ii| and the row for U), eps the value type's machine epsilon. Such an entry
// changes a solve far below the rounding LU itself commits (a backward error of order eps^2
// against gbtrf's eps), but costs a multiply-add on every line, and subnormal ones cost a
// hundred: the fill of a periodic factor decays geometrically away from the wrap (the coupling
// across the circle), and at n in the hundreds in float, or thousands in double, most of it
// is below eps^2 and much of it subnormal.
template <class T>
void drop_negligible(lu_factors<T>& lu) {
  using R = real_t<T>;
  const R eps = std::numeric_limits<R>::epsilon();
  auto filter = [&](sparse_row<T>& row, R ref) {
    for (const auto& e : row) ref = std::max<R>(ref, std::abs(e.second));
    const R cut = eps * eps * ref;  // NaN entries compare false and stay: the checks name them
    row.erase(std::remove_if(row.begin(), row.end(), [&](const auto& e) { return std::abs(e.second) <= cut; }),
              row.end());
  };
  for (auto& row : lu.lower) filter(row, R(1));
  for (std::size_t i = 0; i < lu.n; ++i) filter(lu.upper[i], std::abs(lu.diag[i]));
}

template <class T>
lu_factors<T> factor_banded(const factor_view<T>& f, std::size_t mode, const compile_options& opts = {}) {
  const band_layout l = layout_for_lapack(f);
  if (!l.folded) return factor_band(f, l.kl, l.ku, mode, f, opts);
  const banded<T> b = fold(f, l.kl);
  lu_factors<T> lu = factor_band(make_view<T>(b), l.kl, l.ku, mode, f, opts);
  lu.order = fold_order(f.n);
  return lu;
}

template <class T>
lu_factors<T> factor_dense(const factor_view<T>& f, std::size_t mode, const compile_options& opts = {}) {
  const std::size_t n = f.n;
  std::vector<T> a(n * n);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = 0; i < n; ++i) a[i + j * n] = f(i, j);
  std::vector<lapack::int_t> ipiv(n);
  check_info(lapack::getrf(lapack::int_t(n), a.data(), lapack::int_t(n), ipiv.data()), mode, f, "getrf");
  double rcond = 0;
  check_info(lapack::gecon(lapack::int_t(n), a.data(), lapack::int_t(n), norm1(f), rcond), mode, f, "gecon");
  check_rcond(rcond, mode, f, "gecon", opts);

  lu_factors<T> lu;
  lu.rcond = rcond;
  lu.n = n;
  lu.method = "getrf";
  lu.lower.resize(n);
  lu.upper.resize(n);
  lu.diag.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t p = std::size_t(ipiv[k] - 1);
    if (p != k) lu.swaps.emplace_back(index_t(k), index_t(p));
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      const T v = a[i + j * n];
      if (j < i && v != T(0)) lu.lower[i].emplace_back(index_t(j), v);
      if (j > i && v != T(0)) lu.upper[i].emplace_back(index_t(j), v);
    }
    lu.diag[i] = a[i + i * n];
  }
  drop_negligible(lu);
  return lu;
}

// What lu_factors will hold, known before factoring: the counts of an LU without row swaps,
// whose fill is the factor's envelope (rows of L from the first nonzero column to the diagonal,
// columns of U from the first nonzero row). Exact for factors that need no pivoting and whose
// envelope fills (B-spline mass matrices, diagonally dominant band matrices, stored banded or
// dense); an estimate otherwise. O(n (kl + ku)) time for a band, O(n^2) for a dense factor, no
// allocation: explain() uses it.
struct lu_estimate {
  std::size_t nnz_lower = 0;   // strictly lower part of L
  std::size_t nnz_upper = 0;   // U, diagonal included
  std::size_t lower_rows = 0;  // rows of L with an entry
  std::size_t lower_cols = 0;  // columns of L with an entry
};

template <class T>
lu_estimate estimate_lu(const factor_view<T>& f) {
  const std::size_t n = f.n;
  const bool dense = f.kind == factor_kind::dense, periodic = f.bc == boundary::periodic;
  // The smallest c < i with a nonzero A(i, c) (row envelope) or A(c, i) (column envelope), else
  // i; a band is searched over its pattern, a dense factor over the whole row or column.
  auto first = [&](std::size_t i, bool row) {
    std::size_t m = i;
    auto consider = [&](std::size_t c) {
      if (c < m && (row ? f(i, c) : f(c, i)) != T(0)) m = c;
    };
    if (dense) {
      for (std::size_t c = 0; c < i; ++c) consider(c);
    } else {
      const long from = row ? -long(f.kl) : -long(f.ku), to = row ? long(f.ku) : long(f.kl);
      for (long d = from; d <= to; ++d) {
        long c = long(i) + d;
        if (periodic) c = (c % long(n) + long(n)) % long(n);
        if (c >= 0 && c < long(i)) consider(std::size_t(c));
      }
    }
    return m;
  };
  lu_estimate e;
  std::size_t min_after = n;  // min over rows i > j of their first column
  for (std::size_t j = n; j-- > 0;) {
    if (min_after <= j) ++e.lower_cols;
    const std::size_t c = first(j, true);
    e.nnz_lower += j - c;
    e.lower_rows += j > c ? 1 : 0;
    e.nnz_upper += j - first(j, false) + 1;
    min_after = std::min(min_after, c);
  }
  return e;
}

template <class T>
lu_factors<T> factorize(const factor_view<T>& f, std::size_t mode, const compile_options& opts = {}) {
  return f.kind == factor_kind::dense ? factor_dense(f, mode, opts) : factor_banded(f, mode, opts);
}

} // namespace kronex::detail
