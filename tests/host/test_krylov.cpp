// Krylov solvers on host operands (kronex/krylov, kronex/operators) against dense solves of the
// same matrices (xt::linalg::solve on the matrix the test assembled itself): every method with
// and without a preconditioner (a Kronecker product inverse, a Kronecker sum inverse by fast
// diagonalisation, a matrix_free), float, double and complex<double>; a 3D variable-coefficient
// operator that is not a Kronecker product; the convergence criterion (rtol, atol, max_iterations,
// check_every, history), b = 0, the initial guess, breakdowns and non-finite values, exact
// termination between checks, compile_krylov reused for several right-hand sides; the sparse
// operator's constructors, Matrix Market input and every error.
#define BOOST_TEST_MODULE test_krylov
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>
#include <xtensor/xview.hpp>

#include "kronex_krylov_test_support.hpp"

namespace {

using kronex::krylov_method;
using kronex::krylov_status;
using kronex_test::rel_error;
constexpr krylov_method methods[] = {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres,
                                     krylov_method::minres};

// The assembled operators, their dense oracle and the test problems.
using namespace kronex_krylov_test;

template <class T = double>
kronex::krylov_options<kronex::real_t<T>> options(double rtol) {
  kronex::krylov_options<kronex::real_t<T>> o;
  o.rtol = kronex::real_t<T>(rtol);
  o.history = true;
  return o;
}

// One solve through compile_krylov from x = 0, with or without a preconditioner.
template <class A, class P, class T, std::size_t D, class R>
kronex::krylov_result run(krylov_method m, const A& a, const P* p, const xt::xtensor<T, D>& b, xt::xtensor<T, D>& x,
                          const kronex::krylov_options<R>& o) {
  x = xt::zeros<T>(b.shape());
  if (p) {
    auto s = kronex::compile_krylov(m, a, *p, b, o);
    return s(b, x);
  }
  auto s = kronex::compile_krylov(m, a, b, o);
  return s(b, x);
}

// Converged, its own claim consistent (the true residual recomputed at exit is within a
// rounding margin of the tolerance), and within `tol` of the dense solution.
template <class T, std::size_t D, class W>
void expect_solution(const kronex::krylov_result& r, const xt::xtensor<T, D>& x, const xt::xtensor<W, D>& ref,
                     double rtol, double tol, const std::string& what) {
  BOOST_TEST_CONTEXT(what << ": " << r.message) {
    BOOST_TEST(r.converged);
    BOOST_TEST(r.status == krylov_status::converged);
    BOOST_TEST(r.relative_residual <= 10 * rtol);
    BOOST_TEST(rel_error(kronex_test::widen(x), ref) < tol);
    BOOST_TEST(r.history.size() == r.iterations + 1);
  }
}

// ---- Every method, with and without preconditioners, on the 3D variable-coefficient problems ----

BOOST_AUTO_TEST_CASE(every_method_on_the_3d_variable_coefficient_operators) {
  const problem3d& pb = problem();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto A_mass = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.mass_entries);
  const auto A_lap = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto ref_mass = dense_solve(dense_of(pb.N, pb.mass_entries), b);
  const auto ref_lap = dense_solve(dense_of(pb.N, pb.laplacian_entries), b);
  const auto P_kron = pb.mass_preconditioner();   // Kronecker product inverse
  const auto L = pb.laplacian_sum();
  const auto P_sum = L.inverse();                   // Kronecker sum inverse (fast diagonalisation)
  const auto opt = options(1e-10);
  for (krylov_method m : methods) {
    const std::string name = kronex::to_string(m);
    xt::xtensor<double, 3> x;
    const auto plain_mass = run(m, A_mass, static_cast<const decltype(P_kron)*>(nullptr), b, x, opt);
    expect_solution(plain_mass, x, ref_mass, 1e-10, 1e-8, name + " mass, no preconditioner");
    const auto pre_mass = run(m, A_mass, &P_kron, b, x, opt);
    expect_solution(pre_mass, x, ref_mass, 1e-10, 1e-8, name + " mass, kron(M, M, M).inverse()");
    BOOST_TEST(pre_mass.iterations < plain_mass.iterations, name << ": " << pre_mass.iterations << " < " << plain_mass.iterations);

    const auto plain_lap = run(m, A_lap, static_cast<const decltype(P_sum)*>(nullptr), b, x, opt);
    expect_solution(plain_lap, x, ref_lap, 1e-10, 1e-8, name + " laplacian, no preconditioner");
    const auto pre_lap = run(m, A_lap, &P_sum, b, x, opt);
    expect_solution(pre_lap, x, ref_lap, 1e-10, 1e-8, name + " laplacian, sum inverse");
    BOOST_TEST(pre_lap.iterations < plain_lap.iterations, name << ": " << pre_lap.iterations << " < " << plain_lap.iterations);
    BOOST_TEST_MESSAGE(name << " iterations: mass " << plain_mass.iterations << " -> " << pre_mass.iterations
                            << ", laplacian " << plain_lap.iterations << " -> " << pre_lap.iterations);
  }
}

