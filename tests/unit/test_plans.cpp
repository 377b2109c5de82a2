// Golden printed plans. Each expected string below was first printed, then checked by hand
// against docs/plans.md ("How costs are estimated") and an independent LU (partial pivoting on
// the same matrices, computed with a textbook Cox-de Boor recursion) for nnz and swaps. The
// derivation of every number is in the comment above its string, so a change in the output can
// be judged, not just re-pasted. Conventions used throughout (docs/plans.md):
//   bytes per step = 2 N sizeof(T)                    (one read, one write of the tensor)
//                    N sizeof(T) for each step of a fused pair (one read, one write per pair)
//   solve flops    = lines ((L nnz + U nnz - n) m + n mul)
//                    (L nnz + U nnz - n coefficients, i.e. U's diagonal is not a coefficient: it
//                    is the n row scalings by 1/u_ii; m = 2 real, 8 complex (multiply-add);
//                    mul = 1 real, 6 complex (multiply); lines = N / n; a complex factor
//                    whose entries are all real runs on reals: m = 4, mul = 2)
//   apply flops    = lines nnz m;   scale flops = N mul;   copy flops = 0
//   view           = (L, n, R):(n R, R, 1)            (C order, L lines before the mode, R after)
//   fusion         = a solve/apply step on mode k whose view has L > 1 and whose slab
//                    n R sizeof(T) <= 1 MiB is fused with a next solve/apply step on mode k+1
//                    (pairs taken greedily from step 0; a step is in at most one pair)
//   workspace      = (P S n V + max slab) sizeof(T):  V = 128 / sizeof(T) (16 double, 32 float,
//                    8 complex<double>), S = clamp(256 KiB / (n V sizeof(T)), 1,
//                    min(64, ceil(lines / V))), S n V maximised over the solve/apply steps,
//                    P = 2 when an apply step exists (output panel) else 1, max slab = the
//                    largest G n R of a fused first step that applies (0 without one: a
//                    pair starting with a solve works in place in x), where the slab
//                    group G = min(L, max(1, floor(512 KiB / (n R sizeof(T))))) slabs run at once. For the small shapes
//                    here 256 KiB / (n V sizeof(T)) = 2048 / n is never the bound, so
//                    S = ceil(lines / V). When R > 1 a panel's rows hold S V values, and one
//                    cache line more when S V sizeof(T) = 128 S B is a multiple of 1 KiB
//                    (S = 8, 16, ...): such a panel is n (S V + 64 / sizeof(T)) values.
//   factors        = row programs: ops sizeof(row_op<T>) (32 B for real double, 40 B for complex
//                    double) + 4 B per index (src, row_ptr) + sizeof(T) per coefficient, and
//                    for a complex factor whose entries are all real the same program again
//                    with real values (row_op<double> and 8 B coefficients);
//                    plus sizeof(T) per diagonal entry of a scale step.
// Also: printing is deterministic, and every way to get a plan gives the same text: operator<<
// and plan() of the compiled operator, and explain(expr, like) and explain(lazy result), which
// stop before factoring and so print the L and U counts as estimates (explained() below).
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

// What explain() prints for a plan whose compiled form is `compiled`, when no factor needs a row
// swap: explain() factors nothing, so the L and U counts are the envelope estimate of an LU
// without swaps (docs/plans.md), which is then exact, and say so.
// The condition estimate after " swaps=0" is known only once factored: explain() has none.
std::string explained(std::string compiled) {
  BOOST_REQUIRE_MESSAGE(compiled.find(" swaps=") == std::string::npos || compiled.find(" swaps=0") != std::string::npos,
                        "explained(): a golden with row swaps needs its own explain() golden");
  const std::string from = " swaps=0", to = " (estimate: no swaps)";
  for (std::size_t at = compiled.find(from); at != std::string::npos; at = compiled.find(from, at + to.size()))
    compiled.replace(at, compiled.find('\n', at) - at, to);
  return compiled;
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
//  flops: 20 ((9+15-6) 2 + 6) = 20 42 = 840; 24 ((7+12-5) 2 + 5) = 24 33 = 792;
//         30 ((6+10-4) 2 + 4) = 30 28 = 840; total 2472.
//  views: (1,6,20):(120,20,1), (6,5,4):(20,4,1), (30,4,1):(4,1,1).
//  fusion: step 0 has L = 1, so it stays alone; step 1 (mode 1, L = 6, slab 5 4 8 = 160 B) and
//  step 2 (mode 2) are solves on adjacent modes: "fused with 2".
//  bytes: 2 120 8 = 1920 for step 0, 120 8 = 960 for each fused step; 3840 total.
//  workspace: S n V = 2 6 16 = 192 (step 0: 20 lines), 2 5 16 = 160, 2 4 16 = 128 (24, 30
//  lines); one panel (no apply) of 192, and no slab buffer (the pair starts with a solve, which
//  works in place in x): 192 8 = 1536.
//  factors: f0 11 ops (5 nonempty L rows + 6 U rows) 32 + 18 coef 12 = 568; f1 9 ops (4 + 5)
//           32 + 14 coef 12 = 456; f2 7 ops (3 + 4) 32 + 12 coef 12 = 368; total 1392.
BOOST_AUTO_TEST_CASE(solve_clamped_periodic_dense) {
  const auto Mx = kronex::gallery::bspline_mass<double>(6, 2);
  const auto My = kronex::gallery::bspline_mass<double>(5, 1, boundary::periodic);
  const auto D = dominant_dense();
  const std::string expected =
      "plan inverse(kron(f0,f1,f2)) on (6,5,4):(20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0  rcond=0.35\n"
      "    f2  dense n=4  getrf  L nnz=6 U nnz=10 swaps=0  rcond=0.33\n"
      "  steps\n"
      "    0  solve  mode 0  f0 N  lu_subst  (1,6,20):(120,20,1)  flops=840  bytes=1.92k  model: lu_subst 270ns, gemm 210ns\n"
      "    1  solve  mode 1  f1 N  lu_subst  fused with 2  (6,5,4):(20,4,1)  flops=792  bytes=960  model: lu_subst 260ns, gemm 710ns\n"
      "    2  solve  mode 2  f2 N  lu_subst  (30,4,1):(4,1,1)  flops=840  bytes=960  model: lu_subst 380ns, gemm 200ns\n"
      "  total  steps=3  flops=2.472k  bytes=3.84k  workspace=1.536kB  factors=1.392kB\n";
  const std::array<std::size_t, 3> shape{6, 5, 4};
  const auto K = kronex::kron(Mx, My, D);
  check_plan(kronex::explain(K.inverse(), shape), explained(expected));
  auto solver = kronex::compile(K.inverse(), shape);
  check_plan(printed_operator(solver), expected);
  check_plan(printed(solver.plan()), expected);
  check_plan(kronex::to_string(solver.plan()), expected);
  // The numbers behind the text.
  BOOST_TEST(solver.plan().flops() == 2472.0);
  BOOST_TEST(solver.plan().bytes() == 3840.0);
  BOOST_TEST(solver.plan().workspace_bytes == 1536u);
  BOOST_TEST(solver.plan().factor_bytes == 1392u);
  BOOST_TEST(solver.plan().steps.size() == 3u);
  BOOST_TEST(!kronex::fused_with_next(solver.plan().steps[0]));
  BOOST_TEST(kronex::fused_with_next(solver.plan().steps[1]));
  BOOST_TEST(!kronex::fused_with_next(solver.plan().steps[2]));
}

// The example of docs/plans.md, which claims to print exactly this; verified again here:
//  f0 clamped p=3 n=8: L = 3+3+3+3+3+2+1 = 18, U = 8 + 18 = 26.
//  f1 periodic p=2 n=10: LAPACK widths 9/9; L: columns 0..5 have rows k+1, k+2, 8, 9 (4 each),
//     column 6 rows 7,8,9, column 7 rows 8,9, column 8 row 9: 24+3+2+1 = 30; U = 30 + 10 = 40.
//  flops: 60 ((18+26-8) 2 + 8) = 60 80 = 4800, 48 ((30+40-10) 2 + 10) = 48 130 = 6240,
//  scale 480 1 = 480; total 11520. bytes 2 480 8 = 7680 per step (no fusion: step 0 has L = 1,
//  and step 1's next step is a scale).
//  workspace: S n V = 4 8 16 = 512 (step 0: 60 lines), 3 10 16 = 480 (step 1: 48 lines); one
//  panel, no slab: 512 8 = 4096.
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
      "    0  solve  mode 0  f0 N  lu_subst  (1,8,60):(480,60,1)  flops=4.8k  bytes=7.68k  model: lu_subst 1.1us, gemm 590ns\n"
      "    1  solve  mode 1  f1 N  lu_subst  (8,10,6):(60,6,1)  flops=6.24k  bytes=7.68k  model: lu_subst 1.2us, gemm 1.3us\n"
      "    2  scale  mode 2  f2 N  scale  (80,6,1):(6,1,1)  flops=480  bytes=7.68k\n"
      "  total  steps=3  flops=11.52k  bytes=23.04k  workspace=4.096kB  factors=2.288kB\n";
  auto x = kronex::kron(Mx, My, Dz).solve(b);
  check_plan(kronex::explain(x), explained(expected));
  check_plan(kronex::explain(kronex::kron(Mx, My, Dz).inverse(), b), explained(expected));
}

