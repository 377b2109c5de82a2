// Host plans on several threads (compile_options::threads): every step kind (banded and periodic
// solves in panels, a fused slab pair, a dense apply's GEMMs and row programs, a diagonal, a
// copy) gives the same bits on 2 and 3 threads as on 1, out of place and in place, and matches
// the dense reference at small sizes, where an explicit count threads anyway. The default
// follows OpenMP (OMP_NUM_THREADS) for large tensors and is one thread for small ones; the plan
// prints its threads and counts one workspace per thread.
#define BOOST_TEST_MODULE test_host_threads
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstddef>
#include <tuple>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using value_types = std::tuple<float, double, std::complex<double>>;

kronex::compile_options threads(std::size_t t) {
  kronex::compile_options o;
  o.threads = t;
  return o;
}

template <class T, std::size_t D>
bool same_bits(const xt::xtensor<T, D>& a, const xt::xtensor<T, D>& b) {
  return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin());
}

// expr on x with 1, 2 and 3 threads: the same bits, in place too; the result of 1 thread is
// returned for the caller's check against a reference.
template <class T, std::size_t D, class Expr>
xt::xtensor<T, D> check_thread_counts(const Expr& expr, const xt::xtensor<T, D>& x, const char* what) {
  auto one = kronex::compile(expr, x, threads(1));
  BOOST_TEST(one.plan().threads == 1u);
  const xt::xtensor<T, D> y1 = one(x);
  for (std::size_t t : {2, 3}) {
    BOOST_TEST_CONTEXT(what << ", " << t << " threads [" << kronex::value_traits<T>::name << "]") {
      auto many = kronex::compile(expr, x, threads(t));
#if defined(_OPENMP)
      BOOST_TEST(many.plan().threads == t);
      BOOST_TEST(kronex::to_string(many.plan()).find("threads=" + std::to_string(t)) != std::string::npos);
#endif
      BOOST_TEST(same_bits(many(x), y1));
      xt::xtensor<T, D> z = x;
      many(z, z);
      BOOST_TEST(same_bits(z, y1));
    }
  }
  return y1;
}

} // namespace

// Small tensors, explicit thread counts: against the reference (dense Kronecker product).
BOOST_AUTO_TEST_CASE_TEMPLATE(explicit_threads_match_the_reference, T, value_types) {
  const auto A = kronex_test::band<T>(7, 2, 1, boundary::clamped, true);
  const auto B = kronex_test::band<T>(5, 1, 1, boundary::periodic);
  const xt::xtensor<T, 2> C = kronex_test::random_dense_matrix<T>(6, true);
  const auto E = kronex_test::random_diagonal<T>(3);
  const auto K = kronex::kron(A, B, C, E);
  const auto x = kronex_test::random_tensor<T, 4>({7, 5, 6, 3});
  // The reference computes in T too (its own rounding is in the bound).
  const double tol = 10 * kronex_test::tolerance<T>();
  const auto check = [&](const auto& expr, const auto& operand, const char* what) {
    const auto got = check_thread_counts(expr, operand, what);
    const auto ref = kronex::reference::evaluate(expr, operand);
    BOOST_TEST(kronex_test::rel_error(got, ref) < tol, what);
  };
  check(K.inverse(), x, "solve");
  check(K.transpose().inverse(), x, "transposed solve");
  check(K, x, "apply");
  check(K.adjoint(), x, "adjoint apply");
  // n = 1 and an identity (a copy step).
  const auto one = kronex_test::band<T>(1, 0, 0, boundary::clamped);
  check(kronex::kron(one, kronex::identity(5), A).inverse(), kronex_test::random_tensor<T, 3>({1, 5, 7}),
        "n = 1 and an identity");
}

