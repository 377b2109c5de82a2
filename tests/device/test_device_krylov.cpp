// Krylov solves on device tensors (kronex/krylov/device_solver.hpp): every method with and
// without a Kronecker preconditioner (a product inverse, a sum inverse by fast diagonalisation)
// gives the host solver's iterations and solution, and the dense solve's answer, on operators
// that are not Kronecker products (sparse_operators of variable-coefficient problems, the helpers
// shared with test_krylov); float, double and complex<double>; a matrix_free whose function gets
// device pointers; breakdowns; the transfers a compile and a solve make, exactly; b never modified,
// b = x, and the errors.
// Built against the CPU device (CI) and CUDA (a GPU machine).
#define BOOST_TEST_MODULE test_device_krylov
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xnorm.hpp>

#include "kronex_device_test_support.hpp"
#include "kronex_krylov_test_support.hpp"

namespace {

using kronex::krylov_method;
using kronex::krylov_status;
using kronex_test::rel_error;
using namespace kronex_krylov_test;

constexpr krylov_method methods[] = {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres,
                                     krylov_method::minres};

template <class T = double>
kronex::krylov_options<kronex::real_t<T>> options(double rtol, std::size_t check_every = 1) {
  kronex::krylov_options<kronex::real_t<T>> o;
  o.rtol = kronex::real_t<T>(rtol);
  o.history = true;
  o.check_every = check_every;
  return o;
}

template <class F>
kronex::transfer_counts measure(F&& f) {
  const auto before = kronex::transfers();
  f();
  return kronex::transfers() - before;
}

// One solve from x = 0 through compile_krylov, on the host or on the device.
template <class A, class P, class T, std::size_t D, class R>
kronex::krylov_result host_run(krylov_method m, const A& a, const P* p, const xt::xtensor<T, D>& b,
                               xt::xtensor<T, D>& x, const kronex::krylov_options<R>& o) {
  x = xt::zeros<T>(b.shape());
  if (p) return kronex::compile_krylov(m, a, *p, b, o)(b, x);
  return kronex::compile_krylov(m, a, b, o)(b, x);
}
template <class A, class P, class T, std::size_t D, class R>
kronex::krylov_result device_run(krylov_method m, const A& a, const P* p, const xt::xtensor<T, D>& b,
                                 xt::xtensor<T, D>& x, const kronex::krylov_options<R>& o) {
  const kronex::device_tensor<T, D> bd(b);
  kronex::device_tensor<T, D> xd(xt::xtensor<T, D>(xt::zeros<T>(b.shape())));
  kronex::krylov_result r;
  if (p) r = kronex::compile_krylov(m, a, *p, bd, o)(bd, xd);
  else r = kronex::compile_krylov(m, a, bd, o)(bd, xd);
  x = xd.to_host();
  BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);  // b is never modified
  return r;
}

