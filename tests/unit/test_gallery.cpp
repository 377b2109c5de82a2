// Gallery matrices (kronex::gallery) against values known independently of the assembly code:
//  - mass row sums are the integrals of the basis functions (partition of unity), total sum 1;
//  - exact small cases (hat functions; a single element, where the splines are Bernstein
//    polynomials with a closed-form mass matrix);
//  - periodic (uniform) stencils from the cardinal B-spline identities: the mass stencil is the
//    degree 2p+1 cardinal B-spline at the integers, i.e. Eulerian numbers A(2p+1, k) / (2p+1)!,
//    and the stiffness stencil is the second difference of the degree p-1 mass stencil over h;
//    the interior rows of a clamped matrix must equal the same stencils;
//  - stiffness annihilates constants; mass is symmetric positive definite;
//  - the finite-difference Laplacian's entries;
//  - every argument check throws kronex::invalid_factor with the numbers in its message.
#define BOOST_TEST_MODULE gallery
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <complex>
#include <string>
#include <tuple>
#include <vector>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

// Entry (i, j) as a double, through the const (read-only) accessor. Gallery matrices are real:
// for complex value types the imaginary part must be exactly zero.
template <class T>
double entry(const kronex::banded<T>& A, std::size_t i, std::size_t j) {
  const T v = A(i, j);
  if constexpr (kronex::value_traits<T>::is_complex) {
    BOOST_CHECK_EQUAL(v.imag(), 0);
    return double(v.real());
  } else {
    return double(v);
  }
}

template <class T>
double row_sum(const kronex::banded<T>& A, std::size_t i) {
  double s = 0;
  for (std::size_t j = 0; j < A.size(); ++j) s += entry(A, i, j);
  return s;
}

template <class T>
double max_abs(const kronex::banded<T>& A) {
  double m = 0;
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t j = 0; j < A.size(); ++j) m = std::max(m, std::abs(entry(A, i, j)));
  return m;
}

// Entries are assembled from (p+1)^2 quadrature products per element and summed in T, and the
// checks below add up to n entries again: allow the per-type tolerance times that many terms.
template <class T>
double tol(std::size_t terms) {
  return kronex_test::tolerance<T>() * double(terms);
}

// Clamped uniform knot vector of the gallery: n + p + 1 knots, p + 1 repeated at each end,
// n - p elements of width h = 1/(n - p).
std::vector<double> clamped_knots(std::size_t n, std::size_t p) {
  std::vector<double> t(n + p + 1);
  const double h = 1.0 / double(n - p);
  for (std::size_t k = 0; k < t.size(); ++k) t[k] = k <= p ? 0.0 : (k >= n ? 1.0 : double(k - p) * h);
  return t;
}

// Eulerian numbers A(m, k), k = 0..m-1, by A(m,k) = (k+1) A(m-1,k) + (m-k) A(m-1,k-1);
// exact in double for m <= 11 (the largest, A(11,5), is 15724248).
std::vector<double> eulerian(std::size_t m) {
  std::vector<double> a{1.0};  // A(1, 0)
  for (std::size_t r = 2; r <= m; ++r) {
    std::vector<double> b(r, 0.0);
    for (std::size_t k = 0; k < r; ++k) {
      if (k < a.size()) b[k] += double(k + 1) * a[k];
      if (k >= 1) b[k] += double(r - k) * a[k - 1];
    }
    a = b;
  }
  return a;
}

double factorial(std::size_t m) {
  double f = 1;
  for (std::size_t k = 2; k <= m; ++k) f *= double(k);
  return f;
}

double binomial(std::size_t n, std::size_t k) { return factorial(n) / (factorial(k) * factorial(n - k)); }

// ∫ N_p(u) N_p(u - d) du for the unit-spaced cardinal B-spline of degree p, |d| <= p (else 0):
// the degree 2p+1 cardinal B-spline at the integer p+1+d, = A(2p+1, p+d) / (2p+1)!.
double unit_mass_stencil(std::size_t p, long d) {
  if (std::abs(d) > long(p)) return 0.0;
  const std::size_t m = 2 * p + 1;
  return eulerian(m)[std::size_t(long(p) + d)] / factorial(m);
}