BOOST_AUTO_TEST_CASE(an_exact_kronecker_preconditioner_converges_in_one_iteration) {
  // A = M0⊗M1⊗M2 assembled by the test in C order, P = kron(M0, M1, M2).inverse(): P A = I
  // only if the sparse operator and the Kronecker plan flatten the tensor the same way.
  const problem3d& pb = problem();
  entries<double> e;
  add_kron(e, 1.0, {kronex_test::to_dense(pb.M0), kronex_test::to_dense(pb.M1), kronex_test::to_dense(pb.M2)});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), e);
  const auto P = pb.mass_preconditioner();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  for (krylov_method m : methods) {
    xt::xtensor<double, 3> x;
    const auto r = run(m, A, &P, b, x, options(1e-10));
    BOOST_TEST(r.converged, r.message);
    BOOST_TEST(r.iterations == 1u, r.message);
  }
}

BOOST_AUTO_TEST_CASE(one_shot_functions_with_every_operator_kind) {
  const problem3d& pb = problem();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto ref = dense_solve(dense_of(pb.N, pb.laplacian_entries), b);
  const auto L = pb.laplacian_sum();
  // The operator as a matrix_free (the sparse product behind a function), the preconditioner
  // as a matrix_free too (Jacobi: the diagonal's inverse) and as a sparse_operator (the same).
  const kronex::matrix_free<double> A_free(pb.shape(), [&A](const double* x, double* y) { A.run(x, y); });
  std::vector<double> inv(pb.N, 0.0);
  for (const auto& e : pb.laplacian_entries)
    if (e.row == e.col) inv[e.row] += e.value;
  for (double& v : inv) v = 1.0 / v;
  const kronex::matrix_free<double> jacobi(pb.shape(), [&inv](const double* x, double* y) {
    for (std::size_t i = 0; i < inv.size(); ++i) y[i] = inv[i] * x[i];
  });
  entries<double> inv_diag;
  for (std::size_t i = 0; i < pb.N; ++i) inv_diag.push_back({i, i, inv[i]});
  const auto jacobi_sparse = kronex::sparse_operator<double>::from_entries(pb.shape(), inv_diag);
  const auto opt = options(1e-10);

  xt::xtensor<double, 3> x = xt::zeros<double>(b.shape());
  expect_solution(kronex::cg(A_free, b, x, opt), x, ref, 1e-10, 1e-8, "cg, matrix_free operator");
  x.fill(0);
  const auto rj = kronex::cg(A, b, x, jacobi, opt);
  expect_solution(rj, x, ref, 1e-10, 1e-8, "cg, matrix_free Jacobi");
  xt::xtensor<double, 3> xs = xt::zeros<double>(b.shape());
  const auto rs = kronex::cg(A, b, xs, jacobi_sparse, opt);
  BOOST_TEST(rs.iterations == rj.iterations);  // the same arithmetic: the same iterates
  BOOST_TEST(xt::all(xt::equal(xs, x)));
  x.fill(0);
  expect_solution(kronex::bicgstab(A, b, x, L.inverse(), opt), x, ref, 1e-10, 1e-8, "bicgstab, sum inverse");
  x.fill(0);
  expect_solution(kronex::gmres(A, b, x, L.inverse(), opt), x, ref, 1e-10, 1e-8, "gmres, sum inverse");
  x.fill(0);
  expect_solution(kronex::minres(A, b, x, L.inverse(), opt), x, ref, 1e-10, 1e-8, "minres, sum inverse");
  // A Kronecker expression as the operator itself (the sum, applied through its plan).
  x.fill(0);
  const auto rl = kronex::cg(L, b, x, opt);
  BOOST_TEST(rl.converged, rl.message);
  xt::xtensor<double, 3> back = L.apply(x);
  BOOST_TEST(rel_error(back, b) < 1e-9);
  // Defaults: rtol = 1e-5, no preconditioner.
  x.fill(0);
  const auto rd = kronex::gmres(A, b, x);
  BOOST_TEST(rd.converged, rd.message);
  BOOST_TEST(rd.relative_residual < 1e-4);
  BOOST_TEST(rd.relative_residual > 1e-10);  // stopped near 1e-5, not at full accuracy
}

