// Golden printed plans. Each expected string below was first printed, then checked by hand
// against docs/plans.md ("How costs are estimated") and an independent LU (partial pivoting on
// the same matrices, computed with a textbook Cox-de Boor recursion) for nnz and swaps. The
// derivation of every number is in the comment above its string, so a change in the output can
// be judged, not just re-pasted. Conventions used throughout (docs/plans.md):
//   bytes per step = 2 N sizeof(T)                    (one read, one write of the tensor)
//   solve flops    = lines (L nnz + U nnz) m          (m = 2 real, 8 complex; lines = N / n)
//   apply flops    = lines nnz m;   scale flops = N m/2;   copy flops = 0
//   view           = (L, n, R):(n R, R, 1)            (C order, L lines before the mode, R after)
//   workspace      = 2 max_n W sizeof(T) + W sizeof(size_t),  W = 512 / sizeof(T)
//   factors        = row programs: ops sizeof(row_op<T>) (32 B for real double, 40 B for complex
//                    double) + 4 B per index (src, row_ptr) + sizeof(T) per coefficient;
//                    plus sizeof(T) per diagonal entry of a scale step.
// Also: printing is deterministic, and every way to get a plan (explain(expr, like),
// explain(lazy result), operator<< and plan() of the compiled operator) gives the same text.
#define BOOST_TEST_MODULE plans
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;

std::string printed(const kronex::plan_description& p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

template <class Op>
std::string printed_operator(const Op& op) {
  std::ostringstream os;
  os << op;
  return os.str();
}

// Compares line by line so a failure names the first differing line, then the whole texts.
void check_plan(const std::string& got, const std::string& expected) {
  std::istringstream g(got), e(expected);
  std::string lg, le;
  int line = 1;
  while (true) {
    const bool more_g = bool(std::getline(g, lg)), more_e = bool(std::getline(e, le));
    if (!more_g && !more_e) break;
    if (lg != le || more_g != more_e) {
      BOOST_ERROR("plan differs at line " << line << ":\n  got:      '" << lg << "'\n  expected: '" << le << "'\n"
                                          << "full plan:\n" << got);
      return;
    }
    ++line;
  }
  BOOST_TEST(got == expected);  // also catches a missing final newline
}

// A dense 4x4 factor with 4 on the diagonal and 1 elsewhere: strictly diagonally dominant, so
// no pivoting; every entry of L and U is nonzero: L nnz = 6, U nnz = 10.
xt::xtensor<double, 2> dominant_dense() {
  return xt::xtensor<double, 2>{{4, 1, 1, 1}, {1, 4, 1, 1}, {1, 1, 4, 1}, {1, 1, 1, 4}};
}

} // namespace