// ∫ N_p'(u) N_p'(u - d) du: since N_p'(u) = N_{p-1}(u) - N_{p-1}(u-1), it is
// 2 c(d) - c(d-1) - c(d+1) with c the degree p-1 mass stencil (p = 1: c(d) = [d == 0]).
double unit_stiffness_stencil(std::size_t p, long d) {
  return 2 * unit_mass_stencil(p - 1, d) - unit_mass_stencil(p - 1, d - 1) - unit_mass_stencil(p - 1, d + 1);
}

// Runs f and checks that it throws kronex::invalid_factor whose message contains every needle.
template <class F>
void check_invalid(F&& f, const std::vector<std::string>& needles) {
  try {
    f();
    BOOST_ERROR("expected kronex::invalid_factor, nothing was thrown");
  } catch (const kronex::invalid_factor& e) {
    const std::string what = e.what();
    BOOST_TEST_MESSAGE("invalid_factor: " << what);
    for (const auto& s : needles) BOOST_CHECK_MESSAGE(what.find(s) != std::string::npos, "'" << s << "' not in: " << what);
  }
}

} // namespace

// Sanity of the test's own oracle: the stencils of the cardinal B-splines of low degree are
// textbook values, and every mass stencil sums to 1 (∫ N_p = 1), every stiffness stencil to 0.
BOOST_AUTO_TEST_CASE(stencil_oracle) {
  BOOST_TEST(unit_mass_stencil(1, 0) == 4.0 / 6, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_mass_stencil(1, 1) == 1.0 / 6, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_mass_stencil(2, 0) == 66.0 / 120, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_mass_stencil(2, -1) == 26.0 / 120, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_mass_stencil(3, 0) == 2416.0 / 5040, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_mass_stencil(3, 3) == 1.0 / 5040, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_stiffness_stencil(1, 0) == 2.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_stiffness_stencil(1, 1) == -1.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_stiffness_stencil(2, 0) == 1.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_stiffness_stencil(2, 1) == -1.0 / 3, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(unit_stiffness_stencil(2, 2) == -1.0 / 6, boost::test_tools::tolerance(1e-15));
  for (std::size_t p = 1; p <= 5; ++p) {
    double sm = 0, sk = 0;
    for (long d = -long(p); d <= long(p); ++d) {
      sm += unit_mass_stencil(p, d);
      sk += unit_stiffness_stencil(p, d);
    }
    BOOST_TEST(sm == 1.0, boost::test_tools::tolerance(1e-14));
    BOOST_TEST(std::abs(sk) < 1e-14);
  }
}

// Row i of the mass matrix sums to ∫ N_i · Σ_j N_j = ∫ N_i = (t_{i+p+1} - t_i) / (p+1), and
// all entries to ∫ 1 = 1. Several n per degree, including the smallest allowed (n = p + 1).
BOOST_AUTO_TEST_CASE_TEMPLATE(clamped_mass_row_sums, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (std::size_t n : {p + 1, p + 2, 2 * p + 3, std::size_t(17)}) {
      const auto M = kronex::gallery::bspline_mass<T>(n, p);
      BOOST_TEST_CONTEXT("p=" << p << " n=" << n) {
        BOOST_TEST(M.size() == n);
        BOOST_TEST(M.lower() == p);
        BOOST_TEST(M.upper() == p);
        BOOST_TEST(!M.periodic());
        const auto t = clamped_knots(n, p);
        double total = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double expected = (t[i + p + 1] - t[i]) / double(p + 1);
          const double got = row_sum(M, i);
          BOOST_TEST(std::abs(got - expected) <= tol<T>(2 * p + 1) * expected, "row " << i << ": " << got << " vs " << expected);
          total += got;
        }
        BOOST_TEST(std::abs(total - 1.0) <= tol<T>(n * (2 * p + 1)));
      }
    }
  }
}

// Periodic: n elements of width h = 1/n, every basis function is a shifted uniform B-spline
// with ∫ N_i = h, so every row sums to h; the entries to 1.
BOOST_AUTO_TEST_CASE_TEMPLATE(periodic_mass_row_sums, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (std::size_t n : {2 * p + 1, 2 * p + 2, std::size_t(19)}) {
      const auto M = kronex::gallery::bspline_mass<T>(n, p, boundary::periodic);
      BOOST_TEST_CONTEXT("p=" << p << " n=" << n) {
        BOOST_TEST(M.periodic());
        const double h = 1.0 / double(n);
        double total = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const double got = row_sum(M, i);
          BOOST_TEST(std::abs(got - h) <= tol<T>(2 * p + 1) * h, "row " << i << ": " << got << " vs h=" << h);
          total += got;
        }
        BOOST_TEST(std::abs(total - 1.0) <= tol<T>(n * (2 * p + 1)));
      }
    }
  }
}