// The device solve against the host solver, and against the dense solve (`tol`):
//  - with the host's own operators: the device's Kronecker inverse is a GEMM with the inverse
//    matrix where the host runs a banded LU solve, so their rounding differs, and a residual
//    near the tolerance may cross it a check earlier or later;
//  - with the same operator arithmetic (a CPU device, whose memory the host solver can use: the
//    host solver given the device's compiled preconditioner as a matrix_free): the same checks,
//    the same iterations, the same solution to `same` (the device space's arithmetic is the
//    host space's, and its reductions add in the host's order below krylov_dot_partitions values).
template <class A, class P, class T, std::size_t D, class W, class R>
void expect_host_result(krylov_method m, const A& a, const P* p, const xt::xtensor<T, D>& b,
                        const xt::xtensor<W, D>& ref, const kronex::krylov_options<R>& o, double same, double tol,
                        const std::string& what) {
  xt::xtensor<T, D> xh, xd;
  const auto rh = host_run(m, a, p, b, xh, o);
  const auto rd = device_run(m, a, p, b, xd, o);
  BOOST_TEST_CONTEXT(what << ": host " << rh.message << " | device " << rd.message) {
    BOOST_TEST(rd.converged);
    BOOST_TEST(rd.status == rh.status);
    // One check either way, or a few for an erratic residual (BiCGSTAB's) that rounding shifts.
    const std::size_t slack = 1 + rh.iterations / 8;
    BOOST_TEST(rd.iterations + slack >= rh.iterations);
    BOOST_TEST(rd.iterations <= rh.iterations + slack);
    BOOST_TEST(rd.history.size() == rd.iterations + 1);
    if (rd.iterations == rh.iterations) BOOST_TEST(rel_error(xd, xh) < same);
    BOOST_TEST(rel_error(kronex_test::widen(xd), ref) < tol);
    BOOST_TEST(rd.relative_residual <= 10 * double(o.rtol));  // the true residual, recomputed on the device
    // The first check's norm is ||b||: the device's dot products are the host's.
    BOOST_TEST(std::abs(rd.history[0] - rh.history[0]) <= same * rh.history[0]);
    // The reported residual against the host's product and norm of the same x.
    xt::xtensor<T, D> r = xt::xtensor<T, D>::from_shape(b.shape());
    a.run(xd.data(), r.data());
    const double host_relative = double(xt::norm_l2(xt::eval(b - r))()) / double(xt::norm_l2(b)());
    BOOST_TEST(std::abs(rd.relative_residual - host_relative) <= 0.1 * host_relative + 1e-15);
  }
  // Below 1024 values (krylov_dot_partitions) the device's dot products add in the host's order.
  if (std::string(kronex::device::system_name()) == "cuda" || b.size() >= 1024) return;
  const kronex::device_tensor<T, D> bd(b);
  xt::xtensor<T, D> xs;
  kronex::krylov_result rs;
  if (p) {
    auto Pd = kronex::compile(*p, bd);
    const kronex::matrix_free<T> same_P(kronex::shape_t(b.shape().begin(), b.shape().end()), [&Pd](const T* x, T* y) { Pd.run(x, y); });
    rs = host_run(m, a, &same_P, b, xs, o);
  } else {
    rs = host_run(m, a, p, b, xs, o);
  }
  BOOST_TEST_CONTEXT(what << ", the same arithmetic: host " << rs.message << " | device " << rd.message) {
    BOOST_TEST(rd.iterations == rs.iterations);
    BOOST_TEST(rd.history.size() == rs.history.size());
    for (std::size_t k = 0; k < std::min(rd.history.size(), rs.history.size()); ++k)
      BOOST_TEST(std::abs(rd.history[k] - rs.history[k]) <= same * rs.history[0], "check " << k);
    BOOST_TEST(rel_error(xd, xs) < 1e-3 * same);
  }
}

BOOST_AUTO_TEST_CASE(every_method_matches_the_host_on_3d_variable_coefficient_operators) {
  const problem3d& pb = problem();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto A_mass = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.mass_entries);
  const auto A_lap = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto ref_mass = dense_solve(dense_of(pb.N, pb.mass_entries), b);
  const auto ref_lap = dense_solve(dense_of(pb.N, pb.laplacian_entries), b);
  const auto P_kron = pb.mass_preconditioner();
  const auto P_sum = pb.laplacian_sum().inverse();
  const auto opt = options(1e-10);
  for (krylov_method m : methods) {
    const std::string name = kronex::to_string(m);
    expect_host_result(m, A_mass, static_cast<const decltype(P_kron)*>(nullptr), b, ref_mass, opt, 1e-10, 1e-8,
                       name + " mass");
    expect_host_result(m, A_mass, &P_kron, b, ref_mass, opt, 1e-10, 1e-8, name + " mass, kron(M, M, M).inverse()");
    expect_host_result(m, A_lap, static_cast<const decltype(P_sum)*>(nullptr), b, ref_lap, opt, 1e-10, 1e-8,
                       name + " laplacian");
    expect_host_result(m, A_lap, &P_sum, b, ref_lap, opt, 1e-10, 1e-8, name + " laplacian, sum inverse");
  }
  // GMRES with restarts (each one recomputes the true residual on the device).
  auto o3 = opt;
  o3.restart = 3;
  expect_host_result(krylov_method::gmres, A_lap, &P_sum, b, ref_lap, o3, 1e-10, 1e-8, "gmres(3)");
}

BOOST_AUTO_TEST_CASE(reductions_over_several_values_per_partition) {
  // N = 1430 > krylov_dot_partitions (1024): each partial sum of a dot product adds several
  // values, and the partials are added in a second pass.
  const std::size_t n0 = 13, n1 = 11, n2 = 10, N = n0 * n1 * n2;
  const auto M0 = gallery::bspline_mass<double>(n0, 2), M1 = gallery::bspline_mass<double>(n1, 2),
             M2 = gallery::bspline_mass<double>(n2, 2);
  const auto K0 = gallery::bspline_stiffness<double>(n0, 2), K1 = gallery::bspline_stiffness<double>(n1, 2),
             K2 = gallery::bspline_stiffness<double>(n2, 2);
  const mat<double> m0 = kronex_test::to_dense(M0), m1 = kronex_test::to_dense(M1), m2 = kronex_test::to_dense(M2);
  entries<double> e;
  add_kron(e, 1.0, {kronex_test::to_dense(K0), m1, m2});
  add_kron(e, 1.0, {m0, kronex_test::to_dense(K1), m2});
  add_kron(e, 1.0, {m0, m1, kronex_test::to_dense(K2)});
  add_kron(e, 20.0, {m0, m1, m2});
  scale_by_coefficient(e, random_coefficient(N));
  const auto A = kronex::sparse_operator<double>::from_entries({n0, n1, n2}, e);
  const auto b = kronex_test::random_tensor<double, 3>({n0, n1, n2});
  const auto ref = dense_solve(dense_of(N, e), b);
  const auto P = (kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) +
                  20.0 * kronex::kron(M0, M1, M2)).inverse();
  for (krylov_method m : methods)
    expect_host_result(m, A, &P, b, ref, options(1e-10), 1e-9, 1e-8, std::string(kronex::to_string(m)) + " N = 1430");
}