// 3D solve with a clamped band (p = 2, n = 6), a periodic band (p = 1, n = 5) and a dense
// factor, shape (6,5,4), N = 120, double.
//  f0: gbtrf kl=ku=2, no swaps: L nnz = 2+2+2+2+1 = 9, U nnz = 6 + 9 = 15.
//  f1: the corners (0,4), (4,0) make LAPACK see kl=ku=4; LU fills an arrow: L has the
//      subdiagonal (4) + row 4's columns 0..2 (3) = 7, U the superdiagonal (4) + column 4's
//      rows 0..2 (3) + diagonal (5) = 12. No swaps (h/6 [1,4,1] is diagonally dominant).
//  f2: L nnz = 6, U nnz = 10.
//  flops: 20 (9+15) 2 = 960; 24 (7+12) 2 = 912; 30 (6+10) 2 = 960; total 2832.
//  bytes: 2 120 8 = 1920 per step, 5760 total.
//  views: (1,6,20):(120,20,1), (6,5,4):(20,4,1), (30,4,1):(4,1,1).
//  workspace: max_n = 6: 2 6 64 8 + 64 8 = 6656.
//  factors: f0 11 ops (5 nonempty L rows + 6 U rows) 32 + 18 coef 12 = 568; f1 9 ops (4 + 5)
//           32 + 14 coef 12 = 456; f2 7 ops (3 + 4) 32 + 12 coef 12 = 368; total 1392.
BOOST_AUTO_TEST_CASE(solve_clamped_periodic_dense) {
  const auto Mx = kronex::gallery::bspline_mass<double>(6, 2);
  const auto My = kronex::gallery::bspline_mass<double>(5, 1, boundary::periodic);
  const auto D = dominant_dense();
  const std::string expected =
      "plan inverse(kron(f0,f1,f2)) on (6,5,4):(20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0\n"
      "    f2  dense n=4  getrf  L nnz=6 U nnz=10 swaps=0\n"
      "  steps\n"
      "    0  solve  mode 0  f0 N  lu_subst  (1,6,20):(120,20,1)  flops=960  bytes=1.92k\n"
      "    1  solve  mode 1  f1 N  lu_subst  (6,5,4):(20,4,1)  flops=912  bytes=1.92k\n"
      "    2  solve  mode 2  f2 N  lu_subst  (30,4,1):(4,1,1)  flops=960  bytes=1.92k\n"
      "  total  steps=3  flops=2.832k  bytes=5.76k  workspace=6.656kB  factors=1.392kB\n";
  const std::array<std::size_t, 3> shape{6, 5, 4};
  const auto K = kronex::kron(Mx, My, D);
  check_plan(kronex::explain(K.inverse(), shape), expected);
  auto solver = kronex::compile(K.inverse(), shape);
  check_plan(printed_operator(solver), expected);
  check_plan(printed(solver.plan()), expected);
  check_plan(kronex::to_string(solver.plan()), expected);
  // The numbers behind the text.
  BOOST_TEST(solver.plan().flops() == 2832.0);
  BOOST_TEST(solver.plan().bytes() == 5760.0);
  BOOST_TEST(solver.plan().workspace_bytes == 6656u);
  BOOST_TEST(solver.plan().factor_bytes == 1392u);
  BOOST_TEST(solver.plan().steps.size() == 3u);
}

// The example of docs/plans.md, which claims to print exactly this; verified again here:
//  f0 clamped p=3 n=8: L = 3+3+3+3+3+2+1 = 18, U = 8 + 18 = 26.
//  f1 periodic p=2 n=10: LAPACK widths 9/9; L: columns 0..5 have rows k+1, k+2, 8, 9 (4 each),
//     column 6 rows 7,8,9, column 7 rows 8,9, column 8 row 9: 24+3+2+1 = 30; U = 30 + 10 = 40.
//  flops: 60 44 2 = 5280, 48 70 2 = 6720, scale 480 1 = 480; total 12480. bytes 2 480 8 = 7680.
//  workspace: max_n = 10: 2 10 64 8 + 512 = 10752.
//  factors: f0 15 ops 32 + 36 coef 12 = 912; f1 19 ops 32 + 60 coef 12 = 1328; scale 6 8 = 48:
//  2288.
BOOST_AUTO_TEST_CASE(documented_example) {
  const auto Mx = kronex::gallery::bspline_mass<double>(8, 3);
  const auto My = kronex::gallery::bspline_mass<double>(10, 2, boundary::periodic);
  const auto Dz = kronex::diagonal(std::vector<double>{1, 2, 3, 4, 5, 6});
  const xt::xtensor<double, 3> b = xt::ones<double>({8, 10, 6});
  const std::string expected =
      "plan inverse(kron(f0,f1,f2)) on (8,10,6):(60,6,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=8 kl=3 ku=3 clamped  gbtrf kl=3 ku=3  L nnz=18 U nnz=26 swaps=0\n"
      "    f1  banded n=10 kl=2 ku=2 periodic  gbtrf kl=9 ku=9  L nnz=30 U nnz=40 swaps=0\n"
      "    f2  diagonal n=6  scale\n"
      "  steps\n"
      "    0  solve  mode 0  f0 N  lu_subst  (1,8,60):(480,60,1)  flops=5.28k  bytes=7.68k\n"
      "    1  solve  mode 1  f1 N  lu_subst  (8,10,6):(60,6,1)  flops=6.72k  bytes=7.68k\n"
      "    2  scale  mode 2  f2 N  scale  (80,6,1):(6,1,1)  flops=480  bytes=7.68k\n"
      "  total  steps=3  flops=12.48k  bytes=23.04k  workspace=10.752kB  factors=2.288kB\n";
  auto x = kronex::kron(Mx, My, Dz).solve(b);
  check_plan(kronex::explain(x), expected);
  check_plan(kronex::explain(kronex::kron(Mx, My, Dz).inverse(), b), expected);
}