// Mass and stiffness are symmetric (∫ N_i N_j, ∫ N_i' N_j'), clamped and periodic.
BOOST_AUTO_TEST_CASE_TEMPLATE(symmetry, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (const boundary bc : {boundary::clamped, boundary::periodic}) {
      const std::size_t n = 2 * p + 4;
      const auto M = kronex::gallery::bspline_mass<T>(n, p, bc);
      const auto K = kronex::gallery::bspline_stiffness<T>(n, p, bc);
      const double sm = max_abs(M), sk = max_abs(K);
      BOOST_TEST_CONTEXT("p=" << p << " " << kronex::to_string(bc)) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < i; ++j) {
            BOOST_TEST(std::abs(entry(M, i, j) - entry(M, j, i)) <= tol<T>(1) * sm, "M(" << i << "," << j << ")");
            BOOST_TEST(std::abs(entry(K, i, j) - entry(K, j, i)) <= tol<T>(1) * sk, "K(" << i << "," << j << ")");
          }
      }
    }
  }
}

// Degree 1, clamped, n = 3: two elements, h = 1/2, hat functions: M = h/6 [[2,1,0],[1,4,1],[0,1,2]],
// K = 1/h [[1,-1,0],[-1,2,-1],[0,-1,1]].
BOOST_AUTO_TEST_CASE_TEMPLATE(degree1_clamped_exact, T, value_types) {
  const auto M = kronex::gallery::bspline_mass<T>(3, 1);
  const auto K = kronex::gallery::bspline_stiffness<T>(3, 1);
  const double h = 0.5;
  const double m[3][3] = {{2, 1, 0}, {1, 4, 1}, {0, 1, 2}};
  const double k[3][3] = {{1, -1, 0}, {-1, 2, -1}, {0, -1, 1}};
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      BOOST_TEST(std::abs(entry(M, i, j) - h / 6 * m[i][j]) <= tol<T>(4) * h, "M(" << i << "," << j << ")");
      BOOST_TEST(std::abs(entry(K, i, j) - k[i][j] / h) <= tol<T>(4) / h, "K(" << i << "," << j << ")");
    }
  // Larger n: first and last rows (1/h)[1,-1], interior rows (1/h)[-1,2,-1], zero elsewhere.
  const std::size_t n = 9;
  const double hn = 1.0 / double(n - 1);
  const auto K9 = kronex::gallery::bspline_stiffness<T>(n, 1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double e = 0;
      if (i == j) e = (i == 0 || i == n - 1) ? 1 : 2;
      else if (i + 1 == j || j + 1 == i) e = -1;
      BOOST_TEST(std::abs(entry(K9, i, j) - e / hn) <= tol<T>(4) / hn, "K(" << i << "," << j << ")");
    }
}

// Degree 1, periodic: every row is h/6 [1, 4, 1] and 1/h [-1, 2, -1] around the diagonal,
// with the corners (0, n-1) and (n-1, 0) inside the wrapped band.
BOOST_AUTO_TEST_CASE_TEMPLATE(degree1_periodic_exact, T, value_types) {
  for (std::size_t n : {3, 4, 7}) {
    const double h = 1.0 / double(n);
    const auto M = kronex::gallery::bspline_mass<T>(n, 1, boundary::periodic);
    const auto K = kronex::gallery::bspline_stiffness<T>(n, 1, boundary::periodic);
    BOOST_TEST_CONTEXT("n=" << n) {
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          double m = 0, k = 0;
          if (i == j) m = 4, k = 2;
          else if ((i + 1) % n == j || (j + 1) % n == i) m = 1, k = -1;
          BOOST_TEST(std::abs(entry(M, i, j) - h / 6 * m) <= tol<T>(4) * h, "M(" << i << "," << j << ")");
          BOOST_TEST(std::abs(entry(K, i, j) - k / h) <= tol<T>(4) / h, "K(" << i << "," << j << ")");
        }
      BOOST_TEST(entry(M, 0, n - 1) > 0);
      BOOST_TEST(entry(M, n - 1, 0) > 0);
    }
  }
}