BOOST_AUTO_TEST_CASE(nonsymmetric_operator_bicgstab_and_gmres) {
  // The Laplacian plus a convection term c (S⊗M⊗M), S skew-symmetric: not symmetric.
  const problem3d& pb = problem();
  mat<double> S = xt::zeros<double>({pb.n0, pb.n0});
  for (std::size_t i = 0; i + 1 < pb.n0; ++i) S(i, i + 1) = 1.0, S(i + 1, i) = -1.0;
  entries<double> e = pb.laplacian_entries;
  add_kron(e, 3.0, {S, kronex_test::to_dense(pb.M1), kronex_test::to_dense(pb.M2)});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), e);
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto ref = dense_solve(dense_of(pb.N, e), b);
  const auto P = pb.laplacian_sum().inverse();
  auto opt = options(1e-10);
  xt::xtensor<double, 3> x;
  expect_solution(run(krylov_method::bicgstab, A, &P, b, x, opt), x, ref, 1e-10, 1e-8, "bicgstab");
  expect_solution(run(krylov_method::gmres, A, &P, b, x, opt), x, ref, 1e-10, 1e-8, "gmres(20)");
  opt.restart = 3;  // several restarts: each recomputes the true residual
  const auto r3 = run(krylov_method::gmres, A, &P, b, x, opt);
  expect_solution(r3, x, ref, 1e-10, 1e-8, "gmres(3)");
  BOOST_TEST(r3.iterations > 3u);
}

BOOST_AUTO_TEST_CASE(symmetric_indefinite_minres_converges_and_cg_breaks_down) {
  // The Laplacian minus a shift between two eigenvalues of its dense matrix: indefinite.
  const problem3d& pb = problem();
  const mat<double> dense = dense_of(pb.N, pb.laplacian_entries);
  xt::xtensor<double, 1> ev = xt::linalg::eigvalsh(dense);
  std::sort(ev.begin(), ev.end());
  const std::size_t mid = pb.N / 3;
  const double shift = 0.5 * (ev(mid) + ev(mid + 1));
  entries<double> e = pb.laplacian_entries;
  for (std::size_t i = 0; i < pb.N; ++i) e.push_back({i, i, -shift});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), e);
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto ref = dense_solve(dense_of(pb.N, e), b);
  const auto P = pb.laplacian_sum().inverse();  // SPD, as MINRES needs
  const auto opt = options(1e-10);
  xt::xtensor<double, 3> x;
  expect_solution(run(krylov_method::minres, A, &P, b, x, opt), x, ref, 1e-10, 1e-8, "minres, preconditioned");
  expect_solution(run(krylov_method::minres, A, static_cast<const decltype(P)*>(nullptr), b, x, opt), x, ref, 1e-10,
                  1e-8, "minres");
  // CG on the same operator: p^H A p <= 0 at some iteration, reported, never NaN.
  const auto r = run(krylov_method::cg, A, static_cast<const decltype(P)*>(nullptr), b, x, opt);
  BOOST_TEST(!r.converged);
  BOOST_TEST(r.status == krylov_status::indefinite_operator);
  BOOST_TEST(r.message.find("not hermitian positive definite") != std::string::npos, r.message);
  BOOST_TEST(std::isfinite(r.relative_residual));
  BOOST_TEST(xt::all(xt::isfinite(x)));
}

// ---- Value types: float and complex<double> (hermitian), on a 2D variable-coefficient problem ---


template <class T>
void check_value_type(double rtol, double tol) {
  const problem2d<T> pb;
  const auto A = kronex::sparse_operator<T>::from_entries({pb.n0, pb.n1}, pb.e);
  const auto b = kronex_test::random_tensor<T, 2>({pb.n0, pb.n1});
  const auto ref = pb.wide_reference(b);
  const auto P_kron = kronex::kron(pb.T0, pb.T1).inverse();
  const auto P_sum = (kronex::kron(pb.T0, kronex::identity(pb.n1)) + kronex::kron(kronex::identity(pb.n0), pb.T1)).inverse();
  const auto opt = options<T>(rtol);
  for (krylov_method m : methods) {
    const std::string name = std::string(kronex::to_string(m)) + " " + kronex::value_traits<T>::name;
    xt::xtensor<T, 2> x;
    const auto plain = run(m, A, static_cast<const decltype(P_kron)*>(nullptr), b, x, opt);
    expect_solution(plain, x, ref, rtol, tol, name);
    expect_solution(run(m, A, &P_kron, b, x, opt), x, ref, rtol, tol, name + ", kron inverse");
    const auto pre = run(m, A, &P_sum, b, x, opt);
    expect_solution(pre, x, ref, rtol, tol, name + ", sum inverse");
    BOOST_TEST(pre.iterations < plain.iterations, name);
  }
}

BOOST_AUTO_TEST_CASE(float_and_complex_hermitian) {
  check_value_type<double>(1e-10, 1e-8);
  check_value_type<std::complex<double>>(1e-10, 1e-8);
  check_value_type<float>(1e-5, 1e-3);
}

