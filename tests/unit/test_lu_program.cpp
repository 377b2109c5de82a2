// The host substitution kernels against LAPACK. A banded factor is factored by
// kronex::detail::factorize, compiled to a row program (solve_program) and run on a panel of W
// right-hand sides (run_solve_program); LAPACK's ?gbtrf + ?gbtrs solve the same systems from band
// storage that this test builds itself, with trans 'N', 'T' and 'C'. Band widths with kl != ku,
// pivoting and non-pivoting matrices, periodic factors (given to LAPACK as a full band here;
// kronex folds those larger than fold_above, 64), dense factors (getrf path), sizes from 1.
// apply_program is checked against a dense matrix-vector product.
#define BOOST_TEST_MODULE test_lu_program
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <complex>
#include <limits>
#include <cstddef>
#include <cstring>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <kronex/backends/host/row_kernels.hpp>
#include <kronex/lapack/lapack.hpp>
#include <kronex/backends/host/lu_factors.hpp>
#include <kronex/backends/host/row_program.hpp>
#include <kronex/kronex.hpp>
#include <xtensor-blas/xlinalg.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex::op;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;
using real_types = std::tuple<float, double>;
using complex_types = std::tuple<std::complex<float>, std::complex<double>>;

struct band_spec {
  std::size_t n, kl, ku;
  boundary bc;
  bool pivot;

  std::string text() const {
    std::ostringstream os;
    os << kronex::to_string(bc) << " n=" << n << " kl=" << kl << " ku=" << ku << (pivot ? " pivoting" : "");
    return os.str();
  }
};

// Sizes from 1 to 33, and 65 and 100 (periodic bands there are folded); unequal band widths in
// both directions; pivoting wherever kl, ku >= 1.
std::vector<band_spec> band_specs() {
  const std::pair<std::size_t, std::size_t> widths[] = {{0, 0}, {1, 1}, {0, 2}, {2, 0}, {1, 2},
                                                        {2, 1}, {1, 3}, {3, 1}, {2, 2}, {4, 1}};
  std::vector<band_spec> specs;
  for (std::size_t n : {1, 2, 3, 4, 5, 7, 16, 33, 65, 100}) {
    for (auto [kl, ku] : widths) {
      for (bool pivot : {false, true}) {
        if (pivot && (kl == 0 || ku == 0)) continue;
        if (kl < n && ku < n) specs.push_back({n, kl, ku, boundary::clamped, pivot});
        if (kl + ku < n) specs.push_back({n, kl, ku, boundary::periodic, pivot});
      }
    }
  }
  return specs;
}

constexpr std::pair<op, char> transposes[] = {{op::none, 'N'}, {op::transpose, 'T'}, {op::adjoint, 'C'}};

// A random strip: n rows of W contiguous values, the layout the kernels work on.
template <class T>
std::vector<T> random_panel(std::size_t n) {
  std::vector<T> p(n * kronex::detail::strip_width<T>);
  for (auto& v : p) v = kronex_test::random_value<T>();
  return p;
}

// op(A)^{-1} panel by LAPACK: A in band storage with widths (kl, ku) built here from the dense
// matrix (ldab = 2*kl+ku+1, AB[(kl+ku+i-j) + j*ldab] = A(i,j)), ?gbtrf, then ?gbtrs on the W
// columns of the panel at once.
template <class T>
std::vector<T> lapack_solve(const xt::xtensor<T, 2>& a, std::size_t kl, std::size_t ku, char trans,
                            const std::vector<T>& panel) {
  constexpr std::size_t W = kronex::detail::strip_width<T>;
  const std::size_t n = a.shape()[0], ldab = 2 * kl + ku + 1;
  std::vector<T> ab(ldab * n, T(0));
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t i = j > ku ? j - ku : 0; i <= std::min(n - 1, j + kl); ++i) ab[(kl + ku + i - j) + j * ldab] = a(i, j);
  using kronex::lapack::int_t;
  std::vector<int_t> ipiv(n);
  const int_t info = kronex::lapack::gbtrf(int_t(n), int_t(kl), int_t(ku), ab.data(), int_t(ldab), ipiv.data());
  BOOST_REQUIRE_MESSAGE(info == 0, "gbtrf info=" << info);
  std::vector<T> b(n * W);  // column-major n x W
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < W; ++c) b[i + c * n] = panel[i * W + c];
  const int_t info2 = kronex::lapack::gbtrs(trans, int_t(n), int_t(kl), int_t(ku), int_t(W), ab.data(), int_t(ldab),
                                            ipiv.data(), b.data(), int_t(n));
  BOOST_REQUIRE_MESSAGE(info2 == 0, "gbtrs info=" << info2);
  std::vector<T> x(n * W);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < W; ++c) x[i * W + c] = b[i + c * n];
  return x;
}

// Runs the row program for every transpose of one factor and compares with LAPACK, given the
// band widths LAPACK is to use (the matrix's own for clamped bands, the full band otherwise).
template <class T>
void check_solves(const kronex::factor_view<T>& view, const xt::xtensor<T, 2>& a, std::size_t lapack_kl,
                  std::size_t lapack_ku, const std::string& what, const kronex::compile_options& opts = {}) {
  const auto lu = kronex::detail::factorize(view, 0, opts);
  for (auto [o, letter] : transposes) {
    const auto b = random_panel<T>(view.n);
    std::vector<T> x = b;
    kronex::detail::run_solve_program(kronex::detail::solve_program(lu, o), x.data());
    const std::vector<T> expected = lapack_solve(a, lapack_kl, lapack_ku, letter, b);
    const double err = kronex_test::rel_error(x, expected);
    BOOST_TEST(err <= kronex_test::tolerance<T>(),
               what << " trans=" << letter << ": solve program differs from gbtrs by " << err);
  }
}