// One element (clamped, n = p + 1, h = 1): the splines are the Bernstein polynomials
// B_i = C(p,i) x^i (1-x)^(p-i), and ∫ B_i B_j = C(p,i) C(p,j) / ((2p+1) C(2p, i+j)).
BOOST_AUTO_TEST_CASE_TEMPLATE(single_element_bernstein, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    const auto M = kronex::gallery::bspline_mass<T>(p + 1, p);
    const double scale = max_abs(M);
    for (std::size_t i = 0; i <= p; ++i)
      for (std::size_t j = 0; j <= p; ++j) {
        const double e = binomial(p, i) * binomial(p, j) / (double(2 * p + 1) * binomial(2 * p, i + j));
        BOOST_TEST(std::abs(entry(M, i, j) - e) <= tol<T>(p + 1) * scale, "p=" << p << " M(" << i << "," << j << ")");
      }
  }
}

// Periodic matrices are circulant with the cardinal stencils: M(i, i+d) = h m_p(d) and
// K(i, i+d) = m'_p(d) / h (indices mod n), every other entry zero. n = 2p+1 (the smallest, all
// diagonals wrap) and a larger n.
BOOST_AUTO_TEST_CASE_TEMPLATE(periodic_stencils, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (std::size_t n : {2 * p + 1, 2 * p + 6}) {
      const double h = 1.0 / double(n);
      const auto M = kronex::gallery::bspline_mass<T>(n, p, boundary::periodic);
      const auto K = kronex::gallery::bspline_stiffness<T>(n, p, boundary::periodic);
      const double sk = max_abs(K);
      BOOST_TEST_CONTEXT("p=" << p << " n=" << n) {
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            // Signed offset j - i taken into [-n/2, n/2]; |d| <= p is unambiguous since n > 2p.
            long d = long(j) - long(i);
            if (d > long(n / 2)) d -= long(n);
            if (d < -long(n / 2)) d += long(n);
            BOOST_TEST(std::abs(entry(M, i, j) - h * unit_mass_stencil(p, d)) <= tol<T>(p + 1) * h,
                       "M(" << i << "," << j << ") = " << entry(M, i, j) << " vs " << h * unit_mass_stencil(p, d));
            BOOST_TEST(std::abs(entry(K, i, j) - unit_stiffness_stencil(p, d) / h) <= tol<T>(p + 1) * sk,
                       "K(" << i << "," << j << ") = " << entry(K, i, j) << " vs " << unit_stiffness_stencil(p, d) / h);
          }
      }
    }
  }
}

// Away from the ends a clamped space is uniform: for 2p <= i <= n-2p-1 every spline N_j that
// overlaps N_i (|i - j| <= p) has interior knots only, so row i is the periodic stencil with
// h = 1/(n - p).
BOOST_AUTO_TEST_CASE_TEMPLATE(clamped_interior_rows, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    const std::size_t n = 4 * p + 3;
    const double h = 1.0 / double(n - p);
    const auto M = kronex::gallery::bspline_mass<T>(n, p);
    const auto K = kronex::gallery::bspline_stiffness<T>(n, p);
    const double sk = max_abs(K);
    BOOST_TEST_CONTEXT("p=" << p << " n=" << n) {
      for (std::size_t i = 2 * p; i + 2 * p + 1 <= n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          const long d = long(j) - long(i);
          BOOST_TEST(std::abs(entry(M, i, j) - h * unit_mass_stencil(p, d)) <= tol<T>(p + 1) * h, "M(" << i << "," << j << ")");
          BOOST_TEST(std::abs(entry(K, i, j) - unit_stiffness_stencil(p, d) / h) <= tol<T>(p + 1) * sk, "K(" << i << "," << j << ")");
        }
    }
  }
}

