// The device backend against the host backend (and, at small sizes, the dense reference): the
// same expressions, compiled for a device_tensor and for an xt::xtensor, must agree at 1e-12
// relative in double (1e-5 in float), and each device solve must make no host<->device transfer
// (checked under kronex::no_transfer_guard and with the transfer counter).
//
// Two routes, as in the host tests: the typed public API (kron(...), compile, lazy solve) on a
// fixed list of cases, and device plans built from runtime operator descriptions, which sweep
// every combination of factor kinds in 3D at no compile-time cost.
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
using kronex::op;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;
using kronex_test::random_band_matrix;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::rel_error;
using kronex_test::to_banded;
using kronex_test::tolerance;

// Solves (or applies) with the compiled device operator under a transfer guard, checks the counter
// did not move, and compares with the host result of the same expression.
template <class T, std::size_t D, class Expr>
void check_against_host(const Expr& expr, const std::array<std::size_t, D>& shape, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    const xt::xtensor<T, D> b = random_tensor<T, D>(shape);
    const xt::xtensor<T, D> host = kronex::compile(expr, b)(b);

    kronex::device_tensor<T, D> bd(b);
    auto solver = kronex::compile(expr, bd);
    kronex::device_tensor<T, D> xd(bd.shape());
    const auto before = kronex::transfers();
    {
      kronex::no_transfer_guard guard;
      solver(bd, xd);
      solver(bd, xd);  // a second run: same buffers, same result
    }
    const auto during = kronex::transfers() - before;
    BOOST_TEST(during.calls() == 0u);
    BOOST_TEST(during.bytes() == 0u);
    BOOST_TEST(solver.plan().run_transfers() == 0u);

    const xt::xtensor<T, D> device = xd.to_host();
    const double err = rel_error(device, host);
    BOOST_TEST(err <= tolerance<T>(), "device vs host relative error " << err << " > " << tolerance<T>() << "\n"
                                                                       << solver);
    // The input is never modified.
    BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  }
}