// Transposed solve with pivoting factors (exact binary fractions, so the pivots are certain):
//  f0 = tridiagonal n=4 with 1 on the diagonal, 2 below, 1 above. Each column's subdiagonal 2
//     beats its pivot (1, then 0.5, then -0.75): 3 swaps; multipliers 0.5, 0.25, -0.375: L nnz 3;
//     U rows [2,1,1], [2,1,1], [2,1], [0.125]: U nnz 9 (fill up to kl+ku = 2).
//  f1 = [[1,2],[2,1]]: swap, multiplier 0.5, U = [[2,1],[0,1.5]]: L nnz 1, U nnz 3, 1 swap.
//  shape (4,2), N = 8: bytes 2 8 8 = 128 per step (no fusion: step 0 has L = 1).
//  flops: 2 ((3+9-4) 2 + 4) = 2 20 = 40; 4 ((1+3-2) 2 + 2) = 4 6 = 24; total 64.
//  views (1,4,2):(8,2,1) and (4,2,1):(2,1,1). Transposes fold into each step as 'T'.
//  workspace: 2 and 4 lines: S = 1; S n V = 1 4 16 = 64 and 1 2 16 = 32: 64 8 = 512.
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
      "    0  solve  mode 0  f0 T  lu_subst  (1,4,2):(8,2,1)  flops=40  bytes=128\n"
      "    1  solve  mode 1  f1 T  lu_subst  (4,2,1):(2,1,1)  flops=24  bytes=128  model: lu_subst 27ns, gemm 110ns\n"
      "  total  steps=2  flops=64  bytes=256  workspace=512B  factors=568B\n";
  // explain() factors nothing: its counts assume no swaps. f0: the tridiagonal envelope, L 3,
  // U 4 + 3 = 7; flops 2 ((3+7-4) 2 + 4) = 32; 7 ops (4 U^T rows + 3 L^T rows) 32 + 6 coef 12 =
  // 296. f1: L 1, U 3 as compiled, but 3 ops (no swap): 96 + 24 = 120. Factors 416.
  const std::string estimated =
      "plan inverse(kron(f0,f1)^T) on (4,2):(2,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=4 kl=1 ku=1 clamped  gbtrf kl=1 ku=1  L nnz=3 U nnz=7 (estimate: no swaps)\n"
      "    f1  dense n=2  getrf  L nnz=1 U nnz=3 (estimate: no swaps)\n"
      "  steps\n"
      "    0  solve  mode 0  f0 T  lu_subst  (1,4,2):(8,2,1)  flops=32  bytes=128  model: lu_subst 17ns, gemm 110ns\n"
      "    1  solve  mode 1  f1 T  lu_subst  (4,2,1):(2,1,1)  flops=24  bytes=128  model: lu_subst 27ns, gemm 110ns\n"
      "  total  steps=2  flops=56  bytes=256  workspace=512B  factors=416B\n";
  const std::array<std::size_t, 2> shape{4, 2};
  const auto K = kronex::kron(B, D);
  // Every spelling of the same operator prints the same plan.
  check_plan(kronex::explain(K.transpose().inverse(), shape), estimated);
  check_plan(kronex::explain(K.inverse().transpose(), shape), estimated);
  const auto b = kronex_test::random_tensor<double>(shape);
  check_plan(kronex::explain(K.transpose().solve(b)), estimated);
  // Folding: a double transpose is no transpose at all.
  const std::string twice = kronex::explain(K.transpose().transpose().inverse(), shape);
  BOOST_TEST(twice.rfind("plan inverse(kron(f0,f1)) on (4,2):(2,1) [host, double]\n", 0) == 0u);
  BOOST_TEST(twice.find(" T  ") == std::string::npos);
}