// ---- The convergence criterion -------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(rtol_and_atol_stop_at_the_first_check_below_max_of_both) {
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const double bnorm = std::sqrt(double(xt::sum(b * b)()));
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      xt::xtensor<double, 3> x;
      // atol decides (rtol = 0): the last tested norm is at most atol, the one before above it.
      auto o = options(0.0);
      o.atol = 1e-6 * bnorm;
      auto r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.converged);
      BOOST_TEST(r.history.back() <= o.atol);
      BOOST_TEST(r.history[r.history.size() - 2] > o.atol);
      // The larger of the two decides: rtol ||b|| here.
      o.rtol = 1e-3;
      o.atol = 1e-12;
      r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.history.back() <= 1e-3 * bnorm);
      BOOST_TEST(r.history[r.history.size() - 2] > 1e-3 * bnorm);
      // history[0] is ||b - A x0|| = ||b|| from x0 = 0.
      BOOST_TEST(std::abs(r.history.front() - bnorm) <= 1e-12 * bnorm);
      // An atol above ||b||: the initial guess already satisfies it.
      o.atol = 2 * bnorm;
      r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.converged);
      BOOST_TEST(r.iterations == 0u);
      BOOST_TEST(xt::all(xt::equal(x, 0.0)));
    }
  }
}

BOOST_AUTO_TEST_CASE(max_iterations_and_check_every) {
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      xt::xtensor<double, 3> x;
      auto o = options(1e-12);
      o.max_iterations = 5;
      o.restart = 2;  // GMRES: max_iterations counts inner iterations across restarts
      auto r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(!r.converged);
      BOOST_TEST(r.status == krylov_status::max_iterations);
      BOOST_TEST(r.iterations == 5u);
      BOOST_TEST(r.history.size() == 6u);
      BOOST_TEST(r.message.find("max_iterations") != std::string::npos, r.message);
      // The true residual is reported whatever stopped the solve.
      BOOST_TEST(r.relative_residual > 1e-12);
      BOOST_TEST(std::isfinite(r.relative_residual));
      // check_every = 3: checks at 0, 3, 6, ... and stops at one of them; with max 5, the last
      // allowed iteration is checked too.
      o.restart = 20;
      o.check_every = 3;
      o.max_iterations.reset();
      r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.converged);
      BOOST_TEST(r.iterations % 3 == 0u);
      BOOST_TEST(r.history.size() == r.iterations / 3 + 1);
      o.max_iterations = 5;
      r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.iterations == 5u);
      BOOST_TEST(r.history.size() == 3u);  // 0, 3, 5
      // Without history, none is kept.
      o.history = false;
      r = run(m, A, static_cast<const kronex::sparse_operator<double>*>(nullptr), b, x, o);
      BOOST_TEST(r.history.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(default_max_iterations) {
  // A = 0: GMRES and MINRES make no progress and do not break down, so they run to their default
  // limit: 10 N for GMRES (as for cg and bicgstab), 5 N for MINRES (SciPy's defaults).
  const kronex::shape_t shape{3};
  const kronex::matrix_free<double> zero(shape, [](const double*, double* y) { y[0] = y[1] = y[2] = 0; });
  const xt::xtensor<double, 1> b = {1.0, 2.0, 3.0};
  xt::xtensor<double, 1> x = xt::zeros<double>({3});
  auto r = kronex::gmres(zero, b, x);
  BOOST_TEST(r.status == krylov_status::max_iterations, r.message);
  BOOST_TEST(r.iterations == 30u);
  BOOST_TEST(xt::all(xt::equal(x, 0.0)));
  r = kronex::minres(zero, b, x);
  BOOST_TEST(r.status == krylov_status::max_iterations, r.message);
  BOOST_TEST(r.iterations == 15u);
  BOOST_TEST(xt::all(xt::equal(x, 0.0)));
}

BOOST_AUTO_TEST_CASE(zero_right_hand_side_and_initial_guess) {
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto P = pb.laplacian_sum().inverse();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto solution = dense_solve(dense_of(pb.N, pb.laplacian_entries), b);
  const xt::xtensor<double, 3> zero_b = xt::zeros<double>(b.shape());
  const auto opt = options(1e-10);
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      // b = 0: x = 0 whatever the initial guess, converged without iterating.
      auto s = kronex::compile_krylov(m, A, P, b, opt);
      xt::xtensor<double, 3> x = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
      auto r = s(zero_b, x);
      BOOST_TEST(r.converged);
      BOOST_TEST(r.iterations == 0u);
      BOOST_TEST(r.relative_residual == 0.0);
      BOOST_TEST(xt::all(xt::equal(x, 0.0)));
      // The initial guess is used: from the solution, 0 iterations and x unchanged.
      x = solution;
      r = s(b, x);
      BOOST_TEST(r.converged);
      BOOST_TEST(r.iterations == 0u);
      BOOST_TEST(xt::all(xt::equal(x, solution)));
      // From a guess near the solution, fewer iterations than from 0.
      xt::xtensor<double, 3> x0 = xt::zeros<double>(b.shape());
      const auto from_zero = s(b, x0);
      x = solution + 1e-6 * kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
      const auto from_near = s(b, x);
      BOOST_TEST(from_near.converged);
      BOOST_TEST(from_near.iterations < from_zero.iterations);
      // b may be x itself (it is copied first).
      x = b;
      r = s(x, x);
      BOOST_TEST(r.converged);
      BOOST_TEST(rel_error(x, solution) < 1e-8);
    }
  }
}