template <class T>
void check_value_type(double rtol, double same, double tol) {
  const problem2d<T> pb;
  const auto A = kronex::sparse_operator<T>::from_entries({pb.n0, pb.n1}, pb.e);
  const auto b = kronex_test::random_tensor<T, 2>({pb.n0, pb.n1});
  const auto ref = pb.wide_reference(b);
  const auto P_kron = kronex::kron(pb.T0, pb.T1).inverse();
  const auto opt = options<T>(rtol);
  for (krylov_method m : methods) {
    const std::string name = std::string(kronex::to_string(m)) + " " + kronex::value_traits<T>::name;
    expect_host_result(m, A, static_cast<const decltype(P_kron)*>(nullptr), b, ref, opt, same, tol, name);
    expect_host_result(m, A, &P_kron, b, ref, opt, same, tol, name + ", kron inverse");
  }
}

BOOST_AUTO_TEST_CASE(float_double_and_complex_match_the_host) {
  check_value_type<double>(1e-10, 1e-10, 1e-8);
  check_value_type<std::complex<double>>(1e-10, 1e-10, 1e-8);
  check_value_type<float>(1e-5, 1e-4, 1e-3);
}

// A solve reads one small array per check (the norm and the breakdown flag together), one for
// ||b|| and one for the final residual, and uploads nothing: 2 + checks downloads of two values.
template <class T>
void check_transfers_per_solve(const kronex::krylov_result& r, const kronex::transfer_counts& c, std::size_t every) {
  BOOST_TEST_CONTEXT(r.message << " check_every " << every) {
    BOOST_TEST(c.uploads == 0u);
    BOOST_TEST(c.downloads == r.history.size() + 2);
    BOOST_TEST(c.download_bytes == c.downloads * 2 * sizeof(T));
    if (every == 1) BOOST_TEST(c.downloads == r.iterations + 3);
  }
}

BOOST_AUTO_TEST_CASE(transfers_of_a_compile_and_of_each_solve) {
  const problem3d& pb = problem();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto P = pb.laplacian_sum().inverse();
  const kronex::device_tensor<double, 3> bd(b);
  const xt::xtensor<double, 3> zeros = xt::zeros<double>(b.shape());
  kronex::device_tensor<double, 3> xd(zeros);
  const std::size_t plan_uploads = kronex::compile(P, bd).plan().setup_transfers;
  BOOST_TEST(plan_uploads > 0u);
  for (krylov_method m : methods) {
    // Compile: the sparse operator's three CSR arrays once, and the preconditioner's plan.
    std::size_t checks_every_1 = 0;
    for (std::size_t every : {1, 5}) {
      kronex::transfer_counts compiled;
      auto s = [&] {
        const auto before = kronex::transfers();
        auto solver = kronex::compile_krylov(m, A, P, bd, options(1e-10, every));
        compiled = kronex::transfers() - before;
        return solver;
      }();
      BOOST_TEST(compiled.uploads == 3 + plan_uploads);
      BOOST_TEST(compiled.downloads == 0u);
      // Two solves with the solver compiled once: the second makes the same transfers.
      for (int solve = 0; solve < 2; ++solve) {
        xd.copy_from_host(zeros.data());
        kronex::krylov_result r;
        const auto c = measure([&] { r = s(bd, xd); });
        BOOST_TEST(r.converged, r.message);
        check_transfers_per_solve<double>(r, c, every);
        if (every == 1) checks_every_1 = c.downloads;
        else BOOST_TEST(c.downloads < checks_every_1, kronex::to_string(m));
      }
    }
  }
  // One-shot calls count the same per solve, after their compile.
  auto s = kronex::compile_krylov(krylov_method::cg, A, bd, options(1e-10));
  xd.copy_from_host(zeros.data());
  kronex::krylov_result r;
  const auto c = measure([&] { r = s(bd, xd); });
  check_transfers_per_solve<double>(r, c, 1);
  // Every read goes through the counted transfer: a guard refuses the solve.
  kronex::no_transfer_guard guard;
  kronex_test::expect_error<kronex::transfer_error>([&] { s(bd, xd); }, {"device-to-host", "Krylov convergence check"});
}