// Adjoint solve, complex<double>: same factor structure as the first test (f0 clamped p=2 n=6,
// f1 periodic p=1 n=5), folded as 'C'. Shape (6,5), N = 30. The entries are real, so the
// programs run on reals.
//  flops (m = 4, mul = 2): 5 ((9+15-6) 4 + 6 2) = 5 84 = 420; 6 ((7+12-5) 4 + 5 2) = 6 66 = 396;
//  total 816. bytes 2 30 16 = 960 per step (no fusion: step 0 has L = 1).
//  views (1,6,5):(30,5,1) and (6,5,1):(5,1,1).
//  workspace: V = 128/16 = 8; 5 and 6 lines: S = 1; S n V = 6 8 = 48 (and 5 8 = 40):
//  48 16 = 768.
//  factors: row_op<complex<double>> is 40 B: f0 11 ops 40 + 18 coef (16 + 4) = 800, and real:
//           11 32 + 18 (8 + 4) = 568; f1 9 ops 40 + 14 coef 20 = 640, and 9 32 + 14 12 = 456;
//           total 2464.
BOOST_AUTO_TEST_CASE(adjoint_complex_solve) {
  using C = std::complex<double>;
  const auto Mx = kronex::gallery::bspline_mass<C>(6, 2);
  const auto My = kronex::gallery::bspline_mass<C>(5, 1, boundary::periodic);
  const std::string expected =
      "plan inverse(kron(f0,f1)^H) on (6,5):(5,1) [host, complex<double>]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0  rcond=0.35\n"
      "  steps\n"
      "    0  solve  mode 0  f0 C  lu_subst  (1,6,5):(30,5,1)  flops=420  bytes=960  model: lu_subst 130ns, gemm 250ns\n"
      "    1  solve  mode 1  f1 C  lu_subst  (6,5,1):(5,1,1)  flops=396  bytes=960  model: lu_subst 180ns, gemm 240ns\n"
      "  total  steps=2  flops=816  bytes=1.92k  workspace=768B  factors=2.464kB\n";
  const auto K = kronex::kron(Mx, My);
  check_plan(kronex::explain(K.adjoint().inverse(), std::array<std::size_t, 2>{6, 5}), explained(expected));
  const auto b = kronex_test::random_tensor<C>(std::array<std::size_t, 2>{6, 5});
  check_plan(kronex::explain(K.adjoint().solve(b)), explained(expected));
  check_plan(printed_operator(kronex::compile(K.adjoint().inverse(), b)), expected);
}

// Conjugate solve, complex<double>: transpose().adjoint() (or adjoint().transpose()) is conj(K),
// folded into each step as 'R'; the expression prints as conj(...). Shape (2,6,5), N = 60; f0 =
// [[1, 2], [2i, 1]] (swap, as |2i| > 1; multiplier -i/2, U = [[2i, 1], [0, 2 + i/2]]: L nnz 1,
// U nnz 3, 1 swap; ||f0||_1 = 3, ||f0^-1||_1 = 3 / |1 - 4i|: rcond = sqrt(17) / 9 = 0.458), f1
// and f2 as in adjoint_complex_solve (L 9 / U 15, L 7 / U 12, real entries).
//  flops (f0 m = 8, mul = 6; f1, f2 m = 4, mul = 2): 30 ((1+3-2) 8 + 2 6) = 30 28 = 840;
//  10 ((9+15-6) 4 + 6 2) = 10 84 = 840; 12 ((7+12-5) 4 + 5 2) = 12 66 = 792; total 2472.
//  fusion: step 0 has L = 1; step 1 (mode 1, L = 2, slab 6 5 16 = 480 B) fuses with step 2.
//  bytes: 2 60 16 = 1920 for step 0, 60 16 = 960 for each fused step; 3840 total.
//  workspace: V = 8; S n V = 4 2 8 = 64 (30 lines), 2 6 8 = 96 (10 lines), 2 5 8 = 80 (12 lines);
//  one panel of 96, no slab buffer (the pair starts with a solve): 96 16 = 1536.
//  factors: row_op 40 B, coefficient 16 + 4: f0 4 ops (1 swap + 1 L row + 2 U rows) 40 + 2 20 =
//  200; f1 11 40 + 18 20 = 800 and 568 real; f2 9 40 + 14 20 = 640 and 456 real; total 2664.
BOOST_AUTO_TEST_CASE(conjugate_complex_solve) {
  using C = std::complex<double>;
  const xt::xtensor<C, 2> D = {{C(1), C(2)}, {C(0, 2), C(1)}};
  const auto Mx = kronex::gallery::bspline_mass<C>(6, 2);
  const auto My = kronex::gallery::bspline_mass<C>(5, 1, boundary::periodic);
  const std::string expected =
      "plan inverse(conj(kron(f0,f1,f2))) on (2,6,5):(30,5,1) [host, complex<double>]\n"
      "  setup\n"
      "    f0  dense n=2  getrf  L nnz=1 U nnz=3 swaps=1  rcond=0.46\n"
      "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
      "    f2  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0  rcond=0.35\n"
      "  steps\n"
      "    0  solve  mode 0  f0 R  lu_subst  (1,2,30):(60,30,1)  flops=840  bytes=1.92k  model: lu_subst 280ns, gemm 360ns\n"
      "    1  solve  mode 1  f1 R  lu_subst  fused with 2  (2,6,5):(30,5,1)  flops=840  bytes=960  model: lu_subst 270ns, gemm 490ns\n"
      "    2  solve  mode 2  f2 R  lu_subst  (12,5,1):(5,1,1)  flops=792  bytes=960  model: lu_subst 350ns, gemm 380ns\n"
      "  total  steps=3  flops=2.472k  bytes=3.84k  workspace=1.536kB  factors=2.664kB\n";
  // explain() assumes no swaps: f0 has 3 ops instead of 4, 40 B less: factors 2624.
  const std::string estimated =
      "plan inverse(conj(kron(f0,f1,f2))) on (2,6,5):(30,5,1) [host, complex<double>]\n"
      "  setup\n"
      "    f0  dense n=2  getrf  L nnz=1 U nnz=3 (estimate: no swaps)\n"
      "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 (estimate: no swaps)\n"
      "    f2  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 (estimate: no swaps)\n"
      "  steps\n"
      "    0  solve  mode 0  f0 R  lu_subst  (1,2,30):(60,30,1)  flops=840  bytes=1.92k  model: lu_subst 280ns, gemm 360ns\n"
      "    1  solve  mode 1  f1 R  lu_subst  fused with 2  (2,6,5):(30,5,1)  flops=840  bytes=960  model: lu_subst 270ns, gemm 490ns\n"
      "    2  solve  mode 2  f2 R  lu_subst  (12,5,1):(5,1,1)  flops=792  bytes=960  model: lu_subst 350ns, gemm 380ns\n"
      "  total  steps=3  flops=2.472k  bytes=3.84k  workspace=1.536kB  factors=2.624kB\n";
  const std::array<std::size_t, 3> shape{2, 6, 5};
  const auto K = kronex::kron(D, Mx, My);
  check_plan(kronex::explain(K.transpose().adjoint().inverse(), shape), estimated);
  check_plan(kronex::explain(K.adjoint().transpose().inverse(), shape), estimated);
  check_plan(kronex::explain(K.inverse().transpose().adjoint(), shape), estimated);
  const auto b = kronex_test::random_tensor<C>(shape);
  check_plan(kronex::explain(K.transpose().adjoint().solve(b)), estimated);
  check_plan(printed_operator(kronex::compile(K.transpose().adjoint().inverse(), b)), expected);
  // The apply prints the same letter.
  const std::string applied = kronex::explain(K.transpose().adjoint(), shape);
  BOOST_TEST(applied.rfind("plan conj(kron(f0,f1,f2)) on (2,6,5):(30,5,1) [host, complex<double>]\n", 0) == 0u);
  BOOST_TEST(applied.find("  f0 R  dense_matvec  ") != std::string::npos);
  // Conjugating twice is no conjugate at all.
  const std::string twice = kronex::explain(K.transpose().adjoint().transpose().adjoint().inverse(), shape);
  BOOST_TEST(twice.rfind("plan inverse(kron(f0,f1,f2)) on ", 0) == 0u);
  BOOST_TEST(twice.find(" R  ") == std::string::npos);
}