// Assembly is O(n p^2): a million-entry-band matrix (n = 2^18, p = 15: 8.4M stored entries)
// takes well under a second in a release build, where integrating every element (O(n p^3))
// took minutes; ctest's TIMEOUT for this test (tests/CMakeLists.txt) catches a regression. The
// values: its interior rows are the stencil, and its rows sum to the splines' integrals.
BOOST_AUTO_TEST_CASE(large_assembly_is_linear_in_n) {
  const std::size_t n = std::size_t(1) << 18, p = 15;
  for (const boundary bc : {boundary::clamped, boundary::periodic}) {
    const auto M = kronex::gallery::bspline_mass<double>(n, p, bc);
    const double h = 1.0 / double(bc == boundary::periodic ? n : n - p);
    double total = 0;
    for (double v : M.diagonals()) total += v;
    BOOST_TEST(total == 1.0, boost::test_tools::tolerance(1e-9));
    for (std::size_t i : {2 * p, n / 2, n - 2 * p - 1})
      for (long d = -long(p); d <= long(p); ++d)
        BOOST_TEST(std::abs(M(i, std::size_t(long(i) + d)) - h * unit_mass_stencil(p, d)) <= 1e-13 * h,
                   "row " << i << " diagonal " << d);
    BOOST_TEST(row_sum(M, 0) == (bc == boundary::periodic ? h : h / double(p + 1)), boost::test_tools::tolerance(1e-12));
  }
}

// Constants are in the kernel of the stiffness matrix (K 1 = ∫ N_i' (Σ_j N_j)' = 0), clamped
// and periodic: every row sums to 0, relative to the size of the entries.
BOOST_AUTO_TEST_CASE_TEMPLATE(stiffness_annihilates_constants, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (const boundary bc : {boundary::clamped, boundary::periodic}) {
      for (std::size_t n : {2 * p + 1, 2 * p + 5, std::size_t(23)}) {
        const auto K = kronex::gallery::bspline_stiffness<T>(n, p, bc);
        const double scale = max_abs(K);
        BOOST_TEST(scale > 0);
        for (std::size_t i = 0; i < n; ++i)
          BOOST_TEST(std::abs(row_sum(K, i)) <= tol<T>(2 * p + 1) * scale,
                     "p=" << p << " n=" << n << " " << kronex::to_string(bc) << " row " << i << " sums to " << row_sum(K, i));
      }
    }
  }
}

// x^H M x = ∫ |Σ x_i N_i|^2 > 0 for x != 0: the mass matrix is positive definite (checked on
// random vectors, without a factorization). The Rayleigh quotient is also bounded by the largest
// row sum of |M| (Gershgorin), which catches a wildly wrong matrix that is still positive.
BOOST_AUTO_TEST_CASE_TEMPLATE(mass_positive_definite, T, value_types) {
  for (std::size_t p = 1; p <= 5; ++p) {
    for (const boundary bc : {boundary::clamped, boundary::periodic}) {
      const std::size_t n = 3 * p + 2;
      const auto M = kronex::gallery::bspline_mass<T>(n, p, bc);
      double gershgorin = 0;
      for (std::size_t i = 0; i < n; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < n; ++j) s += std::abs(entry(M, i, j));
        gershgorin = std::max(gershgorin, s);
      }
      for (int trial = 0; trial < 20; ++trial) {
        std::vector<T> x(n);
        for (auto& v : x) v = kronex_test::random_value<T>();
        std::complex<double> q = 0;
        double xx = 0;
        for (std::size_t i = 0; i < n; ++i) {
          xx += std::norm(std::complex<double>(x[i]));
          for (std::size_t j = 0; j < n; ++j)
            q += std::conj(std::complex<double>(x[i])) * entry(M, i, j) * std::complex<double>(x[j]);
        }
        BOOST_TEST_CONTEXT("p=" << p << " " << kronex::to_string(bc) << " trial " << trial) {
          BOOST_TEST(q.real() > 0);
          BOOST_TEST(std::abs(q.imag()) <= 1e-5 * q.real());  // Hermitian: the form is real
          BOOST_TEST(q.real() <= gershgorin * xx * (1 + 1e-5));
        }
      }
    }
  }
}

// Degree 0: piecewise constants, the mass matrix is h I (no overlap between elements).
BOOST_AUTO_TEST_CASE_TEMPLATE(degree0_mass, T, value_types) {
  const std::size_t n = 5;
  const auto M = kronex::gallery::bspline_mass<T>(n, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j)
      BOOST_TEST(std::abs(entry(M, i, j) - (i == j ? 1.0 / n : 0.0)) <= tol<T>(1), "M(" << i << "," << j << ")");
}