// Tensors above the default's threshold: several panels per mode, a fused slab pair, GEMMs.
BOOST_AUTO_TEST_CASE_TEMPLATE(large_tensors_give_the_same_bits, T, value_types) {
  const auto M = kronex::gallery::bspline_mass<T>(40, 3);
  const auto P = kronex::gallery::bspline_mass<T>(36, 2, boundary::periodic);
  const auto Q = kronex::gallery::bspline_stiffness<T>(30, 3, boundary::periodic);
  const xt::xtensor<T, 2> G = kronex_test::random_dense_matrix<T>(30, false);
  const auto x = kronex_test::random_tensor<T, 3>({40, 36, 30});
  BOOST_REQUIRE(x.size() >= kronex::host_parallel_min_values);
  const xt::xtensor<T, 3> y = check_thread_counts(kronex::kron(M, P, G).inverse(), x, "solve");
  check_thread_counts(kronex::kron(M, P, Q), x, "banded apply");
  check_thread_counts(kronex::kron(M, P, G), x, "apply with a dense factor (GEMM)");
  // The solve undone by the apply: the threaded kernels compute the right thing at this size.
  const xt::xtensor<T, 3> back = kronex::compile(kronex::kron(M, P, G), y, threads(2))(y);
  BOOST_TEST(kronex_test::rel_error(back, x) < 100 * kronex_test::tolerance<T>());
}

// A 2D tensor of 8 MiB or more: one thread runs the first mode as a row sweep with the last
// mode interleaved (row_sweep.hpp), more threads run the two steps apart, the last mode first.
// The same bits either way; the plans say which ran.
BOOST_AUTO_TEST_CASE_TEMPLATE(row_sweeps_give_the_same_bits, T, value_types) {
  const std::size_t n0 = kronex::detail::row_sweep_min_bytes / (1026 * sizeof(T)) + 1;
  const auto M = kronex::gallery::bspline_mass<T>(n0, 3, boundary::periodic);
  const auto N = kronex::gallery::bspline_mass<T>(1026, 3);
  const auto x = kronex_test::random_tensor<T, 2>({n0, 1026});
  BOOST_REQUIRE(x.size() * sizeof(T) >= kronex::detail::row_sweep_min_bytes);
  const auto solve = kronex::kron(M, N).inverse();
  BOOST_TEST(kronex::interleaved_with_next(kronex::compile(solve, x, threads(1)).plan().steps[0]));
  const auto two = kronex::compile(solve, x, threads(2)).plan();
  BOOST_TEST_REQUIRE(two.steps.size() == 2u);
  BOOST_TEST(kronex::step_info(two.steps[0]).mode == 1u);  // the last mode first
  BOOST_TEST(!kronex::interleaved_with_next(two.steps[0]));
  check_thread_counts(solve, x, "row sweep");
}

// The default (threads = 0): OpenMP's count for a large tensor, one thread for a small one; the
// workspace is one per thread.
BOOST_AUTO_TEST_CASE(default_thread_count_and_workspace) {
  const auto M = kronex::gallery::bspline_mass<double>(48, 3);
  const xt::xtensor<double, 3> large = kronex_test::random_tensor<double, 3>({48, 48, 48});
  const xt::xtensor<double, 3> small = kronex_test::random_tensor<double, 3>({8, 8, 8});
  const auto K = kronex::kron(M, M, M);
  const auto S = kronex::kron(kronex::gallery::bspline_mass<double>(8, 3), kronex::identity(8), kronex::identity(8));
  BOOST_TEST(kronex::compile(K.inverse(), large).plan().threads == kronex::detail::resolve_host_threads(0));
  BOOST_TEST(kronex::compile(S.inverse(), small).plan().threads == 1u);
#if defined(_OPENMP)
  const auto one = kronex::explain_plan(K.inverse(), large.shape(), threads(1));
  const auto two = kronex::explain_plan(K.inverse(), large.shape(), threads(2));
  BOOST_TEST(two.threads == 2u);
  BOOST_TEST(two.workspace_bytes == 2 * one.workspace_bytes);
  BOOST_TEST(kronex::to_string(one).find("threads=") == std::string::npos);
#endif
}
