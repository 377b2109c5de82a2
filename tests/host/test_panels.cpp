#define BOOST_TEST_MODULE kronex_host_panels
// Panel walks on tensors too large for the dense Kronecker reference: many panels per mode,
// partial panels and strips, each way of gathering lines (contiguous runs, the last-mode
// transpose, element gathers), and fused pairs with grouped slabs. The expected result applies
// each factor's dense inverse along its mode, one LAPACK solve per mode on the moved axis
// (xt::linalg), which shares nothing with the host kernels. Each plan's fused pairs are checked
// against the pairs this file expects, and the result against the same solves run one mode at a
// time (single-step plans, never fused). Each case also runs its plan on the operand cut into
// pieces of other arrays (a gathered tensor, as a distributed exchange within a node hands it
// over), and writes its result into pieces of other arrays (a scattered output, as a distributed
// phase writes its own part of x), which must give the very bits of the plain run.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using last_mode_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

// x = A^{-1} along `mode` of t: move the mode to the front, solve A X = T(n, lines), move back.
template <std::size_t D, class W>
xt::xtensor<W, D> solve_along(const xt::xtensor<W, 2>& a, const xt::xtensor<W, D>& t, std::size_t mode) {
  std::array<std::size_t, D> perm{};
  perm[0] = mode;
  for (std::size_t k = 0, j = 1; k < D; ++k)
    if (k != mode) perm[j++] = k;
  xt::xtensor<W, D> moved = xt::transpose(t, perm);
  const std::size_t n = moved.shape()[0], lines = moved.size() / n;
  xt::xtensor<W, 2> rhs = xt::reshape_view(moved, {n, lines});
  xt::xtensor<W, 2> sol = xt::linalg::solve(a, rhs);
  std::copy(sol.begin(), sol.end(), moved.begin());
  std::array<std::size_t, D> inv{};
  for (std::size_t k = 0; k < D; ++k) inv[perm[k]] = k;
  return xt::transpose(moved, inv);
}

// Factor J of kron(I, .., f[K], .., I): f[K] at mode K, identities (skipped) elsewhere.
template <std::size_t K, std::size_t J, std::size_t D>
auto factor_or_identity(const std::array<kronex::banded<double>, D>& f) {
  if constexpr (J == K) return f[J];
  else return kronex::identity(f[J].size());
}

// y = f[K]^{-1} along mode K of y, with a plan of one step.
template <std::size_t K, std::size_t D, std::size_t... J>
void solve_one_mode(const std::array<kronex::banded<double>, D>& f, xt::xtensor<double, D>& y,
                    std::index_sequence<J...>) {
  kronex::compile_options substitution;  // the same row program as the fused plan's
  substitution.solves = kronex::solve_method::substitution;
  auto solver = kronex::compile(kronex::kron(factor_or_identity<K, J>(f)...).inverse(), y, substitution);
  BOOST_TEST_REQUIRE(solver.plan().steps.size() == 1u);
  solver(y, y);
}

// The solve mode by mode, in the order of the plans' steps (modes 0, 1, ...), without fusion.
template <std::size_t D, std::size_t... K>
xt::xtensor<double, D> solve_unfused(const std::array<kronex::banded<double>, D>& f,
                                     const xt::xtensor<double, D>& b, std::index_sequence<K...>) {
  xt::xtensor<double, D> y = b;
  (solve_one_mode<K>(f, y, std::make_index_sequence<D>{}), ...);
  return y;
}