// The matrix the factors are of: A, or B = Q A Q^T (B(k, l) = A(order[k], order[l])) for a
// folded band.
template <class T>
xt::xtensor<T, 2> factored_matrix(const xt::xtensor<T, 2>& a, const kronex::detail::lu_factors<T>& lu) {
  xt::xtensor<T, 2> b = a;
  const std::size_t n = lu.n;
  if (!lu.order.empty())
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t c = 0; c < n; ++c) b(k, c) = a(lu.order[k], lu.order[c]);
  return b;
}

} // namespace

// Banded factors, clamped and periodic: the row program of every transpose equals ?gbtrs.
BOOST_AUTO_TEST_CASE_TEMPLATE(banded_solve_program_matches_gbtrs, T, value_types) {
  for (const auto& s : band_specs()) {
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto banded = kronex_test::to_banded(a, s.kl, s.ku, s.bc);
    const auto view = kronex::make_view(banded);

    // The premise of the case: a pivoting matrix makes gbtrf swap rows, the others (row and
    // column diagonally dominant) do not. Otherwise the swap code would go untested.
    const auto lu = kronex::detail::factorize(view, 0);
    if (s.pivot && s.n >= 2) BOOST_TEST(!lu.swaps.empty(), s.text() << ": expected row swaps, got none");
    if (!s.pivot) BOOST_TEST(lu.swaps.empty(), s.text() << ": expected no row swaps, got " << lu.swaps.size());

    // Periodic factors go to LAPACK as a full band: independent of kronex's own band widths.
    const bool periodic = s.bc == boundary::periodic;
    check_solves(view, a, periodic ? s.n - 1 : s.kl, periodic ? s.n - 1 : s.ku, s.text());
  }
}

// Dense factors take the getrf path; LAPACK solves them as a full band.
BOOST_AUTO_TEST_CASE_TEMPLATE(dense_solve_program_matches_gbtrs, T, value_types) {
  for (std::size_t n : {1, 2, 3, 5, 8, 21}) {
    for (bool pivot : {false, true}) {
      const auto a = kronex_test::random_dense_matrix<T>(n, pivot);
      const auto lu = kronex::detail::factorize(kronex::make_view<T>(a), 0);
      if (pivot && n >= 2) BOOST_TEST(!lu.swaps.empty(), "dense n=" << n << " pivoting: expected row swaps");
      check_solves(kronex::make_view<T>(a), a, n - 1, n - 1, "dense n=" + std::to_string(n) + (pivot ? " pivoting" : ""));
    }
  }
}

// The factors themselves: with the swaps applied in order to the rows of A, L U equals A; L is
// strictly lower and U strictly upper (the kernels' update order relies on it). Localises a
// failure above to factorize or to solve_program.
BOOST_AUTO_TEST_CASE_TEMPLATE(factors_reconstruct_the_matrix, T, value_types) {
  for (const auto& s : band_specs()) {
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto banded = kronex_test::to_banded(a, s.kl, s.ku, s.bc);
    const auto lu = kronex::detail::factorize(kronex::make_view(banded), 0);
    const std::size_t n = s.n;
    BOOST_REQUIRE(lu.n == n && lu.lower.size() == n && lu.upper.size() == n && lu.diag.size() == n);

    const bool folded = !lu.order.empty();
    BOOST_TEST(folded == (s.bc == boundary::periodic && n > kronex::detail::fold_above), s.text());
    xt::xtensor<T, 2> pa = factored_matrix(a, lu);
    for (auto [i, j] : lu.swaps)
      for (std::size_t c = 0; c < n; ++c) std::swap(pa(i, c), pa(j, c));
    bool triangular = true;
    for (std::size_t i = 0; i < n; ++i) {
      for (auto [j, v] : lu.lower[i]) triangular = triangular && j < i;
      for (auto [j, v] : lu.upper[i]) triangular = triangular && j > i && j < n;
    }
    BOOST_REQUIRE_MESSAGE(triangular, s.text() << ": L has an entry on or above the diagonal, or U on or below it");
    // Row i of L U is row i of U plus l(i, k) times row k of U for each entry of L's row i: the
    // factors' own sparse rows, so the product costs O(n p^2), not O(n^3).
    xt::xtensor<T, 2> prod = xt::zeros<T>({n, n});
    auto add_row_of_u = [&](std::size_t i, std::size_t k, T scale) {
      prod(i, k) += scale * lu.diag[k];
      for (auto [j, v] : lu.upper[k]) prod(i, j) += scale * v;
    };
    for (std::size_t i = 0; i < n; ++i) {
      add_row_of_u(i, i, T(1));
      for (auto [k, v] : lu.lower[i]) add_row_of_u(i, k, v);
    }
    const double err = kronex_test::rel_error(prod, pa);
    BOOST_TEST(err <= kronex_test::tolerance<T>(), s.text() << ": L U differs from P^-1 A by " << err);
  }
}