BOOST_AUTO_TEST_CASE(one_shot_functions_matrix_free_and_in_place) {
  const problem3d& pb = problem();
  const auto b = kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2});
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto ref = dense_solve(dense_of(pb.N, pb.laplacian_entries), b);
  const auto L = pb.laplacian_sum();
  const kronex::device_tensor<double, 3> bd(b);
  const xt::xtensor<double, 3> zeros = xt::zeros<double>(b.shape());
  kronex::device_tensor<double, 3> xd(zeros);
  const auto opt = options(1e-10);

  auto r = kronex::cg(A, bd, xd, L.inverse(), opt);
  BOOST_TEST(r.converged, r.message);
  BOOST_TEST(rel_error(xd.to_host(), ref) < 1e-8);
  xd.copy_from_host(zeros.data());
  r = kronex::bicgstab(A, bd, xd, L.inverse(), opt);
  BOOST_TEST(r.converged, r.message);
  BOOST_TEST(rel_error(xd.to_host(), ref) < 1e-8);
  // The initial guess is used: from the solution, converged at the first check.
  r = kronex::gmres(A, bd, xd, opt);
  BOOST_TEST(r.iterations == 0u, r.message);
  BOOST_TEST(r.converged);

  // A Kronecker sum as the operator itself (its device plan), and the same sum as a matrix_free
  // whose function runs that plan on the device pointers it is given: the same iterates.
  auto K = kronex::compile(L, bd);
  const kronex::matrix_free<double> L_free(pb.shape(), [&K](const double* x, double* y) { K.run(x, y); });
  xd.copy_from_host(zeros.data());
  const auto rl = kronex::minres(L, bd, xd, opt);
  const auto xl = xd.to_host();
  xd.copy_from_host(zeros.data());
  const auto rf = kronex::minres(L_free, bd, xd, opt);
  BOOST_TEST(rl.converged, rl.message);
  BOOST_TEST(rf.iterations == rl.iterations);
  BOOST_TEST(xt::all(xt::equal(xd.to_host(), xl)));
  xt::xtensor<double, 3> back = L.apply(xl);
  BOOST_TEST(rel_error(back, b) < 1e-9);

  // Deterministic: the same solve twice gives the same bits.
  auto s = kronex::compile_krylov(krylov_method::gmres, A, L.inverse(), bd, opt);
  xd.copy_from_host(zeros.data());
  r = s(bd, xd);
  const auto x1 = xd.to_host();
  xd.copy_from_host(zeros.data());
  s(bd, xd);
  BOOST_TEST(xt::all(xt::equal(xd.to_host(), x1)));

  // Views of device memory the application owns, for b_like, b and x.
  auto sv = kronex::compile_krylov(krylov_method::gmres, A, L.inverse(), bd.view(), opt);
  xd.copy_from_host(zeros.data());
  const auto rv = sv(bd.view(), xd.view());
  BOOST_TEST(rv.iterations == r.iterations);
  BOOST_TEST(xt::all(xt::equal(xd.to_host(), x1)));
  xd.copy_from_host(zeros.data());
  kronex::device_view<double, 3> xv = xd.view();
  BOOST_TEST(kronex::gmres(A, bd.view(), xv, L.inverse(), opt).iterations == r.iterations);
  BOOST_TEST(xt::all(xt::equal(xd.to_host(), x1)));

  // b = x: b is copied on the device first; the result is the solution of the original b.
  kronex::device_tensor<double, 3> inplace(b);
  r = s(inplace, inplace);
  BOOST_TEST(r.converged, r.message);
  BOOST_TEST(rel_error(inplace.to_host(), ref) < 1e-8);
}

