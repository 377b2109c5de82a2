// The device backend's runs and entry points (results against the dense reference for every
// factor kind, operator and value type are in tests/conformance, built for the device too):
//  - a compiled operator's runs make no host<->device transfer, for N, T, C and R solves and
//    applies of every factor kind (checked under kronex::no_transfer_guard and with the counter),
//    and leave the input unchanged;
//  - lazy forms, nested lazy results, non-owning views, raw pointers, in place, the allocating
//    form, one-step plans in place (against the host result);
//  - the user story of the device backend, with its exact transfer counts and plan text.
#define BOOST_TEST_MODULE test_device_vs_host
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "kronex_device_test_support.hpp"

namespace {

using kronex::boundary;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::rel_error;

// Runs the compiled device operator twice under a transfer guard and checks that the counter
// did not move, that the plan says so, and that the input is unchanged.
template <class T, std::size_t D, class Expr>
void check_no_run_transfers(const Expr& expr, const std::array<std::size_t, D>& shape, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    const xt::xtensor<T, D> b = random_tensor<T, D>(shape);
    kronex::device_tensor<T, D> bd(b);
    auto solver = kronex::compile(expr, bd);
    kronex::device_tensor<T, D> xd(bd.shape());
    const auto before = kronex::transfers();
    {
      kronex::no_transfer_guard guard;
      solver(bd, xd);
      solver(bd, xd);  // a second run: same buffers
    }
    const auto during = kronex::transfers() - before;
    BOOST_TEST(during.calls() == 0u);
    BOOST_TEST(during.bytes() == 0u);
    BOOST_TEST(solver.plan().run_transfers() == 0u);
    BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  }
}

using kronex_test::band;

} // namespace

// Every factor kind (identity, diagonal, clamped and periodic band, dense) in one operator.
BOOST_AUTO_TEST_CASE_TEMPLATE(runs_make_no_transfers, T, value_types) {
  const auto c = band<T>(7, 2, 1, boundary::clamped, true);
  const auto p = band<T>(6, 1, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(5, true);
  const auto diag = kronex_test::random_diagonal<T>(4);
  const auto I = kronex::identity(3);
  const auto K = kronex::kron(c, I, p, diag, d);
  const std::array<std::size_t, 5> shape{7, 3, 6, 4, 5};
  for (int o = 0; o < 4; ++o) {
    const auto Ko = o == 0 ? K : o == 1 ? K.transpose() : o == 2 ? K.adjoint() : K.adjoint().transpose();
    const std::string letter(1, "NTCR"[o]);
    check_no_run_transfers<T, 5>(Ko.inverse(), shape, letter + " solve");
    check_no_run_transfers<T, 5>(Ko, shape, letter + " apply");
  }
}

BOOST_AUTO_TEST_CASE(lazy_forms_views_and_in_place) {
  using T = double;
  const auto c = band<T>(8, 2, 2, boundary::clamped, true);
  const auto p = band<T>(9, 1, 1, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(7, false);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({8, 9, 7});
  const xt::xtensor<T, 3> host = kronex::kron(c, p, d).solve(b);

  kronex::device_tensor<T, 3> bd(b);
  // Lazy form: the backend follows the operand.
  kronex::device_tensor<T, 3> yd = kronex::kron(c, p, d).solve(bd);
  BOOST_TEST(rel_error(yd.to_host(), host) <= 1e-12);
  // Nested: apply(solve(b)) gives b back.
  kronex::device_tensor<T, 3> back = kronex::kron(c, p, d).apply(kronex::kron(c, p, d).solve(bd));
  BOOST_TEST(rel_error(back.to_host(), b) <= 1e-12);

  auto solver = kronex::compile(kronex::kron(c, p, d).inverse(), bd);
  // On an application's own device buffer, through a non-owning view.
  kronex::device_tensor<T, 3> app(b);
  kronex::device_view<T, 3> view(app.data(), app.shape());
  kronex::device_tensor<T, 3> out(bd.shape());
  solver(view, out.view());
  BOOST_TEST(rel_error(out.to_host(), host) <= 1e-12);
  // In place: x is b.
  {
    kronex::no_transfer_guard guard;
    solver(view, view);
  }
  BOOST_TEST(rel_error(app.to_host(), host) <= 1e-12);
  // Raw device pointers.
  kronex::device_tensor<T, 3> raw(bd.shape());
  solver.run(bd.data(), raw.data());
  BOOST_TEST(rel_error(raw.to_host(), host) <= 1e-12);
  // The allocating form.
  kronex::device_tensor<T, 3> alloc = solver(bd);
  BOOST_TEST(rel_error(alloc.to_host(), host) <= 1e-12);
  // One-step plans in place need the lone ping-pong buffer.
  auto one = kronex::compile(kronex::kron(kronex::identity(8), p, kronex::identity(7)).inverse(), bd);
  kronex::device_tensor<T, 3> inplace(b);
  one(inplace, inplace);
  const xt::xtensor<T, 3> one_host = kronex::kron(kronex::identity(8), p, kronex::identity(7)).solve(b);
  BOOST_TEST(rel_error(inplace.to_host(), one_host) <= 1e-12);
}

// The user story of the device backend, as written in its issue, line for line.
BOOST_AUTO_TEST_CASE(issue_example) {
  const auto A1 = kronex::gallery::bspline_mass<double>(12, 3);
  const auto A2 = kronex::gallery::bspline_mass<double>(10, 3, boundary::periodic);
  const auto A3 = kronex::gallery::bspline_mass<double>(8, 2);
  const xt::xtensor<double, 3> b = random_tensor<double, 3>({12, 10, 8});
  const auto start = kronex::transfers();

  kronex::device_tensor<double, 3> bd(b);                    // upload: one counted transfer
  auto solver = kronex::compile(kronex::kron(A1, A2, A3).inverse(), bd);  // inverses uploaded once
  kronex::device_tensor<double, 3> xd(bd.shape());
  {
    kronex::no_transfer_guard guard;                         // any host<->device copy in scope throws
    solver(bd, xd);                                          // one GEMM per mode, on the device
  }
  kronex::device_tensor<double, 3> yd = kronex::kron(A1, A2, A3).solve(bd);  // lazy form works too
  xt::xtensor<double, 3> x = xd.to_host();                   // download: one counted transfer
  std::ostringstream printed;
  printed << solver;                                         // plan shows device steps

  const xt::xtensor<double, 3> host = kronex::kron(A1, A2, A3).solve(b);
  BOOST_TEST(rel_error(x, host) <= 1e-12);
  BOOST_TEST(rel_error(yd.to_host(), host) <= 1e-12);
  // 1 upload of b, 3 + 3 matrix uploads (compile, lazy solve), 2 downloads.
  const auto used = kronex::transfers() - start;
  BOOST_TEST(used.uploads == 7u);
  BOOST_TEST(used.downloads == 2u);
  BOOST_TEST(used.upload_bytes == (12 * 10 * 8 + 2 * (12 * 12 + 10 * 10 + 8 * 8)) * sizeof(double));
  const std::string plan = printed.str();
  BOOST_TEST(plan.find("[device ") != std::string::npos);
  BOOST_TEST(plan.find("gemm_strided_batched") != std::string::npos);
  BOOST_TEST(plan.find("transfers  setup=3") != std::string::npos);
  BOOST_TEST(plan.find("per run=0 (0B)") != std::string::npos);
}