// Finite-difference -d²/dx²: Dirichlet on n interior points (h = 1/(n+1)) is tridiag(-1, 2, -1)/h²
// without corners; periodic (h = 1/n) adds the corners -1/h².
BOOST_AUTO_TEST_CASE_TEMPLATE(laplacian_values, T, value_types) {
  for (std::size_t n : {1, 2, 5, 8}) {
    const auto A = kronex::gallery::laplacian<T>(n);
    const double h = 1.0 / double(n + 1), s = 1.0 / (h * h);
    BOOST_TEST(!A.periodic());
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const double e = i == j ? 2 * s : ((i + 1 == j || j + 1 == i) ? -s : 0.0);
        BOOST_TEST(std::abs(entry(A, i, j) - e) <= tol<T>(1) * s, "clamped n=" << n << " A(" << i << "," << j << ")");
      }
  }
  // n = 1: the single interior point of [0, 1], h = 1/2, A = [8].
  BOOST_TEST(std::abs(entry(kronex::gallery::laplacian<T>(1), 0, 0) - 8.0) <= tol<T>(1) * 8);
  for (std::size_t n : {3, 4, 9}) {
    const auto A = kronex::gallery::laplacian<T>(n, boundary::periodic);
    const double h = 1.0 / double(n), s = 1.0 / (h * h);
    BOOST_TEST(A.periodic());
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        const double e = i == j ? 2 * s : (((i + 1) % n == j || (j + 1) % n == i) ? -s : 0.0);
        BOOST_TEST(std::abs(entry(A, i, j) - e) <= tol<T>(1) * s, "periodic n=" << n << " A(" << i << "," << j << ")");
      }
      BOOST_TEST(std::abs(row_sum(A, i)) <= tol<T>(3) * s);  // constants in the kernel
    }
    BOOST_TEST(std::abs(entry(A, 0, n - 1) + s) <= tol<T>(1) * s);
    BOOST_TEST(std::abs(entry(A, n - 1, 0) + s) <= tol<T>(1) * s);
  }
}

// Argument checks: the smallest admissible sizes work, one less throws invalid_factor whose
// message names the requirement and the n that was given.
BOOST_AUTO_TEST_CASE_TEMPLATE(gallery_errors, T, value_types) {
  using namespace kronex::gallery;
  for (std::size_t p = 1; p <= 5; ++p) {
    BOOST_TEST_CONTEXT("p=" << p) {
      BOOST_CHECK_NO_THROW(bspline_mass<T>(p + 1, p));
      BOOST_CHECK_NO_THROW(bspline_stiffness<T>(p + 1, p));
      BOOST_CHECK_NO_THROW(bspline_mass<T>(2 * p + 1, p, boundary::periodic));
      BOOST_CHECK_NO_THROW(bspline_stiffness<T>(2 * p + 1, p, boundary::periodic));
      const std::string clamped_need = "needs n >= " + std::to_string(p + 1);
      const std::string clamped_got = "got n=" + std::to_string(p);
      check_invalid([&] { bspline_mass<T>(p, p); }, {"bspline_mass", clamped_need, clamped_got});
      check_invalid([&] { bspline_stiffness<T>(p, p); }, {"bspline_stiffness", clamped_need, clamped_got});
      const std::string periodic_need = "needs n >= " + std::to_string(2 * p + 1);
      const std::string periodic_got = "got n=" + std::to_string(2 * p);
      check_invalid([&] { bspline_mass<T>(2 * p, p, boundary::periodic); }, {"periodic", periodic_need, periodic_got});
      check_invalid([&] { bspline_stiffness<T>(2 * p, p, boundary::periodic); }, {"periodic", periodic_need, periodic_got});
    }
  }
  check_invalid([] { bspline_stiffness<T>(4, 0); }, {"degree must be at least 1"});
  check_invalid([] { bspline_stiffness<T>(4, 0, boundary::periodic); }, {"degree must be at least 1"});
  check_invalid([] { bspline_mass<T>(0, 0); }, {"got n=0"});
  check_invalid([] { laplacian<T>(2, boundary::periodic); }, {"n >= 3", "got n=2"});
  check_invalid([] { laplacian<T>(0); }, {"n must be at least 1"});
  BOOST_CHECK_NO_THROW(laplacian<T>(3, boundary::periodic));
}