// Transposed solve with pivoting factors (exact binary fractions, so the pivots are certain):
//  f0 = tridiagonal n=4 with 1 on the diagonal, 2 below, 1 above. Each column's subdiagonal 2
//     beats its pivot (1, then 0.5, then -0.75): 3 swaps; multipliers 0.5, 0.25, -0.375: L nnz 3;
//     U rows [2,1,1], [2,1,1], [2,1], [0.125]: U nnz 9 (fill up to kl+ku = 2).
//  f1 = [[1,2],[2,1]]: swap, multiplier 0.5, U = [[2,1],[0,1.5]]: L nnz 1, U nnz 3, 1 swap.
//  shape (4,2), N = 8: bytes 2 8 8 = 128 per step. flops: 2 (3+9) 2 = 48; 4 (1+3) 2 = 32.
//  views (1,4,2):(8,2,1) and (4,2,1):(2,1,1). Transposes fold into each step as 'T'.
//  workspace: 2 4 64 8 + 512 = 4608.
//  factors: f0 10 ops (4 U^T rows + 3 nonempty L^T rows + 3 swaps) 32 + 8 coef 12 = 416;
//           f1 4 ops (2 + 1 + 1) 32 + 2 coef 12 = 152; total 568.
BOOST_AUTO_TEST_CASE(transpose_solve_with_pivoting) {
  kronex::banded<double> B(4, 1, 1);
  for (std::size_t i = 0; i < 4; ++i) {
    B(i, i) = 1.0;
    if (i + 1 < 4) B(i, i + 1) = 1.0;
    if (i > 0) B(i, i - 1) = 2.0;
  }
  const xt::xtensor<double, 2> D = {{1, 2}, {2, 1}};
  const std::string expected =
      "plan inverse(kron(f0,f1)^T) on (4,2):(2,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=4 kl=1 ku=1 clamped  gbtrf kl=1 ku=1  L nnz=3 U nnz=9 swaps=3\n"
      "    f1  dense n=2  getrf  L nnz=1 U nnz=3 swaps=1\n"
      "  steps\n"
      "    0  solve  mode 0  f0 T  lu_subst  (1,4,2):(8,2,1)  flops=48  bytes=128\n"
      "    1  solve  mode 1  f1 T  lu_subst  (4,2,1):(2,1,1)  flops=32  bytes=128\n"
      "  total  steps=2  flops=80  bytes=256  workspace=4.608kB  factors=568B\n";
  const std::array<std::size_t, 2> shape{4, 2};
  const auto K = kronex::kron(B, D);
  // Every spelling of the same operator prints the same plan.
  check_plan(kronex::explain(K.transpose().inverse(), shape), expected);
  check_plan(kronex::explain(K.inverse().transpose(), shape), expected);
  const auto b = kronex_test::random_tensor<double>(shape);
  check_plan(kronex::explain(K.transpose().solve(b)), expected);
  // Folding: a double transpose is no transpose at all.
  const std::string twice = kronex::explain(K.transpose().transpose().inverse(), shape);
  BOOST_TEST(twice.rfind("plan inverse(kron(f0,f1)) on (4,2):(2,1) [host, double]\n", 0) == 0u);
  BOOST_TEST(twice.find(" T  ") == std::string::npos);
}