// apply_program + run_apply_program against a dense product op(A) x, for banded (clamped and
// periodic) and dense factors.
BOOST_AUTO_TEST_CASE_TEMPLATE(apply_program_matches_dense_product, T, value_types) {
  constexpr std::size_t W = kronex::detail::strip_width<T>;
  auto check = [](const kronex::factor_view<T>& view, const xt::xtensor<T, 2>& a, const std::string& what) {
    const std::size_t n = a.shape()[0];
    for (auto [o, letter] : transposes) {
      const auto x = random_panel<T>(n);
      std::vector<T> y(n * W, T(7));  // garbage: the kernel must overwrite every row
      kronex::detail::run_apply_program(kronex::detail::apply_program(view, o), x.data(), y.data());
      std::vector<T> expected(n * W, T(0));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          const T aij = o == op::none ? a(i, j) : (o == op::transpose ? a(j, i) : kronex::detail::conj_if_complex(a(j, i)));
          for (std::size_t c = 0; c < W; ++c) expected[i * W + c] += aij * x[j * W + c];
        }
      const double err = kronex_test::rel_error(y, expected);
      BOOST_TEST(err <= kronex_test::tolerance<T>(), what << " trans=" << letter << ": apply program differs by " << err);
    }
  };
  for (const auto& s : band_specs()) {
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto banded = kronex_test::to_banded(a, s.kl, s.ku, s.bc);
    check(kronex::make_view(banded), a, s.text());
  }
  for (std::size_t n : {1, 2, 5, 9}) {
    const auto a = kronex_test::random_dense_matrix<T>(n, true);
    check(kronex::make_view<T>(a), a, "dense n=" + std::to_string(n));
  }
}

// A large periodic band is factored folded, in O(n p^2) time and O(n p) memory: n = 2^16 would
// need 2^16 x 3 x 2^16 values (100 GB) as a full band. The compiled 1D solve inverts the periodic
// mass matrix (its apply gives b back), and the plan says how it was factored.
BOOST_AUTO_TEST_CASE(large_periodic_band_is_folded) {
  const std::size_t n = std::size_t(1) << 16;
  const auto M = kronex::gallery::bspline_mass<double>(n, 3, boundary::periodic);
  xt::xtensor<double, 1> b = xt::zeros<double>({n});
  for (auto& v : b) v = kronex_test::random_value<double>();
  auto solver = kronex::compile(kronex::kron(M).inverse(), b);
  const xt::xtensor<double, 1> x = solver(b);
  const xt::xtensor<double, 1> back = kronex::kron(M).apply(x);
  BOOST_TEST(kronex_test::rel_error(back, b) <= 1e-12);
  const auto& setup = solver.plan().setup.at(0);
  BOOST_TEST(setup.method == "gbtrf kl=6 ku=6 folded", setup.method);  // width 2p
  // The solve program holds O(n p) coefficients: at most 6 + 12 + 1 per row, under 16 bytes each.
  BOOST_TEST(solver.plan().factor_bytes <= n * 22 * 16, solver.plan().factor_bytes);
  // explain() of a larger one is as cheap: nothing is factored, and its estimate is O(n p).
  const auto big = kronex::gallery::bspline_mass<double>(std::size_t(1) << 20, 3, boundary::periodic);
  const std::string plan = kronex::explain(kronex::kron(big).inverse(), kronex::shape_t{std::size_t(1) << 20});
  BOOST_TEST(plan.find("folded") != std::string::npos, plan);
}

// Which programs the AVX2 kernels run as one chain with the rows written last in registers
// (row_program::one_chain_pays): unfolded bands, where every update reads the row the update
// before wrote; not folded periodic bands (in the fold's order that row is a source of under half
// the updates, or they have about 2p sources each). Catches counts of reading updates or sources
// that are off, which would pick the slower kernel (the results are the same either way).
BOOST_AUTO_TEST_CASE(one_chain_for_unfolded_bands) {
  auto program = [](std::size_t n, int p, boundary bc) {
    const auto M = kronex::gallery::bspline_mass<double>(n, p, bc);
    return kronex::detail::solve_program(kronex::detail::factorize(kronex::make_view<double>(M), 0), kronex::op::none);
  };
  BOOST_TEST(program(256, 1, boundary::clamped).one_chain_pays());
  BOOST_TEST(program(256, 3, boundary::clamped).one_chain_pays());
  BOOST_TEST(program(256, 7, boundary::clamped).one_chain_pays());
  BOOST_TEST(program(64, 1, boundary::periodic).one_chain_pays());       // unfolded: two sources per row
  BOOST_TEST(!program(256, 3, boundary::periodic).one_chain_pays());     // folded
  BOOST_TEST(!program(256, 7, boundary::periodic).one_chain_pays());     // folded, about 14 sources
  BOOST_TEST(!kronex::detail::row_program<double>{}.one_chain_pays());   // no updates
}

// Band runs (row_program::find_band_runs): in the solve program of an unfolded band of half-width
// p <= 3 without pivoting, each sweep after its first operations: for N, L (step +1, unscaled)
// then U (step -1, scaled); transposed, U^T (+1, scaled) then L^T (-1, unscaled). Wider bands
// and folded ones have none, nor do runs shorter than min_band_run. Catches a detector that
// misses runs (the band kernel never runs) or splits them.
BOOST_AUTO_TEST_CASE(band_runs_cover_unfolded_bands) {
  auto program = [](std::size_t n, int p, boundary bc, op o) {
    const auto M = kronex::gallery::bspline_mass<double>(n, p, bc);
    return kronex::detail::solve_program(kronex::detail::factorize(kronex::make_view<double>(M), 0), o);
  };
  for (int p : {1, 2, 3}) {
    for (op o : {op::none, op::transpose}) {
      const auto prog = program(64, p, boundary::clamped, o);
      BOOST_TEST_CONTEXT("p=" << p << " " << kronex::trans_letter(o)) {
        BOOST_TEST_REQUIRE(prog.band_runs.size() == 2u);
        std::size_t in_runs = 0;
        for (const auto& run : prog.band_runs) {
          BOOST_TEST(run.width == std::size_t(p));
          in_runs += run.last - run.first;
        }
        BOOST_TEST(prog.band_runs[0].step == 1);
        BOOST_TEST(prog.band_runs[1].step == -1);
        BOOST_TEST(prog.band_runs[0].scaled == (o == op::transpose));  // U^T first when transposed
        BOOST_TEST(prog.band_runs[1].scaled == (o == op::none));
        BOOST_TEST(prog.ops.size() - in_runs <= std::size_t(2 * p));  // only each sweep's first p
        BOOST_TEST(prog.runs_in_bands());
      }
    }
  }
  BOOST_TEST(!program(64, 5, boundary::clamped, op::none).runs_in_bands());    // 5 sources per update
  BOOST_TEST(!program(256, 5, boundary::periodic, op::none).runs_in_bands());  // 5 or 10 sources
  BOOST_TEST(program(8, 3, boundary::clamped, op::none).band_runs.empty());    // sweeps of 7 and 8 operations
}