// The host plan of d writing its result into pieces of other arrays (a scattered output, as a
// distributed phase writes its own part of x: the cells of kronex_test::scatter, 1 and 3 cuts per
// axis, the home another array), from b and from b in pieces, with and without streaming
// stores: read back through the same pieces, the very bits x of the plain run. A plan whose last
// step does not run in panels (GEMMs, a row sweep) refuses with kronex::error.
template <class T>
void check_scattered(const kronex::operator_desc<T>& d, const kronex::shape_t& shape, const T* b,
                     const std::vector<T>& x, const std::string& what) {
  std::vector<T> y(x.size()), home(x.size());
  for (const bool streamed : {false, true}) {
    std::optional<kronex_test::streaming_threshold> every_output;
    if (streamed) every_output.emplace("0");
    kronex::detail::host_plan<T> plan(d, shape);
    for (const std::size_t cuts : {1, 3}) {
      const auto operand = kronex_test::scatter(b, shape, cuts);
      auto result = kronex_test::scatter(y.data(), shape, cuts);
      kronex::detail::scattered_output<T> out(shape, result.cuts);
      for (std::size_t a = 0; a < result.arrays.size(); ++a)
        out.set_cell(result.cell[a], result.arrays[a].data(), result.strides[a], result.first[a]);
      out.set_home(home.data());
      if (!plan.scatters_output()) {
        BOOST_CHECK_THROW(plan.run(b, out), kronex::error);
        return;
      }
      for (const bool gathered : {false, true}) {
        for (auto& a : result.arrays) std::fill(a.begin(), a.end(), T(3));
        std::fill(home.begin(), home.end(), T(5));
        if (gathered) plan.run(*operand.tensor, out);
        else plan.run(b, out);
        result.tensor->read(0, y.size(), y.data());
        BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0,
                   what << ": x in pieces (" << cuts << " cuts per axis" << (gathered ? ", b in pieces" : "")
                        << (streamed ? ", streamed" : "") << ") against x");
      }
    }
  }
}

// The host plan of `op` with these options reading b in pieces of other arrays (as an exchange
// within a node hands a distributed phase its operand: kronex_test::scatter, 1 and 3 cuts per
// axis): the same bits as from b itself, whichever walk, pair, sweep or transpose reads it; and
// writing its result in pieces (check_scattered).
template <class Op, class T, std::size_t D>
void check_gathered(const Op& op, const xt::xtensor<T, D>& b, const kronex::compile_options& options,
                    const std::string& what) {
  kronex::operator_desc<T> d = op.template describe<T>();
  d.options = options;
  const kronex::shape_t shape(b.shape().begin(), b.shape().end());
  kronex::detail::host_plan<T> plan(d, shape);
  std::vector<T> x(b.size()), y(b.size());
  plan.run(b.data(), x.data());
  for (const std::size_t cuts : {1, 3}) {
    const auto pieces = kronex_test::scatter(b.data(), shape, cuts);
    std::fill(y.begin(), y.end(), T(3));
    plan.run(*pieces.tensor, y.data());
    BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0,
               what << ": b in pieces (" << cuts << " cuts per axis) against b");
  }
  check_scattered(d, shape, b.data(), x, what);
}

// `fused`: per step, whether the plan must fuse it with the next.
template <std::size_t D>
void check_solve(const std::array<kronex::banded<double>, D>& f, const std::array<std::size_t, D>& shape,
                 const std::string& what, const std::array<bool, D>& fused) {
  const auto b = kronex_test::random_tensor<double>(shape);
  xt::xtensor<double, D> expected = b;
  for (std::size_t k = 0; k < D; ++k)
    expected = solve_along<D>(kronex::reference::dense(kronex::make_view(f[k])), expected, k);
  auto K = std::apply([](const auto&... a) { return kronex::kron(a...); }, f);
  xt::xtensor<double, D> x = K.solve(b);
  BOOST_TEST(kronex_test::rel_error(x, expected) <= 1e-12, what << ": out of place, error " << kronex_test::rel_error(x, expected));
  kronex::compile_options substitution;  // panels and fusion are the substitution's
  substitution.solves = kronex::solve_method::substitution;
  auto solver = kronex::compile(K.inverse(), b, substitution);
  xt::xtensor<double, D> y = b;
  solver(y, y);
  BOOST_TEST(kronex_test::rel_error(y, expected) <= 1e-12, what << ": in place, error " << kronex_test::rel_error(y, expected));
  BOOST_TEST_MESSAGE(what << "\n" << solver);
  check_gathered(K.inverse(), b, substitution, what);
  check_gathered(K.inverse(), b, {}, what + " (automatic methods)");

  const auto& steps = solver.plan().steps;
  BOOST_TEST_REQUIRE(steps.size() == D);
  for (std::size_t s = 0; s < D; ++s) {
    BOOST_TEST(kronex::step_info(steps[s]).mode == s, what << ": step " << s);
    BOOST_TEST(kronex::fused_with_next(steps[s]) == fused[s], what << ": step " << s << " fused_with_next");
  }
  // Fused or not, each line goes through the same row program: equal up to rounding (bit for bit
  // with the kernels of this writing).
  const auto unfused = solve_unfused<D>(f, b, std::make_index_sequence<D>{});
  BOOST_TEST(kronex_test::rel_error(y, unfused) <= 1e-14,
             what << ": in place against mode by mode, error " << kronex_test::rel_error(y, unfused));
  BOOST_TEST(kronex_test::rel_error(x, unfused) <= 1e-14,
             what << ": out of place against mode by mode, error " << kronex_test::rel_error(x, unfused));
}