using kronex_test::band;

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(one_to_four_dimensions, T, value_types) {
  const auto c = band<T>(7, 2, 1, boundary::clamped, true);
  const auto p = band<T>(9, 2, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(5, true);
  const auto c2 = band<T>(6, 1, 3, boundary::clamped);
  check_against_host<T, 1>(kronex::kron(c).inverse(), {7}, "1D clamped solve");
  check_against_host<T, 1>(kronex::kron(p).inverse(), {9}, "1D periodic solve");
  check_against_host<T, 2>(kronex::kron(c, p).inverse(), {7, 9}, "2D clamped x periodic");
  check_against_host<T, 3>(kronex::kron(c, p, d).inverse(), {7, 9, 5}, "3D clamped x periodic x dense");
  check_against_host<T, 3>(kronex::kron(d, c, p).inverse(), {5, 7, 9}, "3D dense x clamped x periodic");
  check_against_host<T, 4>(kronex::kron(p, d, c2, c).inverse(), {9, 5, 6, 7}, "4D mixed");
  check_against_host<T, 3>(kronex::kron(c, p, d), {7, 9, 5}, "3D apply");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(transpose_adjoint_conjugate, T, value_types) {
  const auto c = band<T>(8, 2, 1, boundary::clamped, true);
  const auto p = band<T>(7, 1, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(6, true);
  const auto K = kronex::kron(c, p, d);
  check_against_host<T, 3>(K.transpose().inverse(), {8, 7, 6}, "solve with the transpose");
  check_against_host<T, 3>(K.adjoint().inverse(), {8, 7, 6}, "solve with the adjoint");
  check_against_host<T, 3>(K.adjoint().transpose().inverse(), {8, 7, 6}, "solve with the conjugate");
  check_against_host<T, 3>(K.adjoint(), {8, 7, 6}, "apply the adjoint");
}

BOOST_AUTO_TEST_CASE_TEMPLATE(identity_and_diagonal_factors, T, value_types) {
  const auto c = band<T>(6, 1, 1, boundary::clamped);
  std::vector<T> dv(5);
  for (auto& v : dv) v = kronex_test::dominant_diagonal<T>(1);
  const auto diag = kronex::diagonal(dv);
  check_against_host<T, 3>(kronex::kron(kronex::identity(4), c, diag).inverse(), {4, 6, 5}, "identity, band, diagonal");
  check_against_host<T, 2>(kronex::kron(diag, kronex::identity(3)).adjoint().inverse(), {5, 3}, "diagonal adjoint");
  check_against_host<T, 2>(kronex::kron(c, kronex::identity(3)), {6, 3}, "band then identity (apply)");
  check_against_host<T, 2>(kronex::kron(kronex::identity(6), kronex::identity(3)).inverse(), {6, 3}, "identities only (copy)");
}

// Against the dense Kronecker oracle too, so the device path does not only agree with the host
// path but with the one reference every backend is checked against.
BOOST_AUTO_TEST_CASE_TEMPLATE(against_reference, T, value_types) {
  const auto c = band<T>(5, 1, 2, boundary::clamped, true);
  const auto p = band<T>(6, 2, 1, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(4, true);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({5, 6, 4});
  const auto K = kronex::kron(c, p, d);
  const auto ref = kronex::reference::solve(K.adjoint(), b);
  kronex::device_tensor<T, 3> bd(b);
  kronex::device_tensor<T, 3> xd = K.adjoint().solve(bd);
  const double err = rel_error(xd.to_host(), ref);
  BOOST_TEST(err <= 10 * tolerance<T>());
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

// Every combination of factor kinds at every mode of a 3D tensor, through runtime descriptions.
BOOST_AUTO_TEST_CASE_TEMPLATE(all_kind_combinations_3d, T, value_types) {
  const std::size_t n[3] = {5, 6, 4};
  std::vector<kronex::banded<T>> clamped, periodic;
  std::vector<xt::xtensor<T, 2>> dense;
  std::vector<kronex::diagonal_factor<T>> diag;
  for (std::size_t k = 0; k < 3; ++k) {
    clamped.push_back(band<T>(n[k], 1, 2, boundary::clamped, true));
    periodic.push_back(band<T>(n[k], 1, 1, boundary::periodic));
    dense.push_back(random_dense_matrix<T>(n[k], true));
    std::vector<T> d(n[k]);
    for (auto& v : d) v = kronex_test::dominant_diagonal<T>(1);
    diag.push_back(kronex::diagonal(d));
  }
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({n[0], n[1], n[2]});
  kronex::device_tensor<T, 3> bd(b);
  kronex::device_tensor<T, 3> xd(bd.shape());
  for (int combo = 0; combo < 125; ++combo) {
    for (op o : {op::none, op::adjoint}) {
      for (bool inverse : {true, false}) {
        kronex::operator_desc<T> desc;
        desc.trans = o;
        desc.inverse = inverse;
        std::ostringstream text;
        for (std::size_t k = 0, c = std::size_t(combo); k < 3; ++k, c /= 5) {
          switch (c % 5) {
            case 0: desc.factors.push_back(kronex::make_view(clamped[k])); text << "clamped "; break;
            case 1: desc.factors.push_back(kronex::make_view(periodic[k])); text << "periodic "; break;
            case 2: desc.factors.push_back(kronex::make_view<T>(dense[k])); text << "dense "; break;
            case 3: desc.factors.push_back(kronex::make_view<T>(kronex::identity(n[k]))); text << "identity "; break;
            case 4: desc.factors.push_back(kronex::make_view(diag[k])); text << "diagonal "; break;
          }
        }
        text << kronex::trans_letter(o) << (inverse ? " solve" : " apply");
        BOOST_TEST_CONTEXT(text.str()) {
          kronex::host_operator<T, 3> host_op(desc, {n[0], n[1], n[2]});
          const xt::xtensor<T, 3> host = host_op(b);
          kronex::device_operator<T, 3> dev(desc, {n[0], n[1], n[2]});
          const auto before = kronex::transfers();
          dev(bd, xd);
          BOOST_TEST((kronex::transfers() - before).calls() == 0u);
          BOOST_TEST(rel_error(xd.to_host(), host) <= tolerance<T>());
        }
      }
    }
  }
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