BOOST_AUTO_TEST_CASE(compiled_solver_reused_matches_one_shot_calls) {
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto P = pb.laplacian_sum().inverse();
  const auto b1 = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto b2 = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  auto opt = options(1e-9);
  opt.restart = 4;
  static_assert(!std::is_copy_constructible_v<kronex::krylov_solver<double, 3>>);
  const auto one_shot = [&](krylov_method m, const xt::xtensor<double, 3>& b, xt::xtensor<double, 3>& x) {
    x = xt::zeros<double>(b.shape());
    switch (m) {
      case krylov_method::cg: return kronex::cg(A, b, x, P, opt);
      case krylov_method::bicgstab: return kronex::bicgstab(A, b, x, P, opt);
      case krylov_method::gmres: return kronex::gmres(A, b, x, P, opt);
      case krylov_method::minres: break;
    }
    return kronex::minres(A, b, x, P, opt);
  };
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      auto solver = kronex::compile_krylov(m, A, P, b1, opt);
      BOOST_TEST(solver.method() == std::string(kronex::to_string(m)));
      BOOST_TEST(solver.preconditioned());
      xt::xtensor<double, 3> x1 = xt::zeros<double>(b1.shape()), x2 = xt::zeros<double>(b2.shape()), y1, y2;
      const auto r1 = solver(b1, x1);
      const auto r2 = solver(b2, x2);
      const auto s1 = one_shot(m, b1, y1);
      const auto s2 = one_shot(m, b2, y2);
      // The same arithmetic in the same order: identical, bit for bit.
      BOOST_TEST(r1.iterations == s1.iterations);
      BOOST_TEST(r2.iterations == s2.iterations);
      BOOST_TEST(r1.history == s1.history);
      BOOST_TEST(r2.history == s2.history);
      BOOST_TEST(xt::all(xt::equal(x1, y1)));
      BOOST_TEST(xt::all(xt::equal(x2, y2)));
      BOOST_TEST(r1.converged);
      BOOST_TEST(r2.converged);
      // A moved solver works the same.
      auto moved = std::move(solver);
      xt::xtensor<double, 3> x3 = xt::zeros<double>(b1.shape());
      const auto r3 = moved(b1, x3);
      BOOST_TEST(r3.history == r1.history);
      BOOST_TEST(xt::all(xt::equal(x3, x1)));
    }
  }
}

// ---- Breakdowns, exact termination, non-finite values ---------------------------------------------

BOOST_AUTO_TEST_CASE(breakdowns_are_reported_with_the_last_good_iterate) {
  // CG on diag(1, -1, 2): from x = 0 with b = (1, 2, 0), p^H A p = 1 - 4 < 0 at the first
  // iteration (a step alpha = 5 / -3 would follow without the breakdown test).
  const kronex::shape_t shape{3};
  const auto D = kronex::sparse_operator<double>::from_entries(shape, {{0, 0, 1.0}, {1, 1, -1.0}, {2, 2, 2.0}});
  const xt::xtensor<double, 1> b = {1.0, 2.0, 0.0};
  for (std::size_t every : {1, 4}) {
    kronex::krylov_options<double> o;
    o.check_every = every;
    xt::xtensor<double, 1> x = xt::zeros<double>({3});
    auto r = kronex::cg(D, b, x, o);
    BOOST_TEST(!r.converged);
    BOOST_TEST(r.status == krylov_status::indefinite_operator, r.message);
    BOOST_TEST(r.message.find("p^H A p <= 0") != std::string::npos, r.message);
    // The vectors froze at the breakdown: x is the initial guess, not an update by 1 / 0.
    BOOST_TEST(xt::all(xt::equal(x, 0.0)));
    BOOST_TEST(r.relative_residual == 1.0);
    BOOST_TEST(r.iterations == every);
  }
  // A negative definite preconditioner: CG and MINRES refuse it at the first check.
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto negative = -1.0 * pb.laplacian_sum().inverse();
  const auto b3 = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  for (krylov_method m : {krylov_method::cg, krylov_method::minres}) {
    xt::xtensor<double, 3> x;
    const auto r = run(m, A, &negative, b3, x, options(1e-8));
    BOOST_TEST(r.status == krylov_status::indefinite_preconditioner, r.message);
    BOOST_TEST(r.message.find("preconditioner is not hermitian positive definite") != std::string::npos, r.message);
    BOOST_TEST(!r.converged);
    BOOST_TEST(r.iterations == 0u);
    BOOST_TEST(xt::all(xt::equal(x, 0.0)));
  }
  // BiCGSTAB on the rotation [[0, 1], [-1, 0]] from b = (1, 0): r0^H A r0 = 0.
  const auto rot = kronex::sparse_operator<double>::from_entries({2}, {{0, 1, 1.0}, {1, 0, -1.0}});
  const xt::xtensor<double, 1> b2 = {1.0, 0.0};
  xt::xtensor<double, 1> x2 = xt::zeros<double>({2});
  const auto r = kronex::bicgstab(rot, b2, x2);
  BOOST_TEST(r.status == krylov_status::breakdown_alpha, r.message);
  BOOST_TEST(!r.converged);
  BOOST_TEST(xt::all(xt::isfinite(x2)));
  // GMRES solves it (the solution is in the second Krylov space).
  const auto rg = kronex::gmres(rot, b2, x2);
  BOOST_TEST(rg.converged, rg.message);
  BOOST_TEST(std::abs(x2(0)) < 1e-14);  // A x = b: x = (0, 1)
  BOOST_TEST(std::abs(x2(1) - 1.0) < 1e-14);
}