// The conjugate op computes conj(K)^{-1} b and conj(K) x: checked against the dense reference on
// factors with nonzero imaginary parts (for real-valued factors R would be indistinguishable
// from N), with a fused pair (modes 1 and 2) in the plan.
BOOST_AUTO_TEST_CASE(conjugate_complex_matches_reference) {
  using C = std::complex<double>;
  auto rnd = [] { return kronex_test::random_value<C>(); };
  xt::xtensor<C, 2> D = xt::xtensor<C, 2>::from_shape({3, 3});
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) D(i, j) = rnd() + (i == j ? C(3, 1) : C(0));
  kronex::banded<C> B(6, 2, 1);
  for (std::size_t i = 0; i < 6; ++i)
    for (std::size_t j = i >= 2 ? i - 2 : 0; j <= std::min<std::size_t>(5, i + 1); ++j)
      B(i, j) = rnd() + (i == j ? C(4, -2) : C(0));
  kronex::banded<C> P(5, 1, 1, boundary::periodic);
  for (std::size_t i = 0; i < 5; ++i) {
    P(i, i) = rnd() + C(3, 2);
    P(i, (i + 1) % 5) = rnd();
    P(i, (i + 4) % 5) = rnd();
  }
  const std::array<std::size_t, 3> shape{3, 6, 5};
  const auto K = kronex::kron(D, B, P);
  BOOST_TEST(kronex::fused_with_next(kronex::compile(K.transpose().adjoint().inverse(), shape).plan().steps[1]));
  const auto b = kronex_test::random_tensor<C>(shape);
  const xt::xtensor<C, 3> x = K.transpose().adjoint().solve(b);
  const auto expected = kronex::reference::solve(K.transpose().adjoint(), b);
  BOOST_TEST(kronex_test::rel_error(x, expected) < 1e-12);
  const xt::xtensor<C, 3> x2 = K.adjoint().transpose().solve(b);
  BOOST_TEST(kronex_test::rel_error(x2, expected) < 1e-12);
  const xt::xtensor<C, 3> y = K.transpose().adjoint().apply(b);
  BOOST_TEST(kronex_test::rel_error(y, kronex::reference::apply(K.transpose().adjoint(), b)) < 1e-12);
  // The check has teeth: conj(K)^{-1} b is far from K^{-1} b for these factors.
  const xt::xtensor<C, 3> plain = K.solve(b);
  BOOST_TEST(kronex_test::rel_error(plain, expected) > 1e-3);
}

// Apply (no inverse) of the first test's factors: matvec with the entries of each band, the
// dense 4x4 (every entry nonzero, n >= 4, the last mode) as one GEMM.
//  nnz: f0 rows 3,4,5,5,4,3 = 24; f1 tridiagonal + 2 corners = 15.
//  flops: 20 24 2 = 960; 24 15 2 = 720; gemm 120 4 2 = 960; total 2640 (no row scalings).
//  no fusion: step 2 is a gemm, so step 1 has no partner. bytes: 3 1920 = 5760.
//  workspace: panels as in the solve (largest S n V = 192), two of them (apply: output panel),
//  larger than the gemm's in-place chunk of 30 lines 4 = 120: 2 192 8 = 3072.
//  factors: apply programs hold row_ptr (n+1), src and coef: f0 7 4 + 24 12 = 316;
//           f1 6 4 + 15 12 = 204; f2's matrix 16 8 = 128; total 648.
BOOST_AUTO_TEST_CASE(apply_clamped_periodic_dense) {
  const auto Mx = kronex::gallery::bspline_mass<double>(6, 2);
  const auto My = kronex::gallery::bspline_mass<double>(5, 1, boundary::periodic);
  const auto D = dominant_dense();
  const std::string expected =
      "plan kron(f0,f1,f2) on (6,5,4):(20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  banded n=6 kl=2 ku=2 clamped  matvec  nnz=24\n"
      "    f1  banded n=5 kl=1 ku=1 periodic  matvec  nnz=15\n"
      "    f2  dense n=4  gemm\n"
      "  steps\n"
      "    0  apply  mode 0  f0 N  band_matvec  (1,6,20):(120,20,1)  flops=960  bytes=1.92k\n"
      "    1  apply  mode 1  f1 N  band_matvec  (6,5,4):(20,4,1)  flops=720  bytes=1.92k\n"
      "    2  apply  mode 2  f2 N  gemm  (30,4,1):(4,1,1)  flops=960  bytes=1.92k\n"
      "  total  steps=3  flops=2.64k  bytes=5.76k  workspace=3.072kB  factors=648B\n";
  const std::array<std::size_t, 3> shape{6, 5, 4};
  check_plan(kronex::explain(kronex::kron(Mx, My, D), shape), explained(expected));
  const auto b = kronex_test::random_tensor<double>(shape);
  check_plan(kronex::explain(kronex::kron(Mx, My, D).apply(b)), explained(expected));
}

// The apply example of docs/plans.md: identity skipped (steps start at mode 1), transposed.
//  nnz: tridiagonal 3x3 = 7; clamped p=3 n=8 rows 4,5,6,7,7,6,5,4 = 44.
//  N = 120: flops 40 7 2 = 560, 15 44 2 = 1320. Step 0 (mode 1, L = 5, slab 3 8 = 24 values)
//  and step 1 (mode 2) fuse: "fused with 1", bytes 120 8 = 960 each.
//  workspace: S n V = 3 3 16 = 144 (step 0: 40 lines), 1 8 16 = 128 (step 1: 15 lines); two
//  panels (apply) + a group of L = 5 slabs of 24: (2 144 + 120) 8 = 3264.
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
      "    0  apply  mode 1  f1 T  dense_matvec  fused with 1  (5,3,8):(24,8,1)  flops=560  bytes=960\n"
      "    1  apply  mode 2  f2 T  band_matvec  (15,8,1):(8,1,1)  flops=1.32k  bytes=960\n"
      "  total  steps=2  flops=1.88k  bytes=1.92k  workspace=3.264kB  factors=664B\n";
  check_plan(kronex::explain(kronex::kron(kronex::identity(5), A, Mx).transpose(), std::vector<std::size_t>{5, 3, 8}), explained(expected));
}