// Adjoint solve, complex<double>: same factor structure as the first test (f0 clamped p=2 n=6,
// f1 periodic p=1 n=5), folded as 'C'. Shape (6,5), N = 30.
//  flops (m = 8): 5 (9+15) 8 = 960; 6 (7+12) 8 = 912; total 1872. bytes 2 30 16 = 960.
//  views (1,6,5):(30,5,1) and (6,5,1):(5,1,1).
//  workspace: W = 512/16 = 32: 2 6 32 16 + 32 8 = 6400.
//  factors: row_op<complex<double>> is 40 B: f0 11 ops 40 + 18 coef (16 + 4) = 800;
//           f1 9 ops 40 + 14 coef 20 = 640; total 1440.
BOOST_AUTO_TEST_CASE(adjoint_complex_solve) {
  using C = std::complex<double>;
  const auto Mx = kronex::gallery::bspline_mass<C>(6, 2);
  const auto My = kronex::gallery::bspline_mass<C>(5, 1, boundary::periodic);
  const std::string expected =
      "plan inverse(kron(f0,f1)^H) on (6,5):(5,1) [host, complex<double>]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0\n"
      "  steps\n"
      "    0  solve  mode 0  f0 C  lu_subst  (1,6,5):(30,5,1)  flops=960  bytes=960\n"
      "    1  solve  mode 1  f1 C  lu_subst  (6,5,1):(5,1,1)  flops=912  bytes=960\n"
      "  total  steps=2  flops=1.872k  bytes=1.92k  workspace=6.4kB  factors=1.44kB\n";
  const auto K = kronex::kron(Mx, My);
  check_plan(kronex::explain(K.adjoint().inverse(), std::array<std::size_t, 2>{6, 5}), expected);
  const auto b = kronex_test::random_tensor<C>(std::array<std::size_t, 2>{6, 5});
  check_plan(kronex::explain(K.adjoint().solve(b)), expected);
  check_plan(printed_operator(kronex::compile(K.adjoint().inverse(), b)), expected);
}

// Apply (no inverse) of the first test's factors: matvec with the entries of each matrix.
//  nnz: f0 rows 3,4,5,5,4,3 = 24; f1 tridiagonal + 2 corners = 15; f2 16.
//  flops: 20 24 2 = 960; 24 15 2 = 720; 30 16 2 = 960; total 2640.
//  factors: apply programs hold row_ptr (n+1), src and coef: f0 7 4 + 24 12 = 316;
//           f1 6 4 + 15 12 = 204; f2 5 4 + 16 12 = 212; total 732.
BOOST_AUTO_TEST_CASE(apply_clamped_periodic_dense) {
  const auto Mx = kronex::gallery::bspline_mass<double>(6, 2);
  const auto My = kronex::gallery::bspline_mass<double>(5, 1, boundary::periodic);
  const auto D = dominant_dense();
  const std::string expected =
      "plan kron(f0,f1,f2) on (6,5,4):(20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  matvec  nnz=24\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  matvec  nnz=15\n"
      "    f2  dense n=4  matvec  nnz=16\n"
      "  steps\n"
      "    0  apply  mode 0  f0 N  band_matvec  (1,6,20):(120,20,1)  flops=960  bytes=1.92k\n"
      "    1  apply  mode 1  f1 N  band_matvec  (6,5,4):(20,4,1)  flops=720  bytes=1.92k\n"
      "    2  apply  mode 2  f2 N  dense_matvec  (30,4,1):(4,1,1)  flops=960  bytes=1.92k\n"
      "  total  steps=3  flops=2.64k  bytes=5.76k  workspace=6.656kB  factors=732B\n";
  const std::array<std::size_t, 3> shape{6, 5, 4};
  check_plan(kronex::explain(kronex::kron(Mx, My, D), shape), expected);
  const auto b = kronex_test::random_tensor<double>(shape);
  check_plan(kronex::explain(kronex::kron(Mx, My, D).apply(b)), expected);
}

// The apply example of docs/plans.md: identity skipped (steps start at mode 1), transposed.
//  nnz: tridiagonal 3x3 = 7; clamped p=3 n=8 rows 4,5,6,7,7,6,5,4 = 44.
//  N = 120: flops 40 7 2 = 560, 15 44 2 = 1320; bytes 1920. workspace max_n 8: 8192 + 512.
//  factors: 4 4 + 7 12 = 100; 9 4 + 44 12 = 564; total 664.
BOOST_AUTO_TEST_CASE(documented_apply_example) {
  const xt::xtensor<double, 2> A = {{2, -1, 0}, {-1, 2, -1}, {0, -1, 2}};
  const auto Mx = kronex::gallery::bspline_mass<double>(8, 3);
  const std::string expected =
      "plan kron(f0,f1,f2)^T on (5,3,8):(24,8,1) [host, double]\n"
      "  setup\n"
      "    f0  identity n=5  skipped\n"
      "    f1  dense n=3  matvec  nnz=7\n"
      "    f2  banded n=8 kl=3 ku=3 clamped  matvec  nnz=44\n"
      "  steps\n"
      "    0  apply  mode 1  f1 T  dense_matvec  (5,3,8):(24,8,1)  flops=560  bytes=1.92k\n"
      "    1  apply  mode 2  f2 T  band_matvec  (15,8,1):(8,1,1)  flops=1.32k  bytes=1.92k\n"
      "  total  steps=2  flops=1.88k  bytes=3.84k  workspace=8.704kB  factors=664B\n";
  check_plan(kronex::explain(kronex::kron(kronex::identity(5), A, Mx).transpose(), std::vector<std::size_t>{5, 3, 8}),
             expected);
}