// Diagonal 0.05 under sub-diagonals of 1 and 0.3: partial pivoting swaps rows at every step.
kronex::banded<double> pivoting_band(std::size_t n) {
  kronex::banded<double> a(n, 2, 1);
  for (std::size_t i = 0; i < n; ++i) {
    a(i, i) = 0.05 + 0.01 * double(i % 3);
    if (i + 1 < n) a(i, i + 1) = 0.7;
    if (i >= 1) a(i, i - 1) = 1.0;
    if (i >= 2) a(i, i - 2) = 0.3;
  }
  return a;
}

kronex::banded<double> eye(std::size_t n) {
  kronex::banded<double> a(n, 0, 0);
  for (std::size_t i = 0; i < n; ++i) a(i, i) = 1.0;
  return a;
}

} // namespace

// Mode 0 with a long trailing size (contiguous runs, more lines than one panel holds: n = 3
// gives 64 strips of 16 per panel, 1024 lines, and 1488 lines here: 93 strips, a full panel and
// a partial one). Mode 0 has one slab (L = 1), so nothing is fused.
BOOST_AUTO_TEST_CASE(many_panels_contiguous_runs) {
  check_solve<2>({kronex::gallery::bspline_mass<double>(3, 2), eye(1488)}, {3, 1488}, "(3,1488) mode 0, R % 16 == 0",
                 {false, false});
  check_solve<2>({kronex::gallery::bspline_mass<double>(5, 3, boundary::clamped), eye(1100)}, {5, 1100},
                 "(5,1100) mode 0, R % 16 != 0: element gathers", {false, false});
}

// A long mode (n = 600: a strip is 75 KiB, fewer than 4 fit in 256 KiB) takes panels of 13
// strips (up to 1 MiB): 208 lines, so 300 lines make a full panel and a partial one whose last
// strip is partial too.
BOOST_AUTO_TEST_CASE(long_mode_wide_panels) {
  check_solve<2>({kronex::gallery::bspline_mass<double>(600, 3, boundary::periodic), eye(300)}, {600, 300},
                 "(600,300) mode 0, panels of 13 strips", {false, false});
}

// A panel whose lines span several indices l (R = 5 < the panel's 32 lines): each row of the
// row-major panel is copied as runs of 5, one per l. Mode 1 is followed by a diagonal (a scale
// step), so it is not fused. A solve and an apply (the apply's output panel has the same
// layout), real and complex, against the dense reference.
BOOST_AUTO_TEST_CASE(panels_spanning_several_slabs) {
  auto check = [](auto zero) {
    using T = decltype(zero);
    const auto M0 = kronex::gallery::bspline_mass<T>(6, 2);
    const auto M1 = kronex::gallery::bspline_mass<T>(7, 3, boundary::periodic);
    const auto d = kronex::diagonal(std::vector<T>{T(1), T(2), T(3), T(4), T(5)});
    const std::array<std::size_t, 3> shape{6, 7, 5};
    const auto K = kronex::kron(M0, M1, d);
    const auto b = kronex_test::random_tensor<T>(shape);
    kronex::compile_options substitution;
    substitution.solves = kronex::solve_method::substitution;
    auto solver = kronex::compile(K.inverse(), b, substitution);
    BOOST_TEST_REQUIRE(solver.plan().steps.size() == 3u);
    BOOST_TEST(!kronex::fused_with_next(solver.plan().steps[1]));
    BOOST_TEST(kronex_test::rel_error(solver(b), kronex::reference::solve(K, b)) <= 1e-12);
    xt::xtensor<T, 3> x = b;
    solver(x, x);
    BOOST_TEST(kronex_test::rel_error(x, kronex::reference::solve(K, b)) <= 1e-12);
    auto op = kronex::compile(K, b);
    BOOST_TEST(kronex_test::rel_error(op(b), kronex::reference::apply(K, b)) <= 1e-12);
    check_gathered(K.inverse(), b, substitution, "(6,7,5) solve");
    check_gathered(K, b, {}, "(6,7,5) apply");
  };
  check(0.0);
  check(std::complex<double>(0));
}