// Dense applies of n >= 4 run as GEMMs unless each GEMM would have fewer than 4 rows: shape
// (10,9,3), N = 270, f0 and f1 dense with every entry nonzero, f2 the clamped p=1 n=3 mass.
//  step 0 (mode 0, L = 1): gemm, flops 270 10 2 = 5400, bytes 2 270 8 = 4320.
//  step 1 (mode 1, L = 10, R = 3 < 4): dense_matvec, 30 lines 81 2 = 4860; fuses with step 2
//  (slab 9 3 8 = 216 B): bytes 270 8 = 2160 each. step 2: tridiagonal nnz 7, 90 7 2 = 1260.
//  workspace: panels S n V = 2 9 16 = 288 (30 lines), 6 3 16 = 288 (90 lines): two of 288
//  (apply) = 576 > the gemm chunk min(3276, R = 27) 10 = 270; + a group of L = 10 slabs of
//  27: (576 + 270) 8 = 6768.
//  factors: f0's matrix 100 8 = 800; f1's program 10 4 + 81 12 = 1012; f2's 4 4 + 7 12 = 100;
//  total 1912.
BOOST_AUTO_TEST_CASE(apply_dense_as_gemm) {
  xt::xtensor<double, 2> A = xt::ones<double>({10, 10}) + 10 * xt::eye<double>(10);
  xt::xtensor<double, 2> B = xt::ones<double>({9, 9}) + 9 * xt::eye<double>(9);
  const auto M = kronex::gallery::bspline_mass<double>(3, 1);
  const std::string expected =
      "plan kron(f0,f1,f2) on (10,9,3):(27,3,1) [host, double]\n"
      "  setup\n"
      "    f0  dense n=10  gemm\n"
      "    f1  dense n=9  matvec  nnz=81\n"
      "    f2  banded n=3 kl=1 ku=1 clamped  matvec  nnz=7\n"
      "  steps\n"
      "    0  apply  mode 0  f0 N  gemm  (1,10,27):(270,27,1)  flops=5.4k  bytes=4.32k\n"
      "    1  apply  mode 1  f1 N  dense_matvec  fused with 2  (10,9,3):(27,3,1)  flops=4.86k  bytes=2.16k\n"
      "    2  apply  mode 2  f2 N  band_matvec  (90,3,1):(3,1,1)  flops=1.26k  bytes=2.16k\n"
      "  total  steps=3  flops=11.52k  bytes=8.64k  workspace=6.784kB  factors=1.912kB\n";
  check_plan(kronex::explain(kronex::kron(A, B, M), std::vector<std::size_t>{10, 9, 3}), explained(expected));
  // The last mode (R = 1): one GEMM over all 27 lines.
  const std::string last = kronex::explain(kronex::kron(B, M, A), std::vector<std::size_t>{9, 3, 10});
  BOOST_TEST(last.find("    2  apply  mode 2  f2 N  gemm  (27,10,1):(10,1,1)  flops=5.4k  bytes=4.32k\n") !=
             std::string::npos, last);
}

// A fused pair in a 4D solve, shape (2,6,5,4), N = 240: f0 = [[1,2],[2,1]] (L nnz 1, U nnz 3,
// 1 swap), f1 clamped p=2 n=6 (L 9, U 15), f2 periodic p=1 n=5 (L 7, U 12), f3 the dense 4x4
// (L 6, U 10). Pairing is greedy: step 0 has L = 1 and stays alone; steps 1 and 2 (modes 1, 2;
// L = 2, slab 6 20 8 = 960 B) fuse; step 3 has no partner left (step 2 is taken).
//  flops: 120 ((1+3-2) 2 + 2) = 120 6 = 720; 40 ((9+15-6) 2 + 6) = 40 42 = 1680;
//         48 ((7+12-5) 2 + 5) = 48 33 = 1584; 60 ((6+10-4) 2 + 4) = 60 28 = 1680; total 5664.
//  bytes: 2 240 8 = 3840 for steps 0 and 3, 240 8 = 1920 for steps 1 and 2; total 11520.
//  views: (1,2,120):(240,120,1), (2,6,20):(120,20,1), (12,5,4):(20,4,1), (60,4,1):(4,1,1).
//  workspace: step 0 (120 lines, R = 120) S = 8: rows of 8 16 = 128 values, 1 KiB, padded by a
//  cache line to 136: 2 136 = 272; 3 6 16 = 288 (40 lines), 3 5 16 = 240 (48), 4 4 16 = 256
//  (60); one panel of 288, no slab buffer (the pair starts with a solve): 288 8 = 2304.
//  factors: f0 4 ops (1 swap + 1 L row + 2 U rows) 32 + 2 coef 12 = 152; f1 568; f2 456; f3 368;
//  total 1544.
BOOST_AUTO_TEST_CASE(fused_pair_4d) {
  const xt::xtensor<double, 2> P = {{1, 2}, {2, 1}};
  const auto Mx = kronex::gallery::bspline_mass<double>(6, 2);
  const auto My = kronex::gallery::bspline_mass<double>(5, 1, boundary::periodic);
  const auto D = dominant_dense();
  const std::string expected =
      "plan inverse(kron(f0,f1,f2,f3)) on (2,6,5,4):(120,20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  dense n=2  getrf  L nnz=1 U nnz=3 swaps=1  rcond=0.33\n"
      "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
      "    f2  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 swaps=0  rcond=0.35\n"
      "    f3  dense n=4  getrf  L nnz=6 U nnz=10 swaps=0  rcond=0.33\n"
      "  steps\n"
      "    0  solve  mode 0  f0 N  lu_subst  (1,2,120):(240,120,1)  flops=720  bytes=3.84k  model: lu_subst 480ns, gemm 290ns\n"
      "    1  solve  mode 1  f1 N  lu_subst  fused with 2  (2,6,20):(120,20,1)  flops=1.68k  bytes=1.92k  model: lu_subst 530ns, gemm 430ns\n"
      "    2  solve  mode 2  f2 N  lu_subst  (12,5,4):(20,4,1)  flops=1.584k  bytes=1.92k  model: lu_subst 530ns, gemm 1.4us\n"
      "    3  solve  mode 3  f3 N  lu_subst  (60,4,1):(4,1,1)  flops=1.68k  bytes=3.84k  model: lu_subst 760ns, gemm 310ns\n"
      "  total  steps=4  flops=5.664k  bytes=11.52k  workspace=2.304kB  factors=1.544kB\n";
  // explain() assumes no swaps: f0 has 3 ops instead of 4, 32 B less: factors 1512.
  const std::string estimated =
      "plan inverse(kron(f0,f1,f2,f3)) on (2,6,5,4):(120,20,4,1) [host, double]\n"
      "  setup\n"
      "    f0  dense n=2  getrf  L nnz=1 U nnz=3 (estimate: no swaps)\n"
      "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 (estimate: no swaps)\n"
      "    f2  banded n=5 kl=1 ku=1 periodic  gbtrf kl=4 ku=4  L nnz=7 U nnz=12 (estimate: no swaps)\n"
      "    f3  dense n=4  getrf  L nnz=6 U nnz=10 (estimate: no swaps)\n"
      "  steps\n"
      "    0  solve  mode 0  f0 N  lu_subst  (1,2,120):(240,120,1)  flops=720  bytes=3.84k  model: lu_subst 480ns, gemm 290ns\n"
      "    1  solve  mode 1  f1 N  lu_subst  fused with 2  (2,6,20):(120,20,1)  flops=1.68k  bytes=1.92k  model: lu_subst 530ns, gemm 430ns\n"
      "    2  solve  mode 2  f2 N  lu_subst  (12,5,4):(20,4,1)  flops=1.584k  bytes=1.92k  model: lu_subst 530ns, gemm 1.4us\n"
      "    3  solve  mode 3  f3 N  lu_subst  (60,4,1):(4,1,1)  flops=1.68k  bytes=3.84k  model: lu_subst 760ns, gemm 310ns\n"
      "  total  steps=4  flops=5.664k  bytes=11.52k  workspace=2.304kB  factors=1.512kB\n";
  const std::array<std::size_t, 4> shape{2, 6, 5, 4};
  const auto K = kronex::kron(P, Mx, My, D);
  check_plan(kronex::explain(K.inverse(), shape), estimated);
  auto solver = kronex::compile(K.inverse(), shape);
  check_plan(printed_operator(solver), expected);
  BOOST_TEST(solver.plan().flops() == 5664.0);
  BOOST_TEST(solver.plan().bytes() == 11520.0);
  BOOST_TEST(solver.plan().workspace_bytes == 2304u);
  BOOST_TEST(solver.plan().factor_bytes == 1544u);
  // Fused steps compute what unfused ones would: the dense reference, out of place and in place.
  const auto b = kronex_test::random_tensor<double>(shape);
  const auto expected_x = kronex::reference::solve(K, b);
  BOOST_TEST(kronex_test::rel_error(solver(b), expected_x) < 1e-12);
  xt::xtensor<double, 4> x = b;
  solver(x, x);
  BOOST_TEST(kronex_test::rel_error(x, expected_x) < 1e-12);
}

