// kronex::function_solver on the host backend: a factor known only by the user's solve function
// solve(x, count), which solves A y = x in place for `count` contiguous vectors of length n.
//  - a function_solver wrapping a known banded matrix B's solve gives the result of B itself,
//    in 1D to 4D, at every mode, in double and complex<double>, to 1e-12;
//  - what the function receives: for the last mode the lines are contiguous already, and the
//    function is called once, on the output tensor itself, with count = the number of lines;
//    for the other modes the lines are gathered into contiguous vectors elsewhere (a bounded
//    workspace): every call has count >= 1 and the calls solve every line of the mode exactly
//    once;
//  - exceptions thrown by the function propagate unchanged, and the operator stays usable;
//  - the plan shows method `function` for that step (and in its setup line).
#define BOOST_TEST_MODULE test_function_solver
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <xtensor/xmanipulation.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex_test::random_band_matrix;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::rel_error;
using kronex_test::to_banded;
using value_types = std::tuple<double, std::complex<double>>;

using kronex_test::band;

// What the function saw: one record per call.
template <class T>
struct call_log {
  struct call {
    const T* x;
    std::size_t count;
  };
  std::vector<call> calls;
  std::size_t lines() const {
    std::size_t s = 0;
    for (const auto& c : calls) s += c.count;
    return s;
  }
};

// A function_solver solving with the banded matrix B, by a compiled 1D host solve run on each of
// the `count` vectors; every call is logged.
template <class T>
kronex::function_solver<T> wrap(const kronex::banded<T>& B, std::shared_ptr<call_log<T>> log) {
  const std::size_t n = B.size();
  auto one = std::make_shared<kronex::host_operator<T, 1>>(
      kronex::compile(kronex::kron(B).inverse(), std::array<std::size_t, 1>{n}));
  return kronex::function_solver<T>(n, [n, one, log](T* x, std::size_t count) {
    log->calls.push_back({x, count});
    for (std::size_t c = 0; c < count; ++c) one->run(x + c * n, x + c * n);
  });
}

// Checks the calls of one run of a D-dimensional solve of a tensor x (N values) whose function
// solver acts on mode k of size n: the last mode's lines are solved in one call on x itself; the
// other modes' lines are gathered outside x, in calls of at least one line each.
template <class T>
void check_calls(const call_log<T>& log, const T* x, std::size_t N, std::size_t n, bool last_mode) {
  BOOST_TEST(log.lines() == N / n);
  BOOST_REQUIRE(!log.calls.empty());
  if (last_mode) {
    BOOST_TEST(log.calls.size() == 1u);
    BOOST_TEST(log.calls[0].x == x);
    BOOST_TEST(log.calls[0].count == N / n);
  } else {
    for (const auto& c : log.calls) {
      BOOST_TEST(c.count >= 1u);
      const bool inside = c.x >= x && c.x < x + N;
      BOOST_TEST(!inside, "gathered lines were handed over inside the tensor");
    }
  }
}