// Last-mode transposes through register blocks (W x W: W = 8 for float, 4 for double and
// complex<float>, 2 for complex<double>): n = 37 is four blocks of 8 (nine of 4, eighteen of 2)
// and an edge of 5 (1, 1); n = 70 spans a second 256-byte block of each line (a fifth in
// complex<double>); 45 lines fill one strip of 32 (16, 8) and leave a partial one whose lines
// split into blocks and an edge. A solve and an apply against the dense reference, line by line
// (the reference of I ⊗ M on a whole tensor would be a 3150 x 3150 dense solve).
BOOST_AUTO_TEST_CASE_TEMPLATE(last_mode_register_transposes, T, last_mode_types) {
  for (const std::size_t n : {std::size_t(37), std::size_t(70)}) {
    const auto M = kronex::gallery::bspline_mass<T>(n, 3, boundary::periodic);
    const std::array<std::size_t, 2> shape{45, n};
    const auto K = kronex::kron(kronex::identity(45), M);
    const auto b = kronex_test::random_tensor<T>(shape);
    xt::xtensor<T, 2> solved = b, applied = b;
    for (std::size_t line = 0; line < shape[0]; ++line) {
      const xt::xtensor<T, 1> b_line = xt::view(b, line, xt::all());
      xt::view(solved, line, xt::all()) = kronex::reference::solve(kronex::kron(M), b_line);
      xt::view(applied, line, xt::all()) = kronex::reference::apply(kronex::kron(M), b_line);
    }
    const double tol = kronex_test::tolerance<T>();
    kronex::compile_options substitution;
    substitution.solves = kronex::solve_method::substitution;
    auto solver = kronex::compile(K.inverse(), b, substitution);
    BOOST_TEST(kronex_test::rel_error(solver(b), solved) <= tol, "n = " << n);
    auto op = kronex::compile(K, b);
    BOOST_TEST(kronex_test::rel_error(op(b), applied) <= tol, "n = " << n);
    check_gathered(K.inverse(), b, substitution, "last mode, n = " + std::to_string(n));
    check_gathered(K, b, {}, "last mode apply, n = " + std::to_string(n));
  }
}

// The last mode: lines are contiguous, the gather is a transpose; a partial last strip.
BOOST_AUTO_TEST_CASE(many_panels_last_mode) {
  check_solve<2>({eye(1201), kronex::gallery::bspline_mass<double>(7, 3, boundary::periodic)}, {1201, 7},
                 "(1201,7) last mode, periodic", {false, false});
}