// Identity and diagonal factors mixed in, shape (3,6,4), N = 72: the identity gets no step, the
// diagonal a scale step (N 1 = 72 flops for double).
//  solve: lines 12, (9+15) 2 -> 576; bytes 2 72 8 = 1152; workspace max_n 6 -> 6656.
//  factors: f1 568 + scale 4 8 = 600. The apply variant: f1 316 + 32 = 348.
BOOST_AUTO_TEST_CASE(identity_and_diagonal) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  const auto d = kronex::diagonal(std::vector<double>{1, 2, 3, 4});
  const std::array<std::size_t, 3> shape{3, 6, 4};
  const auto K = kronex::kron(kronex::identity(3), M, d);
  check_plan(kronex::explain(K.inverse(), shape),
             "plan inverse(kron(f0,f1,f2)) on (3,6,4):(24,4,1) [host, double]\n"
             "  setup\n"
             "    f0  identity n=3  skipped\n"
             "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0\n"
             "    f2  diagonal n=4  scale\n"
             "  steps\n"
             "    0  solve  mode 1  f1 N  lu_subst  (3,6,4):(24,4,1)  flops=576  bytes=1.152k\n"
             "    1  scale  mode 2  f2 N  scale  (18,4,1):(4,1,1)  flops=72  bytes=1.152k\n"
             "  total  steps=2  flops=648  bytes=2.304k  workspace=6.656kB  factors=600B\n");
  check_plan(kronex::explain(K, shape),
             "plan kron(f0,f1,f2) on (3,6,4):(24,4,1) [host, double]\n"
             "  setup\n"
             "    f0  identity n=3  skipped\n"
             "    f1  banded n=6 kl=2 ku=2 clamped  matvec  nnz=24\n"
             "    f2  diagonal n=4  scale\n"
             "  steps\n"
             "    0  apply  mode 1  f1 N  band_matvec  (3,6,4):(24,4,1)  flops=576  bytes=1.152k\n"
             "    1  scale  mode 2  f2 N  scale  (18,4,1):(4,1,1)  flops=72  bytes=1.152k\n"
             "  total  steps=2  flops=648  bytes=2.304k  workspace=6.656kB  factors=348B\n");
}

// Only identities: one copy step over the whole tensor, no mode/factor/letter; the value type
// comes from the tensor. float, shape (4,3): bytes 2 12 4 = 96; no panels (max_n = 0), only
// the W = 128 line offsets: 1024 B. (The docs/plans.md example.)
BOOST_AUTO_TEST_CASE(all_identity_copy) {
  const auto b = xt::xtensor<float, 2>::from_shape({4, 3});
  const std::string expected =
      "plan kron(f0,f1) on (4,3):(3,1) [host, float]\n"
      "  setup\n"
      "    f0  identity n=4  skipped\n"
      "    f1  identity n=3  skipped\n"
      "  steps\n"
      "    0  copy  memcpy  (1,12,1):(12,1,1)  flops=0  bytes=96\n"
      "  total  steps=1  flops=0  bytes=96  workspace=1.024kB  factors=0B\n";
  const auto K = kronex::kron(kronex::identity(4), kronex::identity(3));
  check_plan(kronex::explain(K, b), expected);
  // The inverse of the identity is a copy too.
  std::string inv = expected;
  inv.replace(inv.find("kron(f0,f1)"), 11, "inverse(kron(f0,f1))");
  check_plan(kronex::explain(K.inverse(), b), inv);
}