// Fused pairs against the dense reference on a shape whose slabs take the contiguous-run path
// (mode 1: R = 5 16 = 80, mode 2: R = 16, both multiples of V = 16) and a last mode of 16, for
// solves and applies (whose second, output panel the pair shares), real and complex.
BOOST_AUTO_TEST_CASE(fused_pairs_match_reference) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const xt::xtensor<T, 2> P = {{T(1), T(2)}, {T(2), T(1)}};
    const auto Mx = kronex::gallery::bspline_mass<T>(6, 2);
    const auto My = kronex::gallery::bspline_mass<T>(5, 1, boundary::periodic);
    const auto Mz = kronex::gallery::bspline_mass<T>(16, 3);
    const std::array<std::size_t, 4> shape{2, 6, 5, 16};
    const auto K = kronex::kron(P, Mx, My, Mz);
    auto solver = kronex::compile(K.inverse(), shape);
    auto op = kronex::compile(K, shape);
    BOOST_TEST(kronex::fused_with_next(solver.plan().steps[1]));
    BOOST_TEST(kronex::fused_with_next(op.plan().steps[1]));
    const auto b = kronex_test::random_tensor<T>(shape);
    BOOST_TEST(kronex_test::rel_error(solver(b), kronex::reference::solve(K, b)) < 1e-12);
    BOOST_TEST(kronex_test::rel_error(op(b), kronex::reference::apply(K, b)) < 1e-12);
    const xt::xtensor<T, 4> xtr = K.transpose().solve(b);
    BOOST_TEST(kronex_test::rel_error(xtr, kronex::reference::solve(K.transpose(), b)) < 1e-12);
  };
  check(0.0);
  check(std::complex<double>(0));
}