// Fused pairs (modes 1 and 2, L > 1; never mode 0, whose L is 1) with many slabs per group and a
// partial last group, plus slabs too large to group more than one at a time (over the 512 KiB
// of a group: one slab each), and one slab over the 1 MiB limit, which stays unfused.
BOOST_AUTO_TEST_CASE(fused_pairs_grouped_slabs) {
  check_solve<3>({kronex::gallery::bspline_mass<double>(9, 3), kronex::gallery::bspline_mass<double>(20, 3),
                  kronex::gallery::bspline_mass<double>(4, 1)},
                 {9, 20, 4}, "(9,20,4): small slabs, one group", {false, true, false});
  check_solve<3>({eye(700), kronex::gallery::bspline_mass<double>(8, 2, boundary::periodic),
                  kronex::gallery::bspline_mass<double>(5, 2, boundary::periodic)},
                 {700, 8, 5}, "(700,8,5): groups of 1638 slabs cover 700 at once", {false, true, false});
  check_solve<3>({kronex::gallery::bspline_mass<double>(3, 2), kronex::gallery::bspline_mass<double>(200, 3),
                  kronex::gallery::bspline_mass<double>(330, 3, boundary::periodic)},
                 {3, 200, 330}, "(3,200,330): slabs of 516 KiB, one per group", {false, true, false});
  check_solve<3>({kronex::gallery::bspline_mass<double>(3, 2), kronex::gallery::bspline_mass<double>(200, 3),
                  kronex::gallery::bspline_mass<double>(660, 3, boundary::periodic)},
                 {3, 200, 660}, "(3,200,660): slab of 1031 KiB, not fused", {false, false, false});
  check_solve<3>({kronex::gallery::bspline_mass<double>(5, 2), kronex::gallery::bspline_mass<double>(160, 3),
                  kronex::gallery::bspline_mass<double>(160, 3, boundary::periodic)},
                 {5, 160, 160}, "(5,160,160): 200 KiB slabs, groups of 2, partial last group", {false, true, false});
  // The pair's first step runs on the group in cache, 16 columns of a slab at a time: R = 37 is
  // two such blocks and a 5-column tail; the band pivots (row swaps between rows 37 apart).
  check_solve<3>({kronex::gallery::bspline_mass<double>(4, 2), pivoting_band(24),
                  kronex::gallery::bspline_mass<double>(37, 3, boundary::periodic)},
                 {4, 24, 37}, "(4,24,37): column blocks, a tail, swaps", {false, true, false});
}

// A fused pair's first step runs in place on the tensor's rows; its column blocks start on a
// cache line, and the columns before the first line go with the tail through a padded strip.
// The same tensor at each offset of a double in a cache line (R = 40: 5 lines a row) must solve
// the same, so every split between head, blocks and tail is checked.
BOOST_AUTO_TEST_CASE(fused_pair_in_place_at_every_offset_in_a_cache_line) {
  const std::array<kronex::banded<double>, 3> f{kronex::gallery::bspline_mass<double>(4, 2), pivoting_band(24),
                                                 kronex::gallery::bspline_mass<double>(40, 3, boundary::periodic)};
  const std::array<std::size_t, 3> shape{4, 24, 40};
  const auto b = kronex_test::random_tensor<double>(shape);
  xt::xtensor<double, 3> expected = b;
  for (std::size_t k = 0; k < 3; ++k)
    expected = solve_along<3>(kronex::reference::dense(kronex::make_view(f[k])), expected, k);
  kronex::compile_options substitution;
  substitution.solves = kronex::solve_method::substitution;
  auto solver = kronex::compile(kronex::kron(f[0], f[1], f[2]).inverse(), b, substitution);
  BOOST_TEST_REQUIRE(kronex::fused_with_next(solver.plan().steps[1]));
  std::vector<double> buffer(b.size() + 16);
  const std::size_t first = (64 - reinterpret_cast<std::uintptr_t>(buffer.data()) % 64) % 64 / sizeof(double);
  for (std::size_t offset = 0; offset < 8; ++offset) {
    double* x = buffer.data() + first + offset;
    std::copy(b.begin(), b.end(), x);
    solver.run(x, x);
    const auto y = xt::adapt(x, b.size(), xt::no_ownership(), shape);
    BOOST_TEST(kronex_test::rel_error(y, expected) <= 1e-12,
               "offset " << offset << " doubles past a cache line: error " << kronex_test::rel_error(y, expected));
  }
}