BOOST_AUTO_TEST_CASE(breakdowns_flagged_on_the_device_keep_the_last_good_iterate) {
  // CG on diag(1, -1, 2) from x = 0, b = (1, 2, 0): p^H A p < 0 at the first iteration.
  const auto D = kronex::sparse_operator<double>::from_entries({3}, {{0, 0, 1.0}, {1, 1, -1.0}, {2, 2, 2.0}});
  const kronex::device_tensor<double, 1> b(xt::xtensor<double, 1>{1.0, 2.0, 0.0});
  for (std::size_t every : {1, 4}) {
    kronex::krylov_options<double> o;
    o.check_every = every;
    kronex::device_tensor<double, 1> x(xt::xtensor<double, 1>{0.0, 0.0, 0.0});
    const auto r = kronex::cg(D, b, x, o);
    BOOST_TEST(r.status == krylov_status::indefinite_operator, r.message);
    BOOST_TEST(r.iterations == every);
    // The flag froze the vectors on the device: x is the initial guess, not an update by 1 / 0.
    BOOST_TEST(xt::all(xt::equal(x.to_host(), 0.0)));
    BOOST_TEST(r.relative_residual == 1.0);
  }
  // BiCGSTAB on a rotation: r0^H A r0 = 0; GMRES solves it.
  const auto rot = kronex::sparse_operator<double>::from_entries({2}, {{0, 1, 1.0}, {1, 0, -1.0}});
  const kronex::device_tensor<double, 1> b2(xt::xtensor<double, 1>{1.0, 0.0});
  kronex::device_tensor<double, 1> x2(xt::xtensor<double, 1>{0.0, 0.0});
  auto r = kronex::bicgstab(rot, b2, x2);
  BOOST_TEST(r.status == krylov_status::breakdown_alpha, r.message);
  r = kronex::gmres(rot, b2, x2);
  BOOST_TEST(r.converged, r.message);
  const auto x2h = x2.to_host();
  BOOST_TEST(std::abs(x2h(0)) < 1e-14);
  BOOST_TEST(std::abs(x2h(1) - 1.0) < 1e-14);
  // A negative definite preconditioner: refused at the first check.
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const auto negative = -1.0 * pb.laplacian_sum().inverse();
  const kronex::device_tensor<double, 3> b3(kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2}));
  for (krylov_method m : {krylov_method::cg, krylov_method::minres}) {
    kronex::device_tensor<double, 3> x3(xt::xtensor<double, 3>(xt::zeros<double>({pb.n0, pb.n1, pb.n2})));
    const auto rn = kronex::compile_krylov(m, A, negative, b3)(b3, x3);
    BOOST_TEST(rn.status == krylov_status::indefinite_preconditioner, rn.message);
    BOOST_TEST(rn.iterations == 0u);
  }
  // A NaN in b: nothing is done.
  const kronex::device_tensor<double, 1> bn(xt::xtensor<double, 1>{1.0, std::nan(""), 0.0});
  kronex::device_tensor<double, 1> xn(xt::xtensor<double, 1>{0.0, 0.0, 0.0});
  r = kronex::cg(D, bn, xn);
  BOOST_TEST(r.status == krylov_status::non_finite, r.message);
  // b = 0: x = 0 without iterating.
  const kronex::device_tensor<double, 1> b0(xt::xtensor<double, 1>{0.0, 0.0, 0.0});
  kronex::device_tensor<double, 1> x0(xt::xtensor<double, 1>{5.0, 6.0, 7.0});
  r = kronex::minres(D, b0, x0);
  BOOST_TEST(r.converged, r.message);
  BOOST_TEST(xt::all(xt::equal(x0.to_host(), 0.0)));
}

BOOST_AUTO_TEST_CASE(shape_errors_name_both_shapes) {
  const problem3d& pb = problem();
  const auto A = kronex::sparse_operator<double>::from_entries(pb.shape(), pb.laplacian_entries);
  const kronex::device_tensor<double, 3> b(kronex_test::random_tensor<double, 3>({pb.n0, pb.n1, pb.n2}));
  kronex::device_tensor<double, 3> wrong(std::array<std::size_t, 3>{pb.n0, pb.n1, pb.n2 + 1});
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { kronex::cg(A, b, wrong); },
                                                        {"kronex::cg", "(5,6,8)", "(5,6,7)"});
  // The operator's shape against the right-hand side's.
  const kronex::device_tensor<double, 3> b8(xt::xtensor<double, 3>(xt::zeros<double>({5, 6, 8})));
  kronex_test::expect_error<kronex::dimension_mismatch>(
      [&] { auto s = kronex::compile_krylov(krylov_method::gmres, A, b8); }, {"operator", "(5,6,7)", "(5,6,8)"});
  kronex_test::expect_error<kronex::dimension_mismatch>(
      [&] { auto s = kronex::compile_krylov(krylov_method::cg, A, pb.mass_preconditioner(), b8); }, {"(5,6,7)", "(5,6,8)"});
  // A compiled solver called with another shape.
  auto s = kronex::compile_krylov(krylov_method::cg, A, b);
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { s(b8, wrong); }, {"right-hand side", "(5,6,8)", "(5,6,7)"});
}

} // namespace