// Rank 1: the shape prints as "(n,)". N = 6: bytes 96, flops 1 (9+15) 2 = 48.
BOOST_AUTO_TEST_CASE(rank_one) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  check_plan(kronex::explain(kronex::kron(M).inverse(), std::array<std::size_t, 1>{6}),
             "plan inverse(kron(f0)) on (6,):(1,) [host, double]\n"
             "  setup\n"
             "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0\n"
             "  steps\n"
             "    0  solve  mode 0  f0 N  lu_subst  (1,6,1):(6,1,1)  flops=48  bytes=96\n"
             "  total  steps=1  flops=48  bytes=96  workspace=6.656kB  factors=568B\n");
}

// Printing is deterministic: compiling the same expression twice, or from equal copies of the
// factors, or for each value type, gives the same text each time.
BOOST_AUTO_TEST_CASE(deterministic) {
  const auto Mx = kronex::gallery::bspline_mass<double>(12, 3);
  const auto My = kronex::gallery::bspline_mass<double>(9, 2, boundary::periodic);
  const auto Mx2 = Mx;
  const std::array<std::size_t, 2> shape{12, 9};
  const std::string first = kronex::explain(kronex::kron(Mx, My).inverse(), shape);
  for (int rep = 0; rep < 3; ++rep) {
    BOOST_TEST(kronex::explain(kronex::kron(Mx, My).inverse(), shape) == first);
    BOOST_TEST(kronex::explain(kronex::kron(Mx2, My).inverse(), shape) == first);
    auto a = kronex::compile(kronex::kron(Mx, My).inverse(), shape);
    auto b = kronex::compile(kronex::kron(Mx, My).inverse(), shape);
    BOOST_TEST(printed_operator(a) == first);
    BOOST_TEST(printed_operator(b) == first);
    // Running the operator does not change its plan.
    auto x = kronex_test::random_tensor<double>(shape);
    a(x, x);
    BOOST_TEST(printed_operator(a) == first);
  }
  // No pointer values or addresses leak into the text.
  BOOST_TEST(first.find("0x") == std::string::npos);
}

// explain(lazy result) is the plan the compiled operator runs, for solves and applies, for a
// tensor operand and for a view; for a nested lazy result it is the outer plan.
BOOST_AUTO_TEST_CASE(explain_lazy_matches_compiled) {
  const auto Mx = kronex::gallery::bspline_mass<double>(7, 3);
  const auto My = kronex::gallery::laplacian<double>(5);
  const auto d = kronex::diagonal(std::vector<double>{1, 2, 3});
  const auto K = kronex::kron(Mx, My, d);
  const auto b = kronex_test::random_tensor<double>(std::array<std::size_t, 3>{7, 5, 3});
  BOOST_TEST(kronex::explain(K.solve(b)) == printed_operator(kronex::compile(K.inverse(), b)));
  BOOST_TEST(kronex::explain(K.apply(b)) == printed_operator(kronex::compile(K, b)));
  BOOST_TEST(kronex::explain(K.transpose().solve(b)) == printed_operator(kronex::compile(K.transpose().inverse(), b)));
  BOOST_TEST(kronex::explain(K.solve(b)) == kronex::explain(K.inverse(), std::vector<std::size_t>{7, 5, 3}));
  // Nested: solve(apply(b)) explains the outer solve.
  BOOST_TEST(kronex::explain(K.solve(K.apply(b))) == printed_operator(kronex::compile(K.inverse(), b)));
  // A strided view operand: same shape, same plan (the plan is for a C-order tensor).
  const auto big = kronex_test::random_tensor<double>(std::array<std::size_t, 3>{7, 10, 3});
  const auto v = xt::view(big, xt::all(), xt::range(0, 10, 2), xt::all());
  BOOST_TEST(kronex::explain(K.solve(v)) == printed_operator(kronex::compile(K.inverse(), b)));
  // A float expression prints float (value types are not mixed up between instantiations).
  const auto Mf = kronex::gallery::bspline_mass<float>(7, 3);
  const auto bf = kronex_test::random_tensor<float>(std::array<std::size_t, 1>{7});
  BOOST_TEST(kronex::explain(kronex::kron(Mf).solve(bf)).find("[host, float]") != std::string::npos);
}