// A folded periodic band (n > 64): in the fold's order (two fronts, the band's two ends), an
// operation near the corners reads 2p rows of both fronts (two fronts, lag 1, width 2p), and
// further on p rows of its own front only (two chains, lag 2, width p), whose rows never meet.
// Catches runs whose sources are not the rows the kernels take (the memcmp test below then fails
// as well) and programs left to the general kernel that the band kernels could run.
BOOST_AUTO_TEST_CASE(band_runs_cover_folded_periodic_bands) {
  for (int p : {1, 2, 3}) {
    for (op o : {op::none, op::transpose}) {
      const auto M = kronex::gallery::bspline_mass<double>(256, p, boundary::periodic);
      const auto lu = kronex::detail::factorize(kronex::make_view<double>(M), 0);
      BOOST_TEST_REQUIRE(!lu.order.empty());
      const auto prog = kronex::detail::solve_program(lu, o);
      BOOST_TEST_CONTEXT("p=" << p << " " << kronex::trans_letter(o)) {
        BOOST_TEST(prog.runs_in_bands());
        std::size_t chains = 0, fronts = 0;
        for (const auto& run : prog.band_runs) {
          BOOST_TEST(run.fronts == 2u);
          BOOST_TEST((run.step == 1 || run.step == -1));
          BOOST_TEST(run.other_step == -run.step);  // the fold's two ends walk towards each other, or apart
          if (run.lag == 2) {
            ++chains;
            BOOST_TEST(run.width == std::size_t(p));
          } else {
            ++fronts;
            BOOST_TEST(run.width == std::size_t(2 * p));
          }
        }
        BOOST_TEST(chains == 2u);  // one per sweep
        BOOST_TEST(fronts >= 2u);
      }
    }
  }
}

// The band kernels run band runs with the general kernel's arithmetic in the same order, so their
// bits are those of the general kernel on the same program with the runs removed: clamped
// p = 1, 2, 3, N and T, run lengths of every remainder modulo the width, folded periodic bands
// (two chains run one after the other, two fronts with sources from L1), and the three layouts
// the host plans use: blocks side by side in padded rows (panels), side by side in rows 1 KB
// apart (slabs; taken across the blocks, operation by operation) and separate strips (the last
// mode). Catches a coefficient paired with the wrong row, a window preloaded from the wrong rows,
// a wrong remainder after the unrolled loop, a wrong step or block address, a source taken from
// the wrong front, and a scaled update fused into a different rounding.
BOOST_AUTO_TEST_CASE_TEMPLATE(band_kernel_matches_the_general_kernel, T, real_types) {
  constexpr std::size_t V = kronex::detail::strip_width<T>;
  struct layout {
    std::size_t blocks, stride, gap;  // gap 0: separate n x V strips
  };
  const layout layouts[] = {{3, 3 * V + 8, V}, {1024 / (V * sizeof(T)), 1024 / sizeof(T), V}, {2, V, 0}};
  BOOST_TEST(!kronex::detail::band_rows_across<T>(layouts[0].blocks, layouts[0].stride, layouts[0].gap));
  BOOST_TEST(kronex::detail::band_rows_across<T>(layouts[1].blocks, layouts[1].stride, layouts[1].gap));
  bool ran = false;
  const std::pair<std::size_t, boundary> sizes[] = {{20, boundary::clamped}, {21, boundary::clamped},
                                                    {22, boundary::clamped}, {64, boundary::clamped},
                                                    {200, boundary::periodic}, {257, boundary::periodic}};
  for (auto [n, bc] : sizes) {
    for (int p : {1, 2, 3}) {
      for (op o : {op::none, op::transpose}) {
        const auto M = kronex::gallery::bspline_mass<T>(n, p, bc);
        const auto prog = kronex::detail::solve_program(kronex::detail::factorize(kronex::make_view<T>(M), 0), o);
        BOOST_TEST_REQUIRE(prog.runs_in_bands());
        auto general = prog;
        general.band_runs.clear();
        ran = ran || kronex::detail::runs_band_kernel(prog);
        BOOST_TEST(!kronex::detail::runs_band_kernel(general));
        for (const layout& l : layouts) {
          BOOST_TEST_CONTEXT("n=" << n << (bc == boundary::periodic ? " periodic" : " clamped") << " p=" << p << " "
                                  << kronex::trans_letter(o) << " blocks=" << l.blocks
                                  << " stride=" << l.stride << " gap=" << l.gap) {
            const std::size_t gap = l.gap > 0 ? l.gap : n * V;
            std::vector<T> x((l.blocks - 1) * gap + (n - 1) * l.stride + V);
            for (auto& v : x) v = kronex_test::random_value<T>();
            std::vector<T> y = x;
            kronex::detail::prefetch_stream none;
            kronex::detail::run_solve_blocks(prog, x.data(), l.blocks, l.stride, gap, none);
            kronex::detail::run_solve_blocks(general, y.data(), l.blocks, l.stride, gap, none);
            BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0,
                       "the bits differ; relative difference " << kronex_test::rel_error(x, y));
          }
        }
      }
    }
  }
  if (!ran) BOOST_TEST_MESSAGE("this CPU runs no band kernel (they exist for AVX2 and AVX-512): both sides ran the general one");
}