BOOST_AUTO_TEST_CASE(exact_termination_between_checks_stays_finite_and_converges) {
  // b an eigenvector of A = diag(2, 3, 4): every method has the exact solution x = b / 2 after
  // one iteration, with an exactly zero residual, then divides by zero (h_{2,1} = 0 in GMRES,
  // beta = 0 in MINRES, rho = 0 in CG and BiCGSTAB) until the check at iteration 4.
  const auto A = kronex::sparse_operator<double>::from_entries({3}, {{0, 0, 2.0}, {1, 1, 3.0}, {2, 2, 4.0}});
  const xt::xtensor<double, 1> b = {4.0, 0.0, 0.0};
  kronex::krylov_options<double> o;
  o.check_every = 4;
  o.rtol = 0;  // only an exactly zero residual passes
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      xt::xtensor<double, 1> x = xt::zeros<double>({3});
      auto s = kronex::compile_krylov(m, A, b, o);
      const auto r = s(b, x);
      BOOST_TEST(r.converged, r.message);
      BOOST_TEST(r.iterations == 4u);
      BOOST_TEST(x(0) == 2.0);
      BOOST_TEST(x(1) == 0.0);
      BOOST_TEST(x(2) == 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(non_finite_values_end_the_solve) {
  const kronex::shape_t shape{2, 2};
  const kronex::matrix_free<double> nan_op(shape, [](const double* x, double* y) {
    for (int i = 0; i < 4; ++i) y[i] = x[i] * std::numeric_limits<double>::quiet_NaN();
  });
  const auto I = kronex::kron(kronex::identity(2), kronex::identity(2));
  const xt::xtensor<double, 2> b = {{1.0, 2.0}, {3.0, 4.0}};
  for (krylov_method m : methods) {
    BOOST_TEST_CONTEXT(kronex::to_string(m)) {
      // The operator makes NaN: stopped, not converged; GMRES keeps the cycle's starting x.
      xt::xtensor<double, 2> x = {{1.0, 1.0}, {1.0, 1.0}};
      auto s = kronex::compile_krylov(m, nan_op, b, kronex::krylov_options<double>{});
      auto r = s(b, x);
      BOOST_TEST(!r.converged);
      BOOST_TEST(r.status == krylov_status::non_finite, r.message);
      BOOST_TEST(r.message.find("NaN") != std::string::npos, r.message);
      // The preconditioner makes NaN.
      auto sp = kronex::compile_krylov(m, I, nan_op, b, kronex::krylov_options<double>{});
      x.fill(0);
      r = sp(b, x);
      BOOST_TEST(!r.converged);
      BOOST_TEST(r.status == krylov_status::non_finite, r.message);
      // b holds an infinity: nothing is done.
      xt::xtensor<double, 2> bad = b;
      bad(1, 1) = std::numeric_limits<double>::infinity();
      auto si = kronex::compile_krylov(m, I, b, kronex::krylov_options<double>{});
      x.fill(5);
      r = si(bad, x);
      BOOST_TEST(r.status == krylov_status::non_finite, r.message);
      BOOST_TEST(r.iterations == 0u);
      BOOST_TEST(xt::all(xt::equal(x, 5.0)));
    }
  }
  // GMRES with the NaN operator: the iterate stays the initial guess (no update from NaN).
  xt::xtensor<double, 2> x = {{1.0, 1.0}, {1.0, 1.0}};
  kronex::gmres(nan_op, b, x);
  BOOST_TEST(xt::all(xt::equal(x, 1.0)));
}

// ---- Operators: constructors, Matrix Market, apply, errors ------------------------------------------

BOOST_AUTO_TEST_CASE(sparse_operator_constructors_agree_with_the_dense_matrix) {
  // Shape (2, 3): N = 6. Entries with a duplicate (summed) and an explicit zero.
  const kronex::shape_t shape{2, 3};
  const entries<double> e = {{0, 0, 4.0}, {0, 5, 1.0}, {5, 0, 2.0}, {3, 2, -1.5}, {3, 2, 0.5}, {4, 4, 3.0},
                             {1, 1, 0.0}, {2, 3, 7.0}};
  const auto A = kronex::sparse_operator<double>::from_entries(shape, e);
  BOOST_TEST(A.nnz() == 6u);  // the duplicate summed, the zero dropped
  BOOST_TEST(A.row_ptr() == (std::vector<std::size_t>{0, 2, 2, 3, 4, 5, 6}));
  const mat<double> dense = dense_of(6, e);
  const auto x = kronex_test::random_tensor<double, 2>({2, 3});
  const xt::xtensor<double, 2> y = A.apply(x);
  const xt::xtensor<double, 1> fx = xt::flatten(x);
  const xt::xtensor<double, 1> ref = xt::linalg::dot(dense, fx);
  BOOST_TEST(rel_error(xt::flatten(y), ref) < 1e-15);
  // The same from CSR arrays; apply on a non-contiguous view (copied into C order first).
  const kronex::sparse_operator<double> B(shape, A.row_ptr(), A.col_idx(), A.values());
  const xt::xtensor<double, 2> big = kronex_test::random_tensor<double, 2>({4, 3});
  const auto view = xt::view(big, xt::range(0, 4, 2), xt::all());
  const xt::xtensor<double, 2> yv = B.apply(view);
  const xt::xtensor<double, 1> copy = xt::flatten(xt::xtensor<double, 2>(view));
  const xt::xtensor<double, 1> refv = xt::linalg::dot(dense, copy);
  BOOST_TEST(rel_error(xt::flatten(yv), refv) < 1e-15);
  // matrix_free applies its function.
  const kronex::matrix_free<double> F(shape, [&A](const double* in, double* out) { A.run(in, out); });
  const xt::xtensor<double, 2> yf = F.apply(x);
  BOOST_TEST(xt::all(xt::equal(yf, y)));
}

struct temp_file {
  std::string path;
  explicit temp_file(const std::string& text) {
    path = (std::filesystem::temp_directory_path() /
            ("kronex_test_krylov_" + std::to_string(kronex_test::seed()) + "_" + std::to_string(counter()++) + ".mtx"))
               .string();
    std::ofstream(path) << text;
  }
  ~temp_file() { std::filesystem::remove(path); }
  static int& counter() {
    static int c = 0;
    return c;
  }
};

BOOST_AUTO_TEST_CASE(sparse_operator_from_a_matrix_market_file) {
  // A symmetric file (lower triangle stored) for shape (2, 2).
  const temp_file f("%%MatrixMarket matrix coordinate real symmetric\n% comment\n4 4 5\n1 1 4\n2 1 -1\n2 2 4\n"
                    "4 3 -1\n4 4 4\n");
  const auto A = kronex::sparse_operator<double>::read_matrix_market(f.path, {2, 2});
  const mat<double> dense = {{4, -1, 0, 0}, {-1, 4, 0, 0}, {0, 0, 0, -1}, {0, 0, -1, 4}};
  const xt::xtensor<double, 2> x = {{1.0, 2.0}, {3.0, 4.0}};
  const xt::xtensor<double, 2> y = A.apply(x);
  const xt::xtensor<double, 1> fx = xt::flatten(x);
  const xt::xtensor<double, 1> ref = xt::linalg::dot(dense, fx);
  BOOST_TEST(rel_error(xt::flatten(y), ref) < 1e-15);
  // Complex values need a complex operator; a real file reads into a complex one.
  const temp_file c("%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 2 1.0 2.0\n");
  kronex_test::expect_error<kronex::file_error>([&] { kronex::sparse_operator<double>::read_matrix_market(c.path, {2}); },
                                                {c.path, "has complex entries", "double"});
  const auto Z = kronex::sparse_operator<std::complex<double>>::read_matrix_market(c.path, {2});
  BOOST_TEST((Z.values()[0] == std::complex<double>(1.0, 2.0)));
  // Errors: the file's size against the shape (both named), a malformed line (its number).
  kronex_test::expect_error<kronex::dimension_mismatch>(
      [&] { kronex::sparse_operator<double>::read_matrix_market(f.path, {2, 3}); }, {"4 x 4", "(2,3)", "6 x 6"});
  const temp_file bad("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 x 1\n");
  kronex_test::expect_error<kronex::file_error>(
      [&] { kronex::sparse_operator<double>::read_matrix_market(bad.path, {2}); }, {"line 4", "'x'"});
  kronex_test::expect_error<kronex::file_error>(
      [&] { kronex::sparse_operator<double>::read_matrix_market("/nonexistent/A.mtx", {2}); }, {"no such file"});
}

BOOST_AUTO_TEST_CASE(jacobi_is_the_inverse_diagonal) {
  // Shape (2, 3): a diagonal entry listed twice (summed), off-diagonal entries ignored.
  const kronex::shape_t shape{2, 3};
  const entries<std::complex<double>> e = {{0, 0, {4.0, 0.0}}, {0, 5, {1.0, 1.0}}, {1, 1, {2.0, 2.0}},
                                           {2, 2, {-0.5, 0.0}}, {3, 3, {1.0, 0.0}}, {3, 3, {1.0, 0.0}},
                                           {4, 4, {8.0, 0.0}}, {5, 5, {0.25, 0.0}}, {5, 1, {3.0, 0.0}}};
  const auto A = kronex::sparse_operator<std::complex<double>>::from_entries(shape, e);
  const auto J = kronex::jacobi(A);
  BOOST_TEST(J.shape() == shape);
  BOOST_TEST(J.nnz() == 6u);
  const auto x = kronex_test::random_tensor<std::complex<double>, 2>({2, 3});
  const xt::xtensor<std::complex<double>, 2> y = J.apply(x);
  const std::complex<double> d[] = {{4.0, 0.0}, {2.0, 2.0}, {-0.5, 0.0}, {2.0, 0.0}, {8.0, 0.0}, {0.25, 0.0}};
  for (std::size_t i = 0; i < 6; ++i) BOOST_TEST(std::abs(y.flat(i) - x.flat(i) / d[i]) <= 1e-15 * std::abs(x.flat(i) / d[i]));
  // A zero or missing diagonal entry names its row.
  const auto Z = kronex::sparse_operator<double>::from_entries({3}, {{0, 0, 1.0}, {1, 0, 2.0}, {2, 2, 3.0}});
  kronex_test::expect_error<kronex::invalid_operator>([&] { kronex::jacobi(Z); }, {"row 1", "zero"});
}

BOOST_AUTO_TEST_CASE(operator_and_solver_errors) {
  using kronex::sparse_operator;
  const kronex::shape_t shape{2, 2};
  // CSR arrays.
  kronex_test::expect_error<kronex::dimension_mismatch>(
      [&] { sparse_operator<double>(shape, {0, 1, 2}, {0, 1}, {1.0, 1.0}); }, {"(2,2)", "5 row pointers", "has 3"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>(shape, {0, 2, 1, 2, 2}, {0, 1}, {1.0, 1.0}); }, {"row_ptr decreases at row 1"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>(shape, {1, 1, 1, 1, 1}, {0}, {1.0}); }, {"row_ptr[0] is 1"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>(shape, {0, 1, 1, 1, 3}, {0, 1}, {1.0, 1.0}); }, {"row_ptr[N] = 3", "2 entries"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>(shape, {0, 1, 1, 1, 2}, {0, 4}, {1.0, 1.0}); }, {"column index 4", "row 3"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>(shape, {0, 1, 1, 1, 2}, {0, 1}, {1.0}); }, {"col_idx has 2", "values has 1"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { sparse_operator<double>::from_entries(shape, {{0, 0, 1.0}, {1, 4, 1.0}}); }, {"entry 1", "column 4", "4 x 4"});
  kronex_test::expect_error<kronex::invalid_operator>([&] { sparse_operator<double>::from_entries({2, 0}, {}); },
                                                       {"zero extent"});
  kronex_test::expect_error<kronex::invalid_operator>(
      [&] { kronex::matrix_free<double>(shape, kronex::matrix_free<double>::function_type{}); }, {"empty"});

  // Shapes: apply, the operator, the preconditioner, x, and a compiled solver's b, each naming both.
  const auto A = sparse_operator<double>::from_entries(shape, {{0, 0, 2.0}, {1, 1, 2.0}, {2, 2, 2.0}, {3, 3, 2.0}});
  const xt::xtensor<double, 2> b23 = xt::ones<double>({2, 3});
  xt::xtensor<double, 2> x23 = xt::zeros<double>({2, 3});
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { (void)A.apply(b23); }, {"(2,3)", "(2,2)"});
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { kronex::cg(A, b23, x23); },
                                                         {"cg", "operator's shape (2,2)", "right-hand side's shape (2,3)"});
  const xt::xtensor<double, 2> b = xt::ones<double>({2, 2});
  xt::xtensor<double, 2> x = xt::zeros<double>({2, 2});
  const auto M3 = gallery::bspline_mass<double>(3, 1);
  const auto M2 = gallery::bspline_mass<double>(2, 1);
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { kronex::gmres(A, b, x, kronex::kron(M2, M3).inverse()); },
                                                         {"gmres", "preconditioner's shape (2,3)", "(2,2)"});
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { kronex::minres(A, b, x23); },
                                                         {"minres", "x has shape (2,3)", "b has shape (2,2)"});
  auto s = kronex::compile_krylov(krylov_method::bicgstab, A, b);
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { s(b23, x); }, {"right-hand side", "(2,3)", "(2,2)"});
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { s(b, x23); }, {"solution x", "(2,3)", "(2,2)"});
  // Options.
  kronex::krylov_options<double> o;
  o.check_every = 0;
  kronex_test::expect_error<kronex::error>([&] { kronex::cg(A, b, x, o); }, {"kronex::cg", "check_every"});
  o = {};
  o.rtol = -1;
  kronex_test::expect_error<kronex::error>([&] { kronex::compile_krylov(krylov_method::gmres, A, b, o); },
                                           {"kronex::gmres", "rtol"});
  o = {};
  o.restart = 0;
  kronex_test::expect_error<kronex::error>([&] { kronex::gmres(A, b, x, o); }, {"restart"});
}

} // namespace