// When a pair fuses, from the steps' flags and the workspace (which holds the slab of a pair
// that starts with an apply):
//  - slabs fuse up to 1 MiB, inclusive; groups take as many slabs as fit in 512 KiB, at least one.
//    (2,256,256): mode 1's slab is 256 256 8 = 524288 B = 512 KiB: fused. Workspace: mode 0 (65536 lines; 256 KiB / 256 B = 1024, capped at S = 64): rows of
//    64 16 = 1024 values, 8 KiB, a multiple of 1 KiB, so 8 more (a cache line): 2 1032 = 2064;
//    mode 1 (R > 1: up to 32 strips within 1 MiB; 512 lines need 32): rows of 32 16 = 512
//    values, 4 KiB, so 520: 256 520 = 133120; mode 2 (the last, no row padding; 256 KiB /
//    32 KiB = 8): 8 256 16 = 32768. The solve: one panel of 133120, no slab buffer (it solves
//    in place in x): 1064960. The apply: two panels (an output one) of 133120 + a group of
//    G = min(2, 1) = 1 slab of 65536: 331776 8 = 2654208.
//  - (2,256,512): slab 256 512 8 = 1048576 B = 1 MiB: fused. Workspace: mode 0 as above; mode 1
//    (1024 lines) 32 strips, 256 520 = 133120; mode 2 (512 lines, 256 KiB / (512 128) = 4)
//    4 512 16 = 32768. The solve: one panel of 133120: 1064960. The apply: two panels of 133120 +
//    a group of G = min(2, max(1, floor(512 KiB / 1 MiB) = 0)) = 1 slab of 131072:
//    397312 8 = 3178496.
//  - (2,256,513): slab 256 513 8 = 1050624 B > 1 MiB: not fused. Workspace: mode 1 (1026 lines,
//    65 strips needed) 32 strips, 133120 as above; mode 2 (512 lines, 256 KiB / (513 128) =
//    3.99) 3 513 16 = 24624; one panel of 133120, no slab: 1064960.
//  - an identity in between: steps on modes 1 and 3 are not adjacent: no fusion.
//  - L = 1 for a step on mode 1 when mode 0 has size 1 (an identity(1)): no fusion.
BOOST_AUTO_TEST_CASE(fusion_rules) {
  const xt::xtensor<double, 2> P = {{1, 2}, {2, 1}};
  const auto L256 = kronex::gallery::laplacian<double>(256);
  const auto L512 = kronex::gallery::laplacian<double>(512);
  const auto L513 = kronex::gallery::laplacian<double>(513);
  auto fused = [](const kronex::plan_description& p) {
    std::vector<bool> f;
    for (const auto& st : p.steps) f.push_back(kronex::fused_with_next(st));
    return f;
  };
  using flags = std::vector<bool>;
  kronex::compile_options one_thread;  // the workspace below is one thread's (the default follows the machine)
  one_thread.threads = 1;
  {
    auto s = kronex::compile(kronex::kron(P, L256, L256).inverse(), std::array<std::size_t, 3>{2, 256, 256}, one_thread);
    BOOST_TEST((fused(s.plan()) == flags{false, true, false}));
    BOOST_TEST(s.plan().workspace_bytes == 1064960u);
    BOOST_TEST(s.plan().bytes() == 2.0 * 131072 * 8 + 2.0 * 131072 * 8);
    auto a = kronex::compile(kronex::kron(P, L256, L256), std::array<std::size_t, 3>{2, 256, 256}, one_thread);
    BOOST_TEST((fused(a.plan()) == flags{false, true, false}));
    BOOST_TEST(a.plan().workspace_bytes == 2654208u);
  }
  {
    auto s = kronex::compile(kronex::kron(P, L256, L512).inverse(), std::array<std::size_t, 3>{2, 256, 512}, one_thread);
    BOOST_TEST((fused(s.plan()) == flags{false, true, false}));
    BOOST_TEST(s.plan().workspace_bytes == 1064960u);
    auto a = kronex::compile(kronex::kron(P, L256, L512), std::array<std::size_t, 3>{2, 256, 512}, one_thread);
    BOOST_TEST((fused(a.plan()) == flags{false, true, false}));
    BOOST_TEST(a.plan().workspace_bytes == 3178496u);
  }
  {
    auto s = kronex::compile(kronex::kron(P, L256, L513).inverse(), std::array<std::size_t, 3>{2, 256, 513}, one_thread);
    BOOST_TEST((fused(s.plan()) == flags{false, false, false}));
    BOOST_TEST(s.plan().workspace_bytes == 1064960u);
    BOOST_TEST(kronex::to_string(s.plan()).find("fused") == std::string::npos);
  }
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  const auto D = dominant_dense();
  {
    auto s = kronex::compile(kronex::kron(P, M, kronex::identity(3), D).inverse(), std::array<std::size_t, 4>{2, 6, 3, 4});
    BOOST_TEST((fused(s.plan()) == flags{false, false, false}));
    BOOST_TEST(kronex::step_info(s.plan().steps[2]).mode == 3u);
  }
  {
    auto s = kronex::compile(kronex::kron(kronex::identity(1), M, D).inverse(), std::array<std::size_t, 3>{1, 6, 4});
    BOOST_TEST((fused(s.plan()) == flags{false, false}));
    // With 2 in front of it, the same pair fuses.
    auto t = kronex::compile(kronex::kron(kronex::identity(2), M, D).inverse(), std::array<std::size_t, 3>{2, 6, 4});
    BOOST_TEST((fused(t.plan()) == flags{true, false}));
  }
}

// Identity and diagonal factors mixed in, shape (3,6,4), N = 72: the identity gets no step, the
// diagonal a scale step (N 1 = 72 flops for double).
//  solve: lines 12, (9+15-6) 2 + 6 = 42 -> 504; bytes 2 72 8 = 1152 (no fusion: the next step
//  is a scale); workspace: 12 lines, S = 1, S n V = 6 16 = 96 values -> 768.
//  factors: f1 568 + scale 4 8 = 600. The apply variant: 12 24 2 = 576 flops, two panels: 1536;
//  factors f1 316 + 32 = 348.
BOOST_AUTO_TEST_CASE(identity_and_diagonal) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  const auto d = kronex::diagonal(std::vector<double>{1, 2, 3, 4});
  const std::array<std::size_t, 3> shape{3, 6, 4};
  const auto K = kronex::kron(kronex::identity(3), M, d);
  check_plan(kronex::explain(K.inverse(), shape), explained("plan inverse(kron(f0,f1,f2)) on (3,6,4):(24,4,1) [host, double]\n"
             "  setup\n"
             "    f0  identity n=3  skipped\n"
             "    f1  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
             "    f2  diagonal n=4  scale\n"
             "  steps\n"
             "    0  solve  mode 1  f1 N  lu_subst  (3,6,4):(24,4,1)  flops=504  bytes=1.152k  model: lu_subst 160ns, gemm 370ns\n"
             "    1  scale  mode 2  f2 N  scale  (18,4,1):(4,1,1)  flops=72  bytes=1.152k\n"
             "  total  steps=2  flops=576  bytes=2.304k  workspace=768B  factors=600B\n"));
  check_plan(kronex::explain(K, shape), explained("plan kron(f0,f1,f2) on (3,6,4):(24,4,1) [host, double]\n"
             "  setup\n"
             "    f0  identity n=3  skipped\n"
             "    f1  banded n=6 kl=2 ku=2 clamped  matvec  nnz=24\n"
             "    f2  diagonal n=4  scale\n"
             "  steps\n"
             "    0  apply  mode 1  f1 N  band_matvec  (3,6,4):(24,4,1)  flops=576  bytes=1.152k\n"
             "    1  scale  mode 2  f2 N  scale  (18,4,1):(4,1,1)  flops=72  bytes=1.152k\n"
             "  total  steps=2  flops=648  bytes=2.304k  workspace=1.536kB  factors=348B\n"));
}

// Only identities: one copy step over the whole tensor, no mode/factor/letter; the value type
// comes from the tensor. float, shape (4,3): bytes 2 12 4 = 96; no solve/apply step, so no
// panel and no slab: workspace 0 B. (The docs/plans.md example.)
BOOST_AUTO_TEST_CASE(all_identity_copy) {
  const auto b = xt::xtensor<float, 2>::from_shape({4, 3});
  const std::string expected =
      "plan kron(f0,f1) on (4,3):(3,1) [host, float]\n"
      "  setup\n"
      "    f0  identity n=4  skipped\n"
      "    f1  identity n=3  skipped\n"
      "  steps\n"
      "    0  copy  memcpy  (1,12,1):(12,1,1)  flops=0  bytes=96\n"
      "  total  steps=1  flops=0  bytes=96  workspace=0B  factors=0B\n";
  const auto K = kronex::kron(kronex::identity(4), kronex::identity(3));
  check_plan(kronex::explain(K, b), explained(expected));
  // The inverse of the identity is a copy too.
  std::string inv = expected;
  inv.replace(inv.find("kron(f0,f1)"), 11, "inverse(kron(f0,f1))");
  check_plan(kronex::explain(K.inverse(), b), explained(inv));
}