// A complex program whose coefficients are all real (a real matrix, complex right-hand sides)
// runs on reals (row_program::real_part), and solves the same systems as the complex kernels, in
// the three layouts of the host plans, clamped and folded periodic, N and C; apply programs
// likewise. A complex matrix keeps the complex kernels. Catches a real program built for complex
// coefficients (their imaginary parts dropped), strides or gaps not doubled (rows and blocks read
// in the wrong place, real and imaginary parts mixed), and a real program whose operations or
// coefficients differ from the complex one's.
BOOST_AUTO_TEST_CASE_TEMPLATE(real_coefficients_run_on_reals, T, complex_types) {
  constexpr std::size_t V = kronex::detail::strip_width<T>;
  struct layout {
    std::size_t blocks, stride, gap;  // gap 0: separate n x V strips
  };
  const layout layouts[] = {{3, 3 * V + 4, V}, {1024 / (V * sizeof(T)), 1024 / sizeof(T), V}, {2, V, 0}};
  kronex::detail::prefetch_stream none;
  for (auto [n, bc] : {std::pair{37, boundary::clamped}, std::pair{200, boundary::periodic}}) {
    for (int p : {1, 3, 5}) {
      const auto M = kronex::gallery::bspline_mass<T>(std::size_t(n), p, bc);
      const auto view = kronex::make_view<T>(M);
      const auto lu = kronex::detail::factorize(view, 0);
      for (op o : {op::none, op::adjoint}) {
        const auto prog = kronex::detail::solve_program(lu, o);
        BOOST_TEST_REQUIRE(prog.real_part != nullptr);
        auto complex_kernels = prog;
        complex_kernels.real_part = nullptr;
        for (const layout& l : layouts) {
          BOOST_TEST_CONTEXT("n=" << n << " " << kronex::to_string(bc) << " p=" << p << " "
                                  << kronex::trans_letter(o) << " blocks=" << l.blocks << " stride=" << l.stride
                                  << " gap=" << l.gap) {
            const std::size_t gap = l.gap > 0 ? l.gap : std::size_t(n) * V;
            std::vector<T> x((l.blocks - 1) * gap + std::size_t(n - 1) * l.stride + V);
            for (auto& v : x) v = kronex_test::random_value<T>();
            std::vector<T> y = x;
            kronex::detail::run_solve_blocks(prog, x.data(), l.blocks, l.stride, gap, none);
            kronex::detail::run_solve_blocks(complex_kernels, y.data(), l.blocks, l.stride, gap, none);
            BOOST_TEST(kronex_test::rel_error(x, y) <= kronex_test::tolerance<T>());
          }
        }
        const auto apply = kronex::detail::apply_program(view, o);
        BOOST_TEST_REQUIRE(apply.real_part != nullptr);
        auto complex_apply = apply;
        complex_apply.real_part = nullptr;
        const auto b = random_panel<T>(std::size_t(n));
        std::vector<T> x(b.size()), y(b.size());
        kronex::detail::run_apply_program(apply, b.data(), x.data());
        kronex::detail::run_apply_program(complex_apply, b.data(), y.data());
        BOOST_TEST(kronex_test::rel_error(x, y) <= kronex_test::tolerance<T>(), "apply " << kronex::trans_letter(o));
      }
    }
  }
  const auto C = kronex_test::band<T>(40, 2, 2, boundary::clamped, true);  // complex entries
  const auto view = kronex::make_view(C);
  BOOST_TEST(kronex::detail::solve_program(kronex::detail::factorize(view, 0), op::none).real_part == nullptr);
  BOOST_TEST(kronex::detail::apply_program(view, op::none).real_part == nullptr);
}

// The register window a solve kernel takes for a program (row_program::recent_rows): the most
// rows written just before an update that it reads, at most three. A band of half-width p reads
// min(p, 3) of them, transposed or not; a row last written by a swap is not one. Catches a count
// that is off: too small a window reloads rows the kernel could hold, too large a one spends
// register moves on every operation (the results are the same either way).
BOOST_AUTO_TEST_CASE(register_window_follows_the_band) {
  auto program = [](std::size_t n, int p, boundary bc, op o) {
    const auto M = kronex::gallery::bspline_mass<double>(n, p, bc);
    return kronex::detail::solve_program(kronex::detail::factorize(kronex::make_view<double>(M), 0), o);
  };
  for (op o : {op::none, op::transpose}) {
    BOOST_TEST(program(256, 1, boundary::clamped, o).recent_rows() == 1u);
    BOOST_TEST(program(256, 2, boundary::clamped, o).recent_rows() == 2u);
    BOOST_TEST(program(256, 3, boundary::clamped, o).recent_rows() == 3u);
    BOOST_TEST(program(256, 7, boundary::clamped, o).recent_rows() == 3u);
    BOOST_TEST(program(64, 1, boundary::periodic, o).recent_rows() == 1u);  // unfolded: row 0 is no recent source
  }
  BOOST_TEST(kronex::detail::row_program<double>{}.recent_rows() == 0u);
  kronex::detail::row_program<double> p;
  p.n = 4;
  p.add_update(0, {}, false, true, 2.0);
  p.add_update(1, {{0, 0.5}}, false, false, 1.0);  // reads the row just written
  p.add_swap(1, 2);
  p.add_update(3, {{2, 0.25}, {1, 0.75}}, false, false, 1.0);  // rows 2 and 1 last written by the swap
  BOOST_TEST(p.ops.back().recent == 0u);
  BOOST_TEST(p.recent_rows() == 1u);
}

