// Host solves by substitution or by GEMMs with the dense inverse (compile_options::solves), and
// the planner's choice between them. The dense-inverse path on every factor kind, op and value
// type is the conformance suite's (its run test_conformance_host_dense_inverse); here: a folded
// periodic factor (n > 64, whose LU lives in another row order), each mode position against the dense
// reference, in place; errors and the factor store on that path; and the automatic choice: GEMMs
// for small n in large tensors, the substitution for large n and for tiny tensors, the model's
// predictions printed on every solve.
#define BOOST_TEST_MODULE test_solve_methods
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>
#include <memory>
#include <array>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex::solve_method;
using value_types = std::tuple<float, double, std::complex<double>>;

kronex::compile_options solving_by(solve_method how) {
  kronex::compile_options o;
  o.solves = how;
  return o;
}

// The printed method of each step of a plan ("lu_subst", "gemm x6", "scale", ...).
std::vector<std::string> methods(const kronex::plan_description& p) {
  std::vector<std::string> m;
  for (const auto& s : p.steps) m.push_back(kronex::step_method(s));
  return m;
}

bool is_gemm(const std::string& method) { return method.rfind("gemm", 0) == 0; }

} // namespace

// A folded periodic band (n = 70), a clamped band with pivoting and a dense factor, each solved
// by its dense inverse, for N, T, C and R: the dense reference's result, in place too. Catches an
// inverse formed in the folded order instead of A's, a transposed or unconjugated inverse, and
// GEMM flags that do not match the stored matrix.
BOOST_AUTO_TEST_CASE_TEMPLATE(dense_inverse_matches_the_reference, T, value_types) {
  const auto P = kronex::gallery::bspline_mass<T>(70, 2, boundary::periodic);
  const auto B = kronex_test::band<T>(6, 2, 1, boundary::clamped, true);
  const auto D = kronex_test::random_dense_matrix<T>(5, true);
  const auto b = kronex_test::random_tensor<T>(std::array<std::size_t, 3>{6, 70, 5});
  const auto K = kronex::kron(B, P, D);
  const double tol = kronex_test::tolerance<T>();
  auto check = [&](const auto& op, const char* what) {
    auto solver = kronex::compile(op.inverse(), b, solving_by(solve_method::dense_inverse));
    for (const std::string& m : methods(solver.plan())) BOOST_TEST(is_gemm(m), what << ": step method " << m);
    const xt::xtensor<T, 3> expected = kronex::reference::evaluate(op.inverse(), b);
    const xt::xtensor<T, 3> x = solver(b);
    BOOST_TEST(kronex_test::rel_error(x, expected) <= tol, what << ": error " << kronex_test::rel_error(x, expected));
    xt::xtensor<T, 3> y = b;
    solver(y, y);
    BOOST_TEST(kronex_test::rel_error(y, expected) <= tol, what << " in place: error " << kronex_test::rel_error(y, expected));
  };
  check(K, "N");
  check(K.transpose(), "T");
  check(K.adjoint(), "C");
  check(K.adjoint().transpose(), "R");
  // The plan says what was formed: the LU, then the n x n inverse.
  auto solver = kronex::compile(K.inverse(), b, solving_by(solve_method::dense_inverse));
  const auto& setup = solver.plan().setup.at(1);
  BOOST_TEST(setup.method == "gbtrf kl=4 ku=4 folded, dense inverse", setup.method);
  BOOST_TEST(setup.result.find("inverse 70x70") != std::string::npos, setup.result);
  BOOST_TEST(solver.plan().factor_bytes == (36 + 70 * 70 + 25) * sizeof(T));
  // A positive definite band that gbtrf would pivot is factored by band Cholesky (pbtrf), by
  // substitution and as a dense inverse; the plan names it so, and the results stay the
  // reference's.
  const auto Q = kronex::gallery::bspline_mass<T>(40, 5);
  const auto KQ = kronex::kron(B, Q, D);
  const auto bq = kronex_test::random_tensor<T>(std::array<std::size_t, 3>{6, 40, 5});
  const xt::xtensor<T, 3> expected = kronex::reference::evaluate(KQ.inverse(), bq);
  for (const auto how : {solve_method::substitution, solve_method::dense_inverse}) {
    auto q = kronex::compile(KQ.inverse(), bq, solving_by(how));
    const std::string method = q.plan().setup.at(1).method;
    BOOST_TEST(method == (how == solve_method::substitution ? "pbtrf kd=5" : "pbtrf kd=5, dense inverse"), method);
    xt::xtensor<T, 3> x = bq;
    q(bq, x);
    BOOST_TEST(kronex_test::rel_error(x, expected) <= tol, method << ": error " << kronex_test::rel_error(x, expected));
  }
}

// The dense-inverse path factors as the substitution does: a singular factor is refused at
// compile time with its mode and LAPACK's info, before any inverse is formed.
BOOST_AUTO_TEST_CASE(singular_factor_is_refused_on_the_dense_inverse_path) {
  const auto A = kronex_test::band<double>(5, 1, 1, boundary::clamped);
  xt::xtensor<double, 2> S = xt::eye<double>(4);
  S(2, 2) = 0;
  const auto b = kronex_test::random_tensor<double>(std::array<std::size_t, 2>{5, 4});
  try {
    kronex::compile(kronex::kron(A, S).inverse(), b, solving_by(solve_method::dense_inverse));
    BOOST_FAIL("a singular factor was accepted");
  } catch (const kronex::singular_factor& e) {
    BOOST_TEST(e.mode() == 1u);
    BOOST_TEST(e.info() == 3);
  }
}