// The D-dimensional case with the function solver at mode k: the other modes get a mix of
// factor kinds (clamped band with pivoting, periodic band, dense, diagonal), compiled through
// runtime operator descriptions so all (D, k) pairs cost one instantiation per rank.
template <class T, std::size_t D>
void check_rank(const std::array<std::size_t, D>& shape) {
  std::vector<kronex::banded<T>> clamped, periodic;
  std::vector<xt::xtensor<T, 2>> dense;
  std::vector<kronex::diagonal_factor<T>> diag;
  for (std::size_t j = 0; j < D; ++j) {
    clamped.push_back(band<T>(shape[j], 1, 2, boundary::clamped, true));
    periodic.push_back(band<T>(shape[j], 1, 1, boundary::periodic));
    dense.push_back(random_dense_matrix<T>(shape[j], true));
    std::vector<T> d(shape[j]);
    for (auto& v : d) v = kronex_test::dominant_diagonal<T>(1);
    diag.push_back(kronex::diagonal(d));
  }
  const xt::xtensor<T, D> b = random_tensor<T, D>(shape);
  std::size_t N = 1;
  for (std::size_t v : shape) N *= v;
  for (std::size_t k = 0; k < D; ++k) {
    for (bool use_periodic : {false, true}) {
      BOOST_TEST_CONTEXT(D << "D, function solver at mode " << k << (use_periodic ? ", periodic B" : ", clamped B")) {
        const kronex::banded<T>& B = use_periodic ? periodic[k] : clamped[k];
        auto log = std::make_shared<call_log<T>>();
        const kronex::function_solver<T> F = wrap(B, log);
        kronex::operator_desc<T> with_b, with_f;
        with_b.inverse = with_f.inverse = true;
        for (std::size_t j = 0; j < D; ++j) {
          if (j == k) {
            with_b.factors.push_back(kronex::make_view(B));
            with_f.factors.push_back(kronex::make_view(F));
            continue;
          }
          kronex::factor_view<T> v;
          switch ((j + k) % 4) {
            case 0: v = kronex::make_view(clamped[j]); break;
            case 1: v = kronex::make_view<T>(dense[j]); break;
            case 2: v = kronex::make_view(periodic[j]); break;
            case 3: v = kronex::make_view(diag[j]); break;
          }
          with_b.factors.push_back(v);
          with_f.factors.push_back(v);
        }
        const kronex::shape_t s(shape.begin(), shape.end());
        kronex::host_operator<T, D> reference(with_b, s);
        kronex::host_operator<T, D> solver(with_f, s);
        BOOST_TEST(solver.plan().steps.size() == reference.plan().steps.size());
        const xt::xtensor<T, D> expected = reference(b);
        xt::xtensor<T, D> x = xt::xtensor<T, D>::from_shape(shape);
        solver(b, x);
        BOOST_TEST(rel_error(x, expected) <= 1e-12);
        check_calls(*log, x.data(), N, shape[k], k + 1 == D);
        // In place (x == b): the same result, the same calls on the tensor.
        log->calls.clear();
        xt::xtensor<T, D> y = b;
        solver(y, y);
        BOOST_TEST(rel_error(y, expected) <= 1e-12);
        check_calls(*log, y.data(), N, shape[k], k + 1 == D);
        // The step that runs the function says so.
        bool found = false;
        for (const auto& st : solver.plan().steps) {
          if (kronex::step_info(st).mode != k) continue;
          found = true;
          BOOST_TEST(std::holds_alternative<kronex::function_step>(st));
          BOOST_TEST(kronex::step_method(st) == "function");
          BOOST_TEST(std::string(kronex::to_string(kronex::kind_of(st))) == "solve");
          BOOST_TEST(!kronex::fused_with_next(st));
        }
        BOOST_TEST(found);
        BOOST_TEST(solver.plan().setup[k].method == "function");
        BOOST_TEST(solver.plan().setup[k].factor == "function n=" + std::to_string(shape[k]));
      }
    }
  }
}

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(same_result_as_the_wrapped_band_matrix, T, value_types) {
  check_rank<T, 1>({7});
  check_rank<T, 2>({6, 7});
  check_rank<T, 3>({5, 7, 4});
  check_rank<T, 4>({4, 5, 3, 6});
}

// The typed public API: kron(A, F, D).inverse() compiled and lazy, against kron(A, B, D).
BOOST_AUTO_TEST_CASE_TEMPLATE(typed_api, T, value_types) {
  const auto A = band<T>(6, 2, 1, boundary::clamped, true);
  const auto B = band<T>(7, 2, 2, boundary::periodic);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(5, true);
  auto log = std::make_shared<call_log<T>>();
  const auto F = wrap(B, log);
  const std::array<std::size_t, 3> shape{6, 7, 5};
  const xt::xtensor<T, 3> b = random_tensor<T, 3>(shape);
  const xt::xtensor<T, 3> expected = kronex::kron(A, B, D).solve(b);
  const xt::xtensor<T, 3> lazy = kronex::kron(A, F, D).solve(b);
  BOOST_TEST(rel_error(lazy, expected) <= 1e-12);
  auto solver = kronex::compile(kronex::kron(A, F, D).inverse(), shape);
  const xt::xtensor<T, 3> compiled = solver(b);
  BOOST_TEST(rel_error(compiled, expected) <= 1e-12);
  // Against the dense reference too (through B, which the reference can read).
  const auto ref = kronex::reference::solve(kronex::kron(A, B, D), b);
  BOOST_TEST(rel_error(compiled, ref) <= 1e-11);
  // Mode 1 of (6,7,5): 30 lines, gathered.
  BOOST_TEST(log->lines() == 2 * 30u);
}