// Row sweeps (row_sweep.hpp): a first-mode substitution (L = 1) on the tensor's rows in place,
// with the last mode interleaved, for tensors of at least 8 MiB on one thread. Against each
// factor's dense solve along its mode (in double precision for float types): the last mode
// solved in blocks of rows before the first operation that touches them, pieces of band runs
// (one front, two fronts split at either front), the general kernel (swaps; complex entries), a
// partial last block of rows, tail columns (R % V != 0) and, when every row starts at the same
// offset in a cache line, head columns at each offset (the blocks start on a line), through a
// strip.
namespace {

// 0.5 I plus the skew-symmetric tridiagonal (1 below, -1 above): normal, singular values in
// [0.5, 2.5] at any size, and partial pivoting swaps rows (|1| > |0.5| under the diagonal).
kronex::banded<double> skew_band(std::size_t n) {
  kronex::banded<double> a(n, 1, 1);
  for (std::size_t i = 0; i < n; ++i) {
    a(i, i) = 0.5;
    if (i >= 1) a(i, i - 1) = 1.0;
    if (i + 1 < n) a(i, i + 1) = -1.0;
  }
  return a;
}

template <class T>
kronex::banded<T> complex_band(std::size_t n) {
  kronex::banded<T> a(n, 2, 2);
  for (std::size_t i = 0; i < n; ++i)
    for (long d = -2; d <= 2; ++d) {
      const long j = long(i) + d;
      if (j >= 0 && j < long(n)) a(i, std::size_t(j)) = d == 0 ? T(4, 1) : T(0.5, 0.25 * double(d));
    }
  return a;
}

// kron(f0, f1), or kron(f0, identity(middle), f1) for a 3D shape: step 0 (mode 0) must be
// interleaved with step 1 (the last mode). `offsets`: the in-place runs, each at that many values
// past a cache line.
template <class T, std::size_t D, class F0, class F1>
void check_row_sweep(const F0& f0, const F1& f1, const std::array<std::size_t, D>& shape, const std::string& what,
                     std::size_t offsets) {
  using W = kronex_test::wide_t<T>;
  const auto K = [&] {
    if constexpr (D == 2) return kronex::kron(f0, f1);
    else return kronex::kron(f0, kronex::identity(shape[1]), f1);
  }();
  const auto b = kronex_test::random_tensor<T>(shape);
  const xt::xtensor<W, 2> a0 = xt::cast<W>(kronex::reference::dense(kronex::make_view(f0)));
  const xt::xtensor<W, 2> a1 = xt::cast<W>(kronex::reference::dense(kronex::make_view(f1)));
  const xt::xtensor<W, D> expected = solve_along<D>(a1, solve_along<D>(a0, xt::xtensor<W, D>(xt::cast<W>(b)), 0), D - 1);
  kronex::compile_options one;
  one.threads = 1;
  one.solves = kronex::solve_method::substitution;
  auto solver = kronex::compile(K.inverse(), b, one);
  BOOST_TEST_MESSAGE(what << "\n" << solver);
  const auto& steps = solver.plan().steps;
  BOOST_TEST_REQUIRE(steps.size() == 2u, what);
  BOOST_TEST_REQUIRE(kronex::interleaved_with_next(steps[0]), what << ": step 0 interleaved");
  BOOST_TEST(!kronex::interleaved_with_next(steps[1]), what);
  check_gathered(K.inverse(), b, one, what);
  const double tol = kronex_test::tolerance<T>();
  const auto error_of = [&](const auto& x) { return kronex_test::rel_error(xt::xtensor<W, D>(xt::cast<W>(x)), expected); };
  const double out_of_place = error_of(solver(b));
  BOOST_TEST(out_of_place <= tol, what << ": out of place, error " << out_of_place);
  std::vector<T> buffer(b.size() + 2 * 64 / sizeof(T));  // a line to reach one, a line of offsets
  const std::size_t first = (64 - reinterpret_cast<std::uintptr_t>(buffer.data()) % 64) % 64 / sizeof(T);
  for (std::size_t offset = 0; offset < offsets; ++offset) {
    T* x = buffer.data() + first + offset;
    std::copy(b.begin(), b.end(), x);
    solver.run(x, x);
    const double error = error_of(xt::adapt(x, b.size(), xt::no_ownership(), shape));
    BOOST_TEST(error <= tol, what << ": in place " << offset << " values past a cache line, error " << error);
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(row_sweeps) {
  using kronex::gallery::bspline_mass;
  using cd = std::complex<double>;
  using cf = std::complex<float>;
  // 1030 rows: 64 blocks of 16 and a partial one; R = 1026: 64 blocks of 16 columns and 2 after.
  check_row_sweep<double, 2>(bspline_mass<double>(1030, 3), bspline_mass<double>(1026, 3), {1030, 1026},
                             "(1030,1026) clamped, tail columns", 1);
  // Swaps (the general kernel) on mode 0; rows of 1024 values, so each offset gives another head.
  check_row_sweep<double, 2>(skew_band(1030), bspline_mass<double>(1024, 3, boundary::periodic), {1030, 1024},
                             "(1030,1024) swaps, head columns", 8);
  check_row_sweep<double, 2>(bspline_mass<double>(1027, 3, boundary::periodic),
                             bspline_mass<double>(1024, 2, boundary::periodic), {1027, 1024},
                             "(1027,1024) folded periodic: two fronts", 2);
  check_row_sweep<float, 2>(bspline_mass<float>(1450, 3, boundary::periodic), bspline_mass<float>(1450, 3),
                            {1450, 1450}, "(1450,1450) float", 1);
  check_row_sweep<cd, 2>(bspline_mass<cd>(730, 3), bspline_mass<cd>(736, 3, boundary::periodic), {730, 736},
                         "(730,736) complex values, real entries", 4);
  check_row_sweep<cd, 2>(complex_band<cd>(730), bspline_mass<cd>(736, 3), {730, 736},
                         "(730,736) complex entries", 1);
  check_row_sweep<cf, 2>(bspline_mass<cf>(1030, 3, boundary::periodic), bspline_mass<cf>(1024, 3), {1030, 1024},
                         "(1030,1024) complex<float>", 2);
  // Rows of 40 lines of the last mode: blocks of one row.
  check_row_sweep<double, 3>(bspline_mass<double>(202, 3), bspline_mass<double>(130, 3, boundary::periodic),
                             {202, 40, 130}, "(202,40,130) identity between", 2);
}

// When the panel walks stay: more than one thread, a tensor under 8 MiB, rows over an eighth of
// a core's L2 (64 to 256 KiB; row_sweep_max_row_bytes), and a last mode that is not the step
// after mode 0.
BOOST_AUTO_TEST_CASE(row_sweeps_only_where_they_pay) {
  using kronex::gallery::bspline_mass;
  const auto interleaved = [](const auto& K, std::array<std::size_t, 2> shape, std::size_t threads) {
    kronex::compile_options o;
    o.threads = threads;
    o.solves = kronex::solve_method::substitution;
    const auto plan = kronex::explain_plan(K.inverse(), shape, o);
    BOOST_TEST_REQUIRE(plan.steps.size() == 2u);
    return kronex::interleaved_with_next(plan.steps[0]);
  };
  const auto M = [](std::size_t n) { return bspline_mass<double>(n, 3); };
  BOOST_TEST(interleaved(kronex::kron(M(1024), M(1024)), {1024, 1024}, 1));       // 8 MiB
  BOOST_TEST(!interleaved(kronex::kron(M(1024), M(1024)), {1024, 1024}, 2));      // two threads
  BOOST_TEST(!interleaved(kronex::kron(M(1023), M(1024)), {1023, 1024}, 1));      // under 8 MiB
  BOOST_TEST(interleaved(kronex::kron(M(130), M(8192)), {130, 8192}, 1));         // rows of 64 KiB
  const std::size_t most = kronex::detail::row_sweep_max_row_bytes() / sizeof(double);
  BOOST_TEST_MESSAGE("rows swept up to " << most << " doubles (L2 " << kronex::detail::level2_cache_bytes() << " bytes)");
  BOOST_TEST(most * sizeof(double) >= std::min(kronex::detail::level2_cache_bytes() / 8, std::size_t(256) << 10));
  BOOST_TEST(most * sizeof(double) <= std::size_t(256) << 10);
  BOOST_TEST(interleaved(kronex::kron(M(130), M(most)), {130, most}, 1));         // rows at the limit
  BOOST_TEST(!interleaved(kronex::kron(M(130), M(most + 8)), {130, most + 8}, 1));  // rows over it
  kronex::compile_options o;
  o.threads = 1;
  o.solves = kronex::solve_method::substitution;
  const auto plan = kronex::explain_plan(kronex::kron(M(100), M(40), M(300)).inverse(), std::array<std::size_t, 3>{100, 40, 300}, o);
  for (const auto& st : plan.steps) BOOST_TEST(!kronex::interleaved_with_next(st));  // mode 0 then mode 1
}