// Two operators compiled with one store, one by substitution, one by the dense inverse: the LU is
// factored once and serves both, and both solve correctly.
BOOST_AUTO_TEST_CASE(store_shares_the_lu_with_the_dense_inverse) {
  const auto A = kronex_test::band<double>(9, 2, 2, boundary::clamped, true);
  const auto b = kronex_test::random_tensor<double>(std::array<std::size_t, 2>{9, 9});
  auto store = std::make_shared<kronex::factor_store>();
  kronex::compile_options subst = solving_by(solve_method::substitution), inverse = solving_by(solve_method::dense_inverse);
  subst.store = inverse.store = store;
  const auto K = kronex::kron(A, A);
  auto s1 = kronex::compile(K.inverse(), b, subst);
  auto s2 = kronex::compile(K.inverse(), b, inverse);
  BOOST_TEST(store->hits() >= 1u);
  BOOST_TEST(s2.plan().setup.at(0).result.find("shared") != std::string::npos, s2.plan().setup.at(0).result);
  const xt::xtensor<double, 2> expected = kronex::reference::evaluate(K.inverse(), b);
  BOOST_TEST(kronex_test::rel_error(s1(b), expected) <= 1e-12);
  BOOST_TEST(kronex_test::rel_error(s2(b), expected) <= 1e-12);
}

// automatic: the GEMMs for n = 8 in a tensor of 2^19 values (the substitution moves every value
// through a panel for 6 multiply-adds, the GEMMs do 8 in registers), the substitution for n = 256
// (256 multiply-adds a value against 6), for a pair of modes that runs fused, and for every mode
// of a tiny tensor; substitution and
// dense_inverse force the choice. Every banded solve prints both predictions. Explained plans
// only: nothing is factored.
BOOST_AUTO_TEST_CASE(automatic_follows_the_cost_model) {
  const auto M8 = kronex::gallery::bspline_mass<double>(8, 3, boundary::clamped);
  const auto M256 = kronex::gallery::bspline_mass<double>(256, 3, boundary::clamped);
  const kronex::shape_t large{8, 256, 256};
  const auto K = kronex::kron(M8, M256, M256);
  const auto automatic = methods(kronex::explain_plan(K.inverse(), large));
  BOOST_TEST_REQUIRE(automatic.size() == 3u);
  BOOST_TEST(is_gemm(automatic[0]), automatic[0]);
  BOOST_TEST(automatic[1] == "lu_subst");
  BOOST_TEST(automatic[2] == "lu_subst");
  for (const std::string& m : methods(kronex::explain_plan(K.inverse(), large, solving_by(solve_method::substitution))))
    BOOST_TEST(m == "lu_subst");
  for (const std::string& m : methods(kronex::explain_plan(K.inverse(), large, solving_by(solve_method::dense_inverse))))
    BOOST_TEST(is_gemm(m), m);
  // The predictions, as the plan prints them, on every banded solve; a GEMM solve is kind solve.
  const auto plan = kronex::explain_plan(K.inverse(), large);
  for (const auto& s : plan.steps) {
    BOOST_TEST((kronex::kind_of(s) == kronex::step_kind::solve));
    BOOST_TEST(kronex::step_info(s).model_subst_s > 0);
    BOOST_TEST(kronex::step_info(s).model_gemm_s > 0);
  }
  const std::string printed = kronex::to_string(plan);
  BOOST_TEST(printed.find("model: lu_subst ") != std::string::npos, printed);

  // 48^3: alone, the last mode would run as GEMMs (the model predicts them 20 % faster than its
  // substitution, whose lines are transposed into strips); with mode 1 it forms a fused pair,
  // which moves the tensor once for both, so the pair stays on the substitution.
  const auto M48 = kronex::gallery::bspline_mass<double>(48, 3, boundary::clamped);
  const kronex::shape_t cube{48, 48, 48};
  const auto I48 = kronex::identity(48);
  const auto alone = methods(kronex::explain_plan(kronex::kron(I48, I48, M48).inverse(), cube));
  BOOST_TEST_REQUIRE(alone.size() == 1u);
  BOOST_TEST(is_gemm(alone[0]), alone[0]);
  const auto all = kronex::explain_plan(kronex::kron(M48, M48, M48).inverse(), cube);
  for (const std::string& m : methods(all)) BOOST_TEST(m == "lu_subst", "48^3: " << m);
  BOOST_TEST(kronex::fused_with_next(all.steps.at(1)));

  const auto M4 = kronex::gallery::bspline_mass<double>(4, 3, boundary::clamped);
  for (const std::string& m : methods(kronex::explain_plan(kronex::kron(M4, M4, M4).inverse(), kronex::shape_t{4, 4, 4})))
    BOOST_TEST(m == "lu_subst", "a 64-value tensor: " << m);
}