// Positive definite bands that partial pivoting would swap (B-spline mass matrices of degree 5
// and 7, clamped and folded periodic; for complex types D M D^H with imaginary entries) are
// factored by band Cholesky: no swaps, the counts of an LU without pivoting (estimate_lu), and
// solves that match LAPACK's gbtrs with its pivoting (N, T, C). A Hermitian band that is not
// positive definite and a band that is not Hermitian keep gbtrf and its swaps. Catches a wrong
// L = C D^-1 or U = D C^H (the solves), a Cholesky kept for a matrix it does not fit (pbtrf
// fails: indefinite), or tried where it does not apply (not Hermitian).
BOOST_AUTO_TEST_CASE_TEMPLATE(positive_definite_bands_need_no_swaps, T, value_types) {
  const auto dense_of = [](const kronex::factor_view<T>& v) {
    xt::xtensor<T, 2> a = xt::zeros<T>({v.n, v.n});
    for (std::size_t i = 0; i < v.n; ++i)
      for (std::size_t j = 0; j < v.n; ++j) a(i, j) = v(i, j);
    return a;
  };
  // Degree 7's condition number (about 1e4) puts float solves beyond the suite's tolerance.
  const std::vector<int> degrees = sizeof(kronex::real_t<T>) == 4 ? std::vector<int>{5} : std::vector<int>{5, 7};
  for (int p : degrees) {
    for (auto [n, bc] : {std::pair<std::size_t, boundary>{40, boundary::clamped}, {100, boundary::periodic}}) {
      auto M = kronex::gallery::bspline_mass<T>(n, p, bc);
      if constexpr (kronex::value_traits<T>::is_complex) {
        // Hermitian positive definite with imaginary entries: D M D^H, D = diag(exp(0.3 i k)),
        // whose entries have M's magnitudes (gbtrf pivots alike).
        const auto phase = [](std::size_t k) { return std::polar(kronex::real_t<T>(1), kronex::real_t<T>(0.3) * kronex::real_t<T>(k)); };
        kronex::banded<T> H(n, std::size_t(p), std::size_t(p), bc);
        for (std::size_t i = 0; i < n; ++i)
          for (long d = -p; d <= p; ++d) {
            const std::size_t j = std::size_t((long(i) + d + long(n)) % long(n));
            if (bc == boundary::clamped && (long(i) + d < 0 || long(i) + d >= long(n))) continue;
            H(i, j) = phase(i) * T(M(i, j)) * std::conj(phase(j));
          }
        M = H;
      }
      const auto view = kronex::make_view<T>(M);
      const auto lu = kronex::detail::factorize(view, 0);
      const std::string what = "bspline_mass p=" + std::to_string(p) + " " + kronex::to_string(bc);
      BOOST_TEST(lu.method == "pbtrf", what);
      BOOST_TEST(lu.swaps.empty(), what);
      if (bc == boundary::clamped) {
        const auto e = kronex::detail::estimate_lu(view);
        BOOST_TEST(lu.nnz_lower() == e.nnz_lower, what);
        BOOST_TEST(lu.nnz_upper() == e.nnz_upper, what);
        check_solves(view, dense_of(view), std::size_t(p), std::size_t(p), what);
      } else {
        BOOST_TEST(!lu.order.empty(), what << ": folded");
        check_solves(view, dense_of(view), n - 1, n - 1, what);
      }
    }
  }
  // Symmetric and indefinite (diagonal 0.1, off-diagonals 1): gbtrf pivots, pbtrf fails.
  kronex::banded<T> S(30, 1, 1);
  for (std::size_t i = 0; i < 30; ++i) {
    S(i, i) = T(0.1);
    if (i + 1 < 30) S(i, i + 1) = S(i + 1, i) = T(1);
  }
  const auto indefinite = kronex::detail::factorize(kronex::make_view(S), 0);
  BOOST_TEST(indefinite.method == "gbtrf");
  BOOST_TEST(!indefinite.swaps.empty());
  check_solves(kronex::make_view(S), dense_of(kronex::make_view(S)), 1, 1, "symmetric indefinite");
  // Not Hermitian, pivoting: gbtrf.
  const auto B = kronex_test::band<T>(30, 2, 2, boundary::clamped, true);
  const auto unsymmetric = kronex::detail::factorize(kronex::make_view(B), 0);
  BOOST_TEST(unsymmetric.method == "gbtrf");
  BOOST_TEST(!unsymmetric.swaps.empty());
}