// Rank 1: the shape prints as "(n,)". N = 6: bytes 96, flops 1 ((9+15-6) 2 + 6) = 42;
// workspace: 1 line, S = 1: 6 16 8 = 768.
BOOST_AUTO_TEST_CASE(rank_one) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  check_plan(kronex::explain(kronex::kron(M).inverse(), std::array<std::size_t, 1>{6}), explained("plan inverse(kron(f0)) on (6,):(1,) [host, double]\n"
             "  setup\n"
             "    f0  banded n=6 kl=2 ku=2 clamped  gbtrf kl=2 ku=2  L nnz=9 U nnz=15 swaps=0  rcond=0.074\n"
             "  steps\n"
             "    0  solve  mode 0  f0 N  lu_subst  (1,6,1):(6,1,1)  flops=42  bytes=96  model: lu_subst 18ns, gemm 110ns\n"
             "  total  steps=1  flops=42  bytes=96  workspace=768B  factors=568B\n"));
}

// Printing is deterministic: compiling the same expression twice, or from equal copies of the
// factors, or for each value type, gives the same text each time.
BOOST_AUTO_TEST_CASE(deterministic) {
  const auto Mx = kronex::gallery::bspline_mass<double>(12, 3);
  const auto My = kronex::gallery::bspline_mass<double>(9, 2, boundary::periodic);
  const auto Mx2 = Mx;
  const std::array<std::size_t, 2> shape{12, 9};
  const std::string first = printed_operator(kronex::compile(kronex::kron(Mx, My).inverse(), shape));
  for (int rep = 0; rep < 3; ++rep) {
    BOOST_TEST(kronex::explain(kronex::kron(Mx, My).inverse(), shape) == explained(first));
    BOOST_TEST(kronex::explain(kronex::kron(Mx2, My).inverse(), shape) == explained(first));
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

// explain() stops after the plan phase: it factors nothing, so a factor that is singular (found
// when compiling) is explained without error, and the plan says it is not instantiated.
BOOST_AUTO_TEST_CASE(explain_does_not_factor) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2);
  const auto P = kronex::gallery::laplacian<double>(8, boundary::periodic);  // singular
  const std::array<std::size_t, 2> shape{6, 8};
  const kronex::plan_description p = kronex::explain_plan(kronex::kron(M, P).inverse(), shape);
  BOOST_TEST(!p.instantiated);
  BOOST_TEST(p.steps.size() == 2u);
  BOOST_TEST(kronex::to_string(p).find("f1  banded n=8 kl=1 ku=1 periodic  gbtrf kl=7 ku=7  L nnz=13 U nnz=21 "
                                       "(estimate: no swaps)") != std::string::npos,
             kronex::to_string(p));
  BOOST_CHECK_THROW(kronex::compile(kronex::kron(M, P).inverse(), shape), kronex::singular_factor);
  BOOST_TEST(kronex::compile(kronex::kron(M, M).inverse(), std::array<std::size_t, 2>{6, 6}).plan().instantiated);
}

// explain(lazy result) is the plan the compiled operator runs, for solves and applies, for a
// tensor operand and for a view; for a nested lazy result it is the outer plan.
BOOST_AUTO_TEST_CASE(explain_lazy_matches_compiled) {
  const auto Mx = kronex::gallery::bspline_mass<double>(7, 3);
  const auto My = kronex::gallery::laplacian<double>(5);
  const auto d = kronex::diagonal(std::vector<double>{1, 2, 3});
  const auto K = kronex::kron(Mx, My, d);
  const auto b = kronex_test::random_tensor<double>(std::array<std::size_t, 3>{7, 5, 3});
  BOOST_TEST(kronex::explain(K.solve(b)) == explained(printed_operator(kronex::compile(K.inverse(), b))));
  BOOST_TEST(kronex::explain(K.apply(b)) == explained(printed_operator(kronex::compile(K, b))));
  BOOST_TEST(kronex::explain(K.transpose().solve(b)) == explained(printed_operator(kronex::compile(K.transpose().inverse(), b))));
  BOOST_TEST(kronex::explain(K.solve(b)) == kronex::explain(K.inverse(), std::vector<std::size_t>{7, 5, 3}));
  // Nested: solve(apply(b)) explains the outer solve.
  BOOST_TEST(kronex::explain(K.solve(K.apply(b))) == explained(printed_operator(kronex::compile(K.inverse(), b))));
  // A strided view operand: same shape, same plan (the plan is for a C-order tensor).
  const auto big = kronex_test::random_tensor<double>(std::array<std::size_t, 3>{7, 10, 3});
  const auto v = xt::view(big, xt::all(), xt::range(0, 10, 2), xt::all());
  BOOST_TEST(kronex::explain(K.solve(v)) == explained(printed_operator(kronex::compile(K.inverse(), b))));
  // A float expression prints float (value types are not mixed up between instantiations).
  const auto Mf = kronex::gallery::bspline_mass<float>(7, 3);
  const auto bf = kronex_test::random_tensor<float>(std::array<std::size_t, 1>{7});
  BOOST_TEST(kronex::explain(kronex::kron(Mf).solve(bf)).find("[host, float]") != std::string::npos);
}

// any_factor<T> views as the factor it holds: the same plan as the concrete factors (all five
// kinds, mixed with concrete factors in one kron), and the same eager checks.
BOOST_AUTO_TEST_CASE(any_factor_compiles_as_the_factor_it_holds) {
  const auto M = kronex::gallery::bspline_mass<double>(6, 2, kronex::boundary::periodic);
  const auto d = kronex::diagonal(std::vector<double>{1, 2, 3, 4});
  xt::xtensor<double, 2> A = {{4, 1, 0}, {1, 4, 1}, {0, 1, 4}};
  const kronex::function_solver<double> f(2, [](double* x, std::size_t count) {
    for (std::size_t i = 0; i < 2 * count; ++i) x[i] *= 0.5;
  });
  const std::array<std::size_t, 5> shape{3, 6, 4, 3, 2};
  const kronex::any_factor<double> aI = kronex::identity(3), aM = M, ad = d, aA = A, af = f;
  BOOST_TEST(aM.size() == 6u);
  BOOST_TEST(aA.size() == 3u);
  const auto concrete = kronex::kron(kronex::identity(3), M, d, A, f);
  const auto erased = kronex::kron(aI, aM, ad, aA, af);
  const auto mixed = kronex::kron(aI, M, ad, A, af);
  BOOST_TEST(kronex::explain(erased.inverse(), shape) == kronex::explain(concrete.inverse(), shape));
  BOOST_TEST(kronex::explain(mixed.inverse(), shape) == kronex::explain(concrete.inverse(), shape));
  const auto b = kronex_test::random_tensor<double>(shape);
  const xt::xtensor<double, 5> x1 = concrete.solve(b), x2 = erased.solve(b);
  BOOST_TEST(std::equal(x1.begin(), x1.end(), x2.begin(), x2.end()));
  // The dense factor's squareness is checked at kron() through the any_factor too.
  const kronex::any_factor<double> rect = xt::xtensor<double, 2>::from_shape({2, 3});
  BOOST_CHECK_THROW(kronex::kron(aM, rect), kronex::invalid_factor);
}