// Lines of a mode that is not the last are gathered a bounded number at a time: with many lines
// after the mode (R = 3000 here, more than fit in the gather buffer), a slab takes several calls,
// the workspace (the gather buffer, as the only other step is a scale) stays well below the
// tensor's size, and the result is still exact.
BOOST_AUTO_TEST_CASE_TEMPLATE(gathered_lines_in_chunks, T, value_types) {
  const auto A = band<T>(2, 1, 0, boundary::clamped);
  const auto B = band<T>(4, 1, 1, boundary::clamped, true);
  std::vector<T> cv(3000);
  for (auto& v : cv) v = kronex_test::dominant_diagonal<T>(1);
  const auto C = kronex::diagonal(cv);  // no panel workspace: the function's gather buffer dominates
  auto log = std::make_shared<call_log<T>>();
  const auto F = wrap(B, log);
  const std::array<std::size_t, 3> shape{2, 4, 3000};
  const std::size_t N = 2 * 4 * 3000;
  const xt::xtensor<T, 3> b = random_tensor<T, 3>(shape);
  const xt::xtensor<T, 3> expected = kronex::kron(A, B, C).solve(b);
  kronex::compile_options substitution;  // A's solve as GEMMs would need a chunk buffer that dominates
  substitution.solves = kronex::solve_method::substitution;
  auto solver = kronex::compile(kronex::kron(A, F, C).inverse(), shape, substitution);
  xt::xtensor<T, 3> x = solver(b);
  BOOST_TEST(rel_error(x, expected) <= 1e-12);
  BOOST_TEST(log->lines() == N / 4);
  BOOST_TEST(log->calls.size() > 2u);  // more than one call per slab (L = 2)
  for (const auto& c : log->calls) {
    BOOST_TEST(c.count >= 1u);
    BOOST_TEST(c.count <= 3000u);
  }
  BOOST_TEST(solver.plan().workspace_bytes < N * sizeof(T));
  // The same with the function at mode 0 (R = 12000).
  log->calls.clear();
  const auto F0 = wrap(A, log);
  const xt::xtensor<T, 3> expected0 = kronex::kron(A, B, C).solve(b);
  const xt::xtensor<T, 3> x0 = kronex::compile(kronex::kron(F0, B, C).inverse(), shape)(b);
  BOOST_TEST(rel_error(x0, expected0) <= 1e-12);
  BOOST_TEST(log->lines() == N / 2);
  BOOST_TEST(log->calls.size() > 1u);
}

// A mode followed only by extent-1 modes has contiguous lines too: one call, on the tensor.
BOOST_AUTO_TEST_CASE(trailing_unit_modes_are_contiguous) {
  using T = double;
  const auto A = band<T>(5, 1, 1, boundary::clamped);
  const auto B = band<T>(6, 1, 2, boundary::clamped, true);
  auto log = std::make_shared<call_log<T>>();
  const auto F = wrap(B, log);
  const std::array<std::size_t, 3> shape{5, 6, 1};
  const xt::xtensor<T, 3> b = random_tensor<T, 3>(shape);
  const xt::xtensor<T, 3> expected = kronex::kron(A, B, kronex::identity(1)).solve(b);
  auto solver = kronex::compile(kronex::kron(A, F, kronex::identity(1)).inverse(), shape);
  xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape(shape);
  solver(b, x);
  BOOST_TEST(rel_error(x, expected) <= 1e-12);
  check_calls(*log, x.data(), 30, 6, true);
}