// The fill of a periodic factor decays geometrically away from the wrap; its entries below eps^2
// of their row are dropped, so a periodic mass matrix at n = 256 leaves no subnormal coefficient
// (which would cost a hundred cycles each on every line, float most of all) while its solves
// still match LAPACK's. Entries that are small only because their whole row is (a band matrix
// with rows scaled from 1 down to eps^2 * 1e-6) are kept: a threshold relative to the whole
// factor would drop them and break those rows' solves.
BOOST_AUTO_TEST_CASE_TEMPLATE(negligible_fill_is_dropped, T, value_types) {
  using R = typename kronex::value_traits<T>::real_type;
  const std::size_t n = 256;
  const auto M = kronex::gallery::bspline_mass<T>(n, 3, boundary::periodic);
  const auto view = kronex::make_view<T>(M);
  const auto lu = kronex::detail::factorize(view, 0);
  std::size_t subnormal = 0;
  for (const auto& program : {kronex::detail::solve_program(lu, op::none), kronex::detail::solve_program(lu, op::adjoint)})
    for (const T& c : program.coef)
      subnormal += c != T(0) && std::abs(c) < std::numeric_limits<R>::min() ? 1 : 0;
  BOOST_TEST(subnormal == 0u, subnormal << " subnormal coefficients in the periodic n=256 solve programs");
  xt::xtensor<T, 2> dense = xt::zeros<T>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) dense(i, j) = view(i, j);
  check_solves(view, dense, n - 1, n - 1, "periodic bspline_mass n=256");

  const std::size_t m = 40;
  auto scaled = kronex_test::random_band_matrix<T>(m, 2, 2, boundary::clamped, false);
  const R eps = std::numeric_limits<R>::epsilon(), smallest = eps * eps * R(1e-6);
  for (std::size_t i = 0; i < m; ++i) {
    const R d = std::pow(smallest, R(i) / R(m - 1));
    for (std::size_t j = 0; j < m; ++j) scaled(i, j) *= d;
  }
  const auto scaled_band = kronex_test::to_banded(scaled, 2, 2, boundary::clamped);
  kronex::compile_options any_condition;  // the scaling makes the 1-norm condition number huge
  any_condition.min_rcond = 0;
  check_solves(kronex::make_view(scaled_band), scaled, 2, 2, "rows scaled from 1 to eps^2 * 1e-6", any_condition);
}

// The condition estimate (?lacn2 driving solves with the sparse factors, both the solve and its
// adjoint) against the true 1-norm condition from the dense inverse: the estimate of
// ||A^{-1}||_1 is a lower bound, and within a small factor of it, for clamped, periodic
// (folded above 64) and dense factors, real and complex.
BOOST_AUTO_TEST_CASE_TEMPLATE(condition_estimate_matches_the_dense_inverse, T, value_types) {
  auto norm1_dense = [](const xt::xtensor<T, 2>& m) {
    double best = 0;
    for (std::size_t j = 0; j < m.shape()[1]; ++j) {
      double c = 0;
      for (std::size_t i = 0; i < m.shape()[0]; ++i) c += std::abs(m(i, j));
      best = std::max(best, c);
    }
    return best;
  };
  auto check = [&](const kronex::factor_view<T>& view, const xt::xtensor<T, 2>& a, const std::string& what) {
    using W = kronex_test::wide_t<T>;
    const xt::xtensor<W, 2> inv = xt::linalg::inv(kronex_test::widen(a));
    double inv_norm = 0;
    for (std::size_t j = 0; j < inv.shape()[1]; ++j) {
      double c = 0;
      for (std::size_t i = 0; i < inv.shape()[0]; ++i) c += std::abs(inv(i, j));
      inv_norm = std::max(inv_norm, c);
    }
    const double truth = 1.0 / (norm1_dense(a) * inv_norm);
    const double estimate = kronex::detail::factorize(view, 0).rcond;
    const double slack = 1 + 1e3 * kronex_test::tolerance<T>();
    BOOST_TEST(estimate >= truth / slack, what << ": estimate " << estimate << " < true rcond " << truth);
    BOOST_TEST(estimate <= 10 * truth, what << ": estimate " << estimate << " > 10 x true rcond " << truth);
  };
  for (const auto& s : band_specs()) {
    if (s.n < 2) continue;
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto banded = kronex_test::to_banded(a, s.kl, s.ku, s.bc);
    check(kronex::make_view(banded), a, s.text());
  }
  for (std::size_t n : {2, 5, 21}) {
    const auto a = kronex_test::random_dense_matrix<T>(n, true);
    check(kronex::make_view<T>(a), a, "dense n=" + std::to_string(n));
  }
}

// The one-vector solves the condition estimate runs (A^{-1} x and A^{-H} x with the factors, in
// the factors' order) against dense solves of the same systems.
BOOST_AUTO_TEST_CASE_TEMPLATE(vector_solves_of_the_estimate, T, value_types) {
  for (const auto& s : band_specs()) {
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto banded = kronex_test::to_banded(a, s.kl, s.ku, s.bc);
    const auto lu = kronex::detail::factorize(kronex::make_view(banded), 0);
    const std::size_t n = s.n;
    const xt::xtensor<T, 2> b = factored_matrix(a, lu);
    for (const bool adjoint : {false, true}) {
      std::vector<T> rhs(n);
      for (auto& v : rhs) v = kronex_test::random_value<T>();
      std::vector<T> x = rhs;
      kronex::detail::lu_solve_vector(lu, adjoint, x.data());
      // Residual of op(B) x = rhs, op = identity or conjugate transpose.
      std::vector<T> r(n, T(0));
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j)
          r[i] += (adjoint ? kronex::detail::conj_if_complex(b(j, i)) : b(i, j)) * x[j];
      BOOST_TEST(kronex_test::rel_error(r, rhs) <= kronex_test::tolerance<T>(),
                 s.text() << (adjoint ? " adjoint" : "") << ": residual " << kronex_test::rel_error(r, rhs));
    }
  }
}

