// sparse_operator and matrix_free inside operator expressions (sums, scalar multiples,
// compositions, transposes, adjoints) on host tensors, against the dense reference
// (kronex::reference::evaluate, which forms each operator column by column): apply out of place
// and in place, in double and complex<double>; the refusals (solve and inverse say to use a Krylov
// solver, a matrix_free's transpose is unknown, shapes must agree);
// the plan's csr_spmv step; and such an expression as the operator of a Krylov solve.
#define BOOST_TEST_MODULE test_flat_in_expressions
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include <xtensor-blas/xlinalg.hpp>

#include <kronex/kronex.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex_test::rel_error;
using cd = std::complex<double>;

constexpr std::size_t n0 = 4, n1 = 5, n2 = 3, N = n0 * n1 * n2;

// A random sparse N x N operator on shape (n0, n1, n2), about 8 entries per row, not symmetric.
template <class T>
kronex::sparse_operator<T> random_sparse() {
  std::vector<kronex::entry<T>> e;
  std::uniform_int_distribution<std::size_t> col(0, N - 1);
  for (std::size_t i = 0; i < N; ++i) {
    e.push_back({i, i, T(4) + kronex_test::random_value<T>()});
    for (int k = 0; k < 7; ++k) e.push_back({i, col(kronex_test::rng()), kronex_test::random_value<T>()});
  }
  return kronex::sparse_operator<T>::from_entries({n0, n1, n2}, e);
}

template <class T>
struct factors {
  kronex::banded<T> A = kronex_test::band<T>(n0, 1, 2, kronex::boundary::clamped, true);
  kronex::banded<T> B = kronex_test::band<T>(n1, 2, 1, kronex::boundary::clamped, true);
  kronex::banded<T> C = kronex_test::band<T>(n2, 1, 1, kronex::boundary::clamped, true);
};

} // namespace

using value_types = std::tuple<double, cd>;

BOOST_AUTO_TEST_CASE_TEMPLATE(apply_matches_the_dense_reference, T, value_types) {
  const auto S = random_sparse<T>();
  factors<T> f;
  const auto K = kronex::kron(f.A, f.B, f.C);
  const auto x = kronex_test::random_tensor<T, 3>({n0, n1, n2});
  const T c = kronex_test::random_value<T>();

  const auto check = [&](const auto& expr, const char* what) {
    BOOST_TEST_CONTEXT(what) {
      const xt::xtensor<T, 3> ref = kronex::reference::evaluate(expr, x);
      const xt::xtensor<T, 3> out = expr.apply(x);
      BOOST_TEST(rel_error(out, ref) < 1e-12);
      // In place through a compiled operator: the leaf's out-of-place action goes through scratch.
      auto op = kronex::compile(expr, x);
      xt::xtensor<T, 3> y = x;
      op.run(y.data(), y.data());
      BOOST_TEST(rel_error(y, ref) < 1e-12);
    }
  };
  check(S + K, "S + K");
  check(c * S - K, "c S - K");
  check(K * S, "K S");
  check(K.inverse() * S, "K^-1 S (the preconditioned operator)");
  check(S * K.inverse() + 2.0 * S, "S K^-1 + 2 S");
  check((S + K).transpose(), "(S + K)^T");
  check((S * K).adjoint(), "(S K)^H = K^H S^H");
  check((c * S + K).adjoint().transpose(), "conj(c S + K)");
}

BOOST_AUTO_TEST_CASE(matrix_free_in_a_sum_and_its_refused_transpose) {
  const auto S = random_sparse<double>();
  const kronex::matrix_free<double> F({n0, n1, n2}, [&S](const double* x, double* y) { S.run(x, y); });
  factors<double> f;
  const auto K = kronex::kron(f.A, f.B, f.C);
  const auto x = kronex_test::random_tensor<double, 3>({n0, n1, n2});
  const xt::xtensor<double, 3> via_free = (F + K).apply(x);
  const xt::xtensor<double, 3> via_sparse = (S + K).apply(x);
  BOOST_TEST(rel_error(via_free, via_sparse) < 1e-14);
  kronex_test::expect_error<kronex::invalid_operator>([&] { xt::xtensor<double, 3> y = (F + K).transpose().apply(x); },
                                                      {"matrix_free(4,5,3)", "only its own action", "transpose"});
}

BOOST_AUTO_TEST_CASE(solving_an_expression_with_a_flat_operator_points_at_krylov) {
  const auto S = random_sparse<double>();
  factors<double> f;
  const auto K = kronex::kron(f.A, f.B, f.C);
  const auto b = kronex_test::random_tensor<double, 3>({n0, n1, n2});
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 3> y = (S + K).solve(b); },
                                                   {"sparse_operator(4,5,3)", "no Kronecker structure", "Krylov"});
  kronex_test::expect_error<kronex::not_separable>([&] { xt::xtensor<double, 3> y = (K * S).solve(b); },
                                                   {"sparse_operator(4,5,3)", "no direct solve", "kronex::cg"});
}

BOOST_AUTO_TEST_CASE(shapes_must_agree) {
  const auto S = random_sparse<double>();
  const auto M = kronex::gallery::bspline_mass<double>(4, 1);
  kronex_test::expect_error<kronex::dimension_mismatch>([&] { (void)(S + kronex::kron(M, M, M)); },
                                                        {"the sum", "(4,5,3)", "(4,4,4)"});
}

BOOST_AUTO_TEST_CASE(the_plan_shows_the_spmv_step) {
  const auto S = random_sparse<double>();
  factors<double> f;
  const auto x = kronex_test::random_tensor<double, 3>({n0, n1, n2});
  std::ostringstream os;
  os << kronex::compile((S + 0.5 * kronex::kron(f.A, f.B, f.C)).transpose(), x);
  const std::string plan = os.str();
  BOOST_TEST_MESSAGE(plan);
  BOOST_TEST(plan.find("sparse_operator(4,5,3)^T+0.5*kron(f0,f1,f2)^T") != std::string::npos);
  BOOST_TEST(plan.find("apply  csr_spmv sparse_operator(4,5,3)^T") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_expression_with_a_sparse_operator_is_a_krylov_operator) {
  // A = S + σ M⊗M⊗M, S a variable-coefficient mass matrix: symmetric positive definite, not a
  // Kronecker product; CG preconditioned by (M⊗M⊗M)^-1 against a dense solve of the same A.
  const auto S = kronex::gallery::variable_mass<double>({n0, n1, n2}, 1, [](const double* p) { return 1.5 + p[0] * p[1]; });
  const auto M0 = kronex::gallery::bspline_mass<double>(n0, 1), M1 = kronex::gallery::bspline_mass<double>(n1, 1),
             M2 = kronex::gallery::bspline_mass<double>(n2, 1);
  const auto A = S + 0.25 * kronex::kron(M0, M1, M2);
  const auto b = kronex_test::random_tensor<double, 3>({n0, n1, n2});
  xt::xtensor<double, 3> x = xt::zeros<double>({n0, n1, n2});
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-12;
  const kronex::krylov_result r = kronex::cg(A, b, x, kronex::kron(M0, M1, M2).inverse(), opt);
  BOOST_TEST(r.converged);
  const xt::xtensor<double, 2> dense = kronex::reference::dense_operator(A.describe<double>());
  const xt::xtensor<double, 1> flat_b = xt::flatten(b);
  const xt::xtensor<double, 1> want = xt::linalg::solve(dense, flat_b);
  BOOST_TEST(rel_error(xt::flatten(x), want) < 1e-9);
}