// Whatever the function throws comes out of the solve unchanged (type and contents), and the
// compiled operator can run again afterwards.
BOOST_AUTO_TEST_CASE_TEMPLATE(user_exceptions_propagate_unchanged, T, value_types) {
  struct user_failure {
    int code;
    std::string text;
  };
  const auto A = band<T>(4, 1, 1, boundary::clamped);
  const auto B = band<T>(5, 1, 1, boundary::clamped);
  auto one = std::make_shared<kronex::host_operator<T, 1>>(
      kronex::compile(kronex::kron(B).inverse(), std::array<std::size_t, 1>{5}));
  int mode = 0;  // 0: solve; 1: throw user_failure; 2: std::runtime_error; 3: a kronex error
  const kronex::function_solver<T> F(5, [&mode, one](T* x, std::size_t count) {
    if (mode == 1) throw user_failure{42, "multigrid diverged"};
    if (mode == 2) throw std::runtime_error("the user's own message");
    if (mode == 3) throw kronex::singular_factor(7, 9, "user-reported singular");
    for (std::size_t c = 0; c < count; ++c) one->run(x + c * 5, x + c * 5);
  });
  const xt::xtensor<T, 2> b = random_tensor<T, 2>({4, 5});
  const xt::xtensor<T, 2> expected = kronex::kron(A, B).solve(b);
  for (bool last : {true, false}) {
    BOOST_TEST_CONTEXT((last ? "function at the last mode" : "function at mode 0")) {
      const xt::xtensor<T, 2> bt = last ? b : xt::xtensor<T, 2>(xt::transpose(b));
      const xt::xtensor<T, 2> exp = last ? expected : xt::xtensor<T, 2>(kronex::kron(B, A).solve(bt));
      auto solver = last ? kronex::compile(kronex::kron(A, F).inverse(), std::array<std::size_t, 2>{4, 5})
                         : kronex::compile(kronex::kron(F, A).inverse(), std::array<std::size_t, 2>{5, 4});
      xt::xtensor<T, 2> x = xt::xtensor<T, 2>::from_shape(bt.shape());
      mode = 1;
      bool caught = false;
      try {
        solver(bt, x);
      } catch (const user_failure& e) {
        caught = true;
        BOOST_TEST(e.code == 42);
        BOOST_TEST(e.text == "multigrid diverged");
      }
      BOOST_TEST(caught);
      mode = 2;
      caught = false;
      try {
        solver(bt, x);
      } catch (const kronex::error&) {
        BOOST_ERROR("a std::runtime_error came out as a kronex::error");
      } catch (const std::runtime_error& e) {
        caught = true;
        BOOST_TEST(std::string(e.what()) == "the user's own message");
      }
      BOOST_TEST(caught);
      mode = 3;
      caught = false;
      try {
        solver(bt, x);
      } catch (const kronex::singular_factor& e) {
        caught = true;
        BOOST_TEST(e.mode() == 7u);
        BOOST_TEST(e.info() == 9);
        BOOST_TEST(std::string(e.what()) == "user-reported singular");
      }
      BOOST_TEST(caught);
      mode = 0;
      solver(bt, x);
      BOOST_TEST(rel_error(x, exp) <= 1e-12);
    }
  }
}

// The printed plan names the function step: the setup line says "function" and so does the
// step line (flops=0: the function's work is unknown to kronex).
BOOST_AUTO_TEST_CASE(printed_plan_shows_function) {
  using T = double;
  const auto A = kronex::gallery::bspline_mass<T>(6, 2);
  const kronex::function_solver<T> F(5, [](T*, std::size_t) {});
  const std::array<std::size_t, 3> shape{6, 5, 4};
  auto solver = kronex::compile(kronex::kron(A, F, kronex::identity(4)).inverse(), shape);
  std::ostringstream os;
  os << solver;
  const std::string text = os.str();
  BOOST_TEST_MESSAGE(text);
  BOOST_TEST(text.find("    f1  function n=5  function\n") != std::string::npos, text);
  BOOST_TEST(text.find("    1  solve  mode 1  f1 N  function  (6,5,4):(20,4,1)  flops=0  bytes=1.92k\n") !=
                 std::string::npos,
             text);
  // explain() stops before factoring: the same text, with f0's LU counts as an estimate, and no
  // condition estimate.
  std::string estimated = kronex_test::without_rcond(text);
  const std::string exact = "L nnz=9 U nnz=15 swaps=0";
  BOOST_REQUIRE(estimated.find(exact) != std::string::npos);
  estimated.replace(estimated.find(exact), exact.size(), "L nnz=9 U nnz=15 (estimate: no swaps)");
  BOOST_TEST(kronex::explain(kronex::kron(A, F, kronex::identity(4)).inverse(), shape) == estimated);
  // The function step is not fused with its neighbour (it does not run in panels).
  BOOST_TEST(!kronex::fused_with_next(solver.plan().steps[0]));
  BOOST_TEST(kronex::step_info(solver.plan().steps[1]).flops == 0.0);
}