// The solve kernel keeps the rows the last operations wrote in registers (window_rows). A row
// written twice in a row must be read at its newest value, even by an operation that names it
// twice: a stale copy left in the window would give row 2 = b2 - (c + d) * (first value of row 1).
BOOST_AUTO_TEST_CASE_TEMPLATE(solve_kernel_reads_the_newest_value_of_a_row_written_twice, T, value_types) {
  constexpr std::size_t W = kronex::detail::strip_width<T>;
  kronex::detail::row_program<T> p;
  p.n = 4;
  const T a = T(0.5), b = T(-1.25), c = T(2), d = T(0.75), s = T(3);
  p.add_update(1, {{0, a}}, false, false, T(1));
  p.add_update(1, {{0, b}}, false, false, T(1));
  p.add_update(2, {{1, c}, {1, d}}, false, false, T(1));
  p.add_update(3, {{2, T(1)}, {1, T(1)}}, false, true, s);  // scaled: row3 = s (row3 - row2 - row1)
  const auto x0 = random_panel<T>(p.n);
  std::vector<T> x = x0;
  kronex::detail::run_solve_program(p, x.data());
  std::vector<T> expected = x0;
  for (std::size_t col = 0; col < W; ++col) {
    auto at = [&](std::size_t i) -> T& { return expected[i * W + col]; };
    at(1) = at(1) - a * at(0);
    at(1) = at(1) - b * at(0);
    at(2) = at(2) - c * at(1) - d * at(1);
    at(3) = s * at(3) - s * at(2) - s * at(1);
  }
  BOOST_TEST(kronex_test::rel_error(x, expected) <= kronex_test::tolerance<T>());
}

// A solve program cut into pieces (row_program::piece) computes the whole program's bits when
// the pieces run in turn: on rows laid out in reverse order (every row relabelled), and with the
// middle piece run on a compact strip of only the rows it touches (gathered before, put back
// after: how a distributed solve runs the operations that read a neighbour's rows). Clamped and
// folded periodic bands, with and without pivoting, N and T, cuts inside band runs and next to
// the ends. Catches a piece that relabels a target, a source or a swap partner wrongly, reorders
// an operation's entries (another sum, other bits), drops a scaling, or takes rows from
// registers (row_op::recent) that no operation before it in the piece wrote.
BOOST_AUTO_TEST_CASE_TEMPLATE(pieces_of_a_program_compute_its_bits, T, value_types) {
  using kronex::detail::index_t;
  constexpr std::size_t V = kronex::detail::strip_width<T>;
  constexpr std::size_t blocks = 3, width = blocks * V;  // whole rows of three blocks
  constexpr index_t unmapped = ~index_t(0);
  kronex::detail::prefetch_stream none;
  std::size_t cases = 0;
  for (const auto& s : band_specs()) {
    if (s.n < 16) continue;
    const auto a = kronex_test::random_band_matrix<T>(s.n, s.kl, s.ku, s.bc, s.pivot);
    const auto lu = kronex::detail::factorize(kronex::make_view(kronex_test::to_banded(a, s.kl, s.ku, s.bc)), 0);
    for (op o : {op::none, op::transpose}) {
      const auto prog = kronex::detail::solve_program(lu, o);
      const std::size_t n = s.n, count = prog.ops.size();
      std::vector<T> rows(n * width);
      for (auto& v : rows) v = kronex_test::random_value<T>();
      std::vector<T> whole = rows;
      kronex::detail::run_solve_rows(prog, 0, count, whole.data(), blocks, width, none);

      for (const std::size_t first_cut : {std::size_t(1), count / 3}) {
        const std::size_t cuts[] = {0, first_cut, std::max(first_cut, 2 * count / 3), count};
        BOOST_TEST_CONTEXT(s.text() << " trans=" << kronex::trans_letter(o) << " cuts at " << cuts[1] << ", " << cuts[2]
                                    << " of " << count) {
          std::vector<index_t> reversed(n);
          for (std::size_t g = 0; g < n; ++g) reversed[g] = index_t(n - 1 - g);
          std::vector<T> pieces(n * width);
          for (std::size_t g = 0; g < n; ++g)
            std::copy_n(rows.data() + g * width, width, pieces.data() + reversed[g] * width);
          for (std::size_t k = 0; k < 3; ++k) {
            if (k != 1) {
              const auto piece = prog.piece(cuts[k], cuts[k + 1], reversed, n);
              BOOST_TEST_REQUIRE(piece.ops.size() == cuts[k + 1] - cuts[k]);
              kronex::detail::run_solve_rows(piece, 0, piece.ops.size(), pieces.data(), blocks, width, none);
              continue;
            }
            // The middle piece on a strip of the rows it touches, in the order it first touches them.
            std::vector<index_t> compact(n, unmapped), touched;
            auto touch = [&](index_t g) {
              if (compact[g] == unmapped) compact[g] = index_t(touched.size()), touched.push_back(g);
            };
            for (std::size_t q = cuts[1]; q < cuts[2]; ++q) {
              touch(prog.ops[q].target);
              if (prog.ops[q].swap) touch(prog.ops[q].other);
              for (index_t e = prog.ops[q].begin; e < prog.ops[q].end; ++e) touch(prog.src[e]);
            }
            const auto piece = prog.piece(cuts[1], cuts[2], compact, touched.size());
            std::vector<T> strip(touched.size() * width);
            for (std::size_t i = 0; i < touched.size(); ++i)
              std::copy_n(pieces.data() + reversed[touched[i]] * width, width, strip.data() + i * width);
            kronex::detail::run_solve_rows(piece, 0, piece.ops.size(), strip.data(), blocks, width, none);
            for (std::size_t i = 0; i < touched.size(); ++i)
              std::copy_n(strip.data() + i * width, width, pieces.data() + reversed[touched[i]] * width);
          }
          std::vector<T> back(n * width);
          for (std::size_t g = 0; g < n; ++g)
            std::copy_n(pieces.data() + reversed[g] * width, width, back.data() + g * width);
          BOOST_TEST(std::memcmp(back.data(), whole.data(), back.size() * sizeof(T)) == 0,
                     "the bits differ; relative difference " << kronex_test::rel_error(back, whole));
          ++cases;
        }
      }
    }
  }
  BOOST_TEST(cases > 100);
}
