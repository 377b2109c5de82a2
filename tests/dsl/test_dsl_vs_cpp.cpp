// The DSL builds the same expression objects as the C++ API: for each program below, the plan the
// DSL compiles prints exactly as the compiled C++ expression's plan, the plan it explains exactly
// as kronex::explain prints the equivalent C++ expression, and the
// results are identical (bit for bit: same plan, same operand), on the host and on the (CPU)
// device. The operand is the one the DSL generated (random(seed), ones() or a file). Operator
// sums, multiples, compositions, pseudo-inverses, assembled operators in them (sparse_operator
// leaves) and Krylov solves are compared on both too.
#define BOOST_TEST_MODULE dsl_vs_cpp
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstdio>
#include <string>
#include <type_traits>

#include <kronex/kronex.hpp>
#include <xtensor/xnpy.hpp>
#if KRONEX_TEST_DEVICE
#include <kronex/device.hpp>
#endif

#include "exec/executable.hpp"

namespace {

using kronex::boundary;
namespace gallery = kronex::gallery;
using kronex::dsl::backend_kind;

template <class T, std::size_t D>
xt::xtensor<T, D> dsl_operand(const kronex::dsl::evaluated_program& p) {
  const auto a = kronex::dsl::initial_operand(p);
  const auto& x = std::get<xt::xarray<T>>(a.data);
  std::array<std::size_t, D> shape{};
  std::copy(x.shape().begin(), x.shape().end(), shape.begin());
  xt::xtensor<T, D> b = xt::xtensor<T, D>::from_shape(shape);
  std::copy(x.begin(), x.end(), b.begin());
  return b;
}

// The plan the C++ API compiles (instantiates) for a lazy result: what the DSL runs.
template <class R>
std::string compiled_plan(const R& r) {
  return to_string(kronex::compile(r.op(), r.operand()).plan());
}

// The DSL program on one backend against the C++ lazy result make(b) on b, b being that
// backend's operand: the same plans (explained and compiled), bit-identical results.
template <class T, std::size_t D, class Operand, class Make>
void compare_on(const kronex::dsl::evaluated_program& program, backend_kind where, const Operand& b, Make&& make) {
  // explain: the check and plan phases, as kronex::explain; run: the compiled plan.
  BOOST_TEST(to_string(kronex::dsl::prepare(program, where, false)->plans().back()) == kronex::explain(make(b)));
  auto exec = kronex::dsl::prepare(program, where);
  BOOST_TEST(to_string(exec->plans().back()) == compiled_plan(make(b)));
  exec->run();
  const xt::xtensor<T, D> x = [&] {
    if constexpr (std::is_same_v<Operand, xt::xtensor<T, D>>) return xt::xtensor<T, D>(make(b));
    else return Operand(make(b)).to_host();
  }();
  const auto result = exec->result();
  const auto& got = std::get<xt::xarray<T>>(result.data);
  BOOST_TEST(std::equal(x.begin(), x.end(), got.begin(), got.end()));
}

// `make(b)` builds the C++ lazy result equivalent to the DSL program's last stage; compared on
// the host and on the (CPU) device. Programs whose last stage is an operator sum, multiple or
// composition take the same path (compiled as kronex::compile compiles the C++ expression).
template <class T, std::size_t D, class Make>
void compare(const std::string& source, Make&& make, const kronex::dsl::parameters& params = {}) {
  BOOST_TEST_MESSAGE("program: " << source);
  const auto program = kronex::dsl::evaluate(source, params);
  const xt::xtensor<T, D> b = dsl_operand<T, D>(program);
  compare_on<T, D>(program, backend_kind::host, b, make);
#if KRONEX_TEST_DEVICE
  const kronex::device_tensor<T, D> bd(b);
  compare_on<T, D>(program, backend_kind::device, bd, make);
#endif
}

} // namespace

BOOST_AUTO_TEST_CASE(gallery_solve) {
  const auto M = gallery::bspline_mass<double>(16, 3);
  const auto P = gallery::bspline_mass<double>(12, 3, boundary::periodic);
  compare<double, 2>("kron(mass(16, 3), mass(12, 3, periodic)).solve(ones())",
                     [&](const auto& b) { return kronex::kron(M, P).solve(b); });
}

BOOST_AUTO_TEST_CASE(transpose_identity_3d) {
  const auto L = gallery::laplacian<double>(10);
  const auto I = kronex::identity(7);
  const auto P = gallery::bspline_mass<double>(9, 2, boundary::periodic);
  compare<double, 3>("L = laplacian(10)\nkron(L, identity(7), mass(9, 2, periodic)).transpose().solve(random(5))",
                     [&](const auto& b) { return kronex::kron(L, I, P).transpose().solve(b); });
}

BOOST_AUTO_TEST_CASE(apply_singular_stiffness) {
  const auto K = gallery::bspline_stiffness<double>(12, 2);
  const auto M = gallery::bspline_mass<double>(8, 1);
  compare<double, 2>("kron(stiffness(12, 2), mass(8, 1)).apply(random(2))",
                     [&](const auto& b) { return kronex::kron(K, M).apply(b); });
}

BOOST_AUTO_TEST_CASE(complex_adjoint) {
  using C = std::complex<double>;
  const auto M = gallery::bspline_mass<C>(10, 3);
  const auto L = gallery::laplacian<C>(6);
  const auto D = gallery::bspline_mass<C>(9, 2, boundary::periodic);
  compare<C, 3>("kron(mass(10, 3, complex128), laplacian(6, complex128), mass(9, 2, periodic, complex128))"
                ".adjoint().solve(random(1))",
                [&](const auto& b) { return kronex::kron(M, L, D).adjoint().solve(b); });
}

BOOST_AUTO_TEST_CASE(float_inverse_apply_4d) {
  const auto A = gallery::bspline_mass<float>(10, 2);
  const auto B = gallery::bspline_mass<float>(11, 2);
  const auto C = gallery::bspline_mass<float>(5, 1);
  const auto I = kronex::identity(3);
  compare<float, 4>("kron(mass(10, 2, float32), mass(11, 2, float32), mass(5, 1, float32), identity(3)).inverse().apply(ones())",
                    [&](const auto& b) { return kronex::kron(A, B, C, I).inverse().apply(b); });
}

BOOST_AUTO_TEST_CASE(complex64_transpose_of_adjoint) {
  using C = std::complex<float>;
  const auto M = gallery::bspline_mass<C>(9, 3);
  compare<C, 1>("kron(mass(9, 3, complex64)).adjoint().transpose().solve(random(11))",
                [&](const auto& b) { return kronex::kron(M).adjoint().transpose().solve(b); });
}

BOOST_AUTO_TEST_CASE(dense_npy_factor_and_npy_operand) {
  // A dense factor and the operand from .npy files, as the DSL reads them.
  xt::xtensor<double, 2> A = {{4, 1, 0.5}, {1, 5, 1}, {0.25, 1, 6}};
  xt::xtensor<double, 2> b = {{1, 2, 3, 4, 5, 6, 7}, {-1, 0, 1, 2, 3, 4, 5}, {0.5, 0.25, 0, 1, 1, 1, 1}};
  xt::dump_npy("test_dsl_vs_cpp_A.npy", A);
  xt::dump_npy("test_dsl_vs_cpp_b.npy", b);
  const auto M = gallery::bspline_mass<double>(7, 2);
  compare<double, 2>("kron(npy(\"test_dsl_vs_cpp_A.npy\"), mass(7, 2)).solve(npy(\"test_dsl_vs_cpp_b.npy\"))",
                     [&](const auto& x) { return kronex::kron(A, M).solve(x); });
  std::remove("test_dsl_vs_cpp_A.npy");
  std::remove("test_dsl_vs_cpp_b.npy");
}

BOOST_AUTO_TEST_CASE(nested_stages) {
  // K.solve(K.apply(b)): two stages, each printing as its C++ counterpart; the result is b up
  // to rounding, and identical to the C++ nested expression.
  const auto M = gallery::bspline_mass<double>(8, 3);
  const auto L = gallery::laplacian<double>(6);
  const auto program = kronex::dsl::evaluate("K = kron(mass(8, 3), laplacian(6)); K.solve(K.apply(random(3)))");
  const auto b = dsl_operand<double, 2>(program);
  auto host = kronex::dsl::prepare(program, backend_kind::host);
  const auto K = kronex::kron(M, L);
  BOOST_TEST(host->plans().size() == 2u);
  BOOST_TEST(to_string(host->plans()[0]) == compiled_plan(K.apply(b)));
  BOOST_TEST(to_string(host->plans()[1]) == to_string(kronex::compile(K.inverse(), b.shape()).plan()));
  const auto explained = kronex::dsl::prepare(program, backend_kind::host, false);
  BOOST_TEST(to_string(explained->plans()[0]) == kronex::explain(K.apply(b)));
  BOOST_TEST(to_string(explained->plans()[1]) == kronex::explain(K.inverse(), b.shape()));
  host->run();
  const xt::xtensor<double, 2> x = K.solve(K.apply(b));
  const auto result = host->result();
  const auto& got = std::get<xt::xarray<double>>(result.data);
  BOOST_TEST(std::equal(x.begin(), x.end(), got.begin(), got.end()));
  BOOST_TEST(kronex::dsl::relative_residual(program, host->result()) < 1e-14);
}

BOOST_AUTO_TEST_CASE(bare_operator_compiles_for_its_sizes) {
  const auto M = gallery::bspline_mass<double>(8, 3);
  const auto L = gallery::laplacian<double>(5, boundary::periodic);
  const auto program = kronex::dsl::evaluate("kron(mass(8, 3), laplacian(5, periodic)).transpose()");
  auto host = kronex::dsl::prepare(program, backend_kind::host);
  BOOST_TEST(to_string(host->plans()[0]) ==
             to_string(kronex::compile(kronex::kron(M, L).transpose(), kronex::shape_t{8, 5}).plan()));
}

// ---- operator arithmetic ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(shifted_laplacian_sum_2d) {
  const std::size_t n = 12;
  const auto K = gallery::bspline_stiffness<double>(n, 3), M = gallery::bspline_mass<double>(n, 3);
  compare<double, 2>(
      "L = kron(stiffness($n, 3), mass($n, 3)) + kron(mass($n, 3), stiffness($n, 3)) + 1e-2 * kron(mass($n, 3), mass($n, 3))\n"
      "L.solve(random(1))",
      [&](const auto& b) {
        return (kronex::kron(K, M) + kronex::kron(M, K) + 1e-2 * kronex::kron(M, M)).solve(b);
      },
      {{"n", n}});
}

BOOST_AUTO_TEST_CASE(sum_3d_with_sizes_per_axis) {
  const auto K0 = gallery::bspline_stiffness<double>(5, 2), M0 = gallery::bspline_mass<double>(5, 2);
  const auto K1 = gallery::bspline_stiffness<double>(6, 2), M1 = gallery::bspline_mass<double>(6, 2);
  const auto K2 = gallery::bspline_stiffness<double>(7, 2), M2 = gallery::bspline_mass<double>(7, 2);
  compare<double, 3>(
      "K0 = stiffness(5, 2); M0 = mass(5, 2); K1 = stiffness(6, 2); M1 = mass(6, 2); K2 = stiffness(7, 2); M2 = mass(7, 2)\n"
      "L = kron(K0, M1, M2) + kron(M0, K1, M2) + kron(M0, M1, K2) + 0.5 * kron(M0, M1, M2)\n"
      "L.solve(random(2))",
      [&](const auto& b) {
        return (kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) +
                0.5 * kronex::kron(M0, M1, M2)).solve(b);
      });
}

BOOST_AUTO_TEST_CASE(composition_solve_and_scaled_product) {
  // (A B)^{-1} = B^{-1} A^{-1}, each product solved by its own plan; a scalar multiple of one
  // product compiles as a combination, as in C++.
  const auto MA = gallery::bspline_mass<double>(8, 3);
  const auto LA = gallery::laplacian<double>(6);
  const auto LB = gallery::laplacian<double>(8);
  const auto MB = gallery::bspline_mass<double>(6, 2);
  compare<double, 2>("A = kron(mass(8, 3), laplacian(6)); B = kron(laplacian(8), mass(6, 2))\n(A * B).solve(ones())",
                                 [&](const auto& b) { return (kronex::kron(MA, LA) * kronex::kron(LB, MB)).solve(b); });
  compare<double, 2>("A = kron(mass(8, 3), laplacian(6)); (2.5 * A.transpose()).solve(random(7))",
                                 [&](const auto& b) { return (2.5 * kronex::kron(MA, LA).transpose()).solve(b); });
}

BOOST_AUTO_TEST_CASE(apply_of_a_sum_that_is_not_separable) {
  // Three matrices on axis 0: applied term by term; unary minus and a method inside.
  const auto L7 = gallery::laplacian<double>(7), M5 = gallery::bspline_mass<double>(5, 1);
  const auto M72 = gallery::bspline_mass<double>(7, 2), L5 = gallery::laplacian<double>(5);
  const auto M71 = gallery::bspline_mass<double>(7, 1);
  const auto I = kronex::identity(5);
  compare<double, 2>(
      "(kron(laplacian(7), mass(5, 1)) + kron(mass(7, 2), laplacian(5)) - -kron(mass(7, 1), identity(5)).transpose() * 3)"
      "\n  .apply(random(3))",
      [&](const auto& b) {
        return (kronex::kron(L7, M5) + kronex::kron(M72, L5) - (-kronex::kron(M71, I).transpose()) * 3).apply(b);
      });
}

BOOST_AUTO_TEST_CASE(transpose_and_adjoint_of_a_complex_sum) {
  using C = std::complex<double>;
  const auto A = gallery::laplacian<C>(6), M = gallery::bspline_mass<C>(6, 2);
  const auto N = gallery::bspline_mass<C>(5, 1), B = gallery::laplacian<C>(5);
  const std::string defs = "L = kron(laplacian(6, complex128), mass(5, 1, complex128)) + "
                           "2 * kron(mass(6, 2, complex128), laplacian(5, complex128))\n";
  compare<C, 2>(defs + "L.adjoint().solve(random(4))", [&](const auto& b) {
    return (kronex::kron(A, N) + 2 * kronex::kron(M, B)).adjoint().solve(b);
  });
  compare<C, 2>(defs + "L.transpose().apply(random(4))", [&](const auto& b) {
    return (kronex::kron(A, N) + 2 * kronex::kron(M, B)).transpose().apply(b);
  });
}

BOOST_AUTO_TEST_CASE(float_sum_solve) {
  const auto K = gallery::laplacian<float>(9), M = gallery::bspline_mass<float>(9, 2);
  compare<float, 2>("K = laplacian(9, float32); M = mass(9, 2, float32)\n(kron(K, M) + kron(M, K)).solve(random(6))",
                                [&](const auto& b) { return (kronex::kron(K, M) + kronex::kron(M, K)).solve(b); });
}

BOOST_AUTO_TEST_CASE(pseudo_inverse_of_a_periodic_laplacian_sum) {
  const auto K = gallery::bspline_stiffness<double>(8, 2, boundary::periodic);
  const auto M = gallery::bspline_mass<double>(8, 2, boundary::periodic);
  compare<double, 2>(
      "K = stiffness(8, 2, periodic); M = mass(8, 2, periodic)\n(kron(K, M) + kron(M, K)).pseudo_inverse(1e-10).apply(random(5))",
      [&](const auto& b) { return (kronex::kron(K, M) + kronex::kron(M, K)).pseudo_inverse(1e-10).apply(b); });
  // A single Kronecker product's pseudo-inverse: that of the one-term sum.
  compare<double, 2>("K = stiffness(8, 2, periodic); M = mass(8, 2, periodic)\nkron(K, M).pseudo_inverse(1e-10).apply(ones())",
                                 [&](const auto& b) { return kronex::kron(K, M).pseudo_inverse(1e-10).apply(b); });
}

BOOST_AUTO_TEST_CASE(sum_stages_nested_and_bare) {
  // L.solve(L.apply(b)): two combination stages; the residual check undoes the last with apply.
  const auto K = gallery::bspline_stiffness<double>(7, 2), M = gallery::bspline_mass<double>(7, 2);
  const auto P = gallery::bspline_mass<double>(7, 3);
  const auto program = kronex::dsl::evaluate(
      "K = stiffness(7, 2); M = mass(7, 2)\nL = kron(K, M) + kron(M, K) + 0.25 * kron(M, M)\n"
      "kron(mass(7, 3), M).solve(L.solve(L.apply(random(8))))");
  const auto L = kronex::kron(K, M) + kronex::kron(M, K) + 0.25 * kronex::kron(M, M);
  const auto b = dsl_operand<double, 2>(program);
  auto host = kronex::dsl::prepare(program, backend_kind::host);
  BOOST_TEST(host->plans().size() == 3u);
  BOOST_TEST(to_string(host->plans()[0]) == compiled_plan(L.apply(b)));
  BOOST_TEST(to_string(host->plans()[1]) == compiled_plan(L.solve(b)));
  BOOST_TEST(to_string(host->plans()[2]) == compiled_plan(kronex::kron(P, M).solve(b)));
  host->run();
  const xt::xtensor<double, 2> x = kronex::kron(P, M).solve(L.solve(L.apply(b)));
  const auto result = host->result();
  const auto& got = std::get<xt::xarray<double>>(result.data);
  BOOST_TEST(std::equal(x.begin(), x.end(), got.begin(), got.end()));
  const auto inner = kronex::dsl::evaluate(
      "K = stiffness(7, 2); M = mass(7, 2)\nL = kron(K, M) + kron(M, K) + 0.25 * kron(M, M)\nL.solve(L.apply(random(8)))");
  auto run_inner = kronex::dsl::prepare(inner, backend_kind::host);
  run_inner->run();
  BOOST_TEST(kronex::dsl::relative_residual(inner, run_inner->result()) < 1e-12);
  // A bare sum compiles for its own sizes, as compile(L, sizes).
  const auto bare = kronex::dsl::evaluate("K = stiffness(7, 2); M = mass(7, 2)\n(kron(K, M) + kron(M, K) + 1e-3 * kron(M, M)).inverse()");
  BOOST_TEST(to_string(kronex::dsl::prepare(bare, backend_kind::host)->plans()[0]) ==
             to_string(kronex::compile((kronex::kron(K, M) + kronex::kron(M, K) + 1e-3 * kronex::kron(M, M)).inverse(),
                                       kronex::shape_t{7, 7}).plan()));
}

BOOST_AUTO_TEST_CASE(library_errors_point_at_the_operator) {
  const auto error_of = [](const std::string& source) -> kronex::dsl::dsl_error {
    const auto program = kronex::dsl::evaluate(source);
    try {
      kronex::dsl::prepare(program, backend_kind::host);
    } catch (const kronex::dsl::dsl_error& e) {
      return e;
    }
    BOOST_FAIL("no dsl_error for: " + source);
    throw;
  };
  // Not separable: the axis named; the caret under the whole operator.
  const std::string ns = "L = kron(laplacian(7), mass(5, 1)) + kron(mass(7, 2), laplacian(5)) + kron(mass(7, 1), mass(5, 1))\n"
                         "L.solve(ones())";
  const auto e = error_of(ns);
  BOOST_TEST(e.message().find("axis 0") != std::string::npos, e.message());
  BOOST_TEST(e.where().line == 1u);
  BOOST_TEST(e.where().column == 5u);
  // A singular sum (periodic, no shift) without pseudo_inverse: the operator, with the sum's values.
  const auto s = error_of("K = stiffness(8, 2, periodic); M = mass(8, 2, periodic)\nL = kron(K, M) + kron(M, K)\nL.solve(ones())");
  BOOST_TEST(s.message().find("singular operator kron(K, M) + kron(M, K)") != std::string::npos, s.message());
  BOOST_TEST(s.where().line == 2u);
  BOOST_TEST(s.where().column == 5u);
  // The normalisation's own refusals: a pseudo-inverse inside a composition cannot be inverted.
  const auto p = error_of("K = stiffness(8, 2, periodic); M = mass(8, 2, periodic)\n"
                          "P = (kron(K, M) + kron(M, K)).pseudo_inverse(1e-10)\n(P * kron(M, M)).solve(ones())");
  BOOST_TEST(p.message().find("the inverse of a pseudo-inverse is not defined") != std::string::npos, p.message());
  BOOST_TEST(p.where().line == 3u);
  BOOST_TEST(p.where().column == 2u);
}

// ---- Krylov solves: cg(A, b, P, options) ... against the same kronex::cg call -------------------

namespace {

// A (4, 3, 5) symmetric positive definite matrix with a variable diagonal (a 7-point stencil),
// written as Matrix Market with every digit: the DSL and the C++ call read the same file.
const kronex::shape_t krylov_shape{4, 3, 5};
const char* const krylov_mtx = "test_dsl_vs_cpp_krylov.mtx";

void write_krylov_matrix() {
  const std::size_t n0 = 4, n1 = 3, n2 = 5, n = n0 * n1 * n2;
  std::vector<std::string> lines;
  char buf[128];
  for (std::size_t i = 0; i < n0; ++i)
    for (std::size_t j = 0; j < n1; ++j)
      for (std::size_t k = 0; k < n2; ++k) {
        const std::size_t r = (i * n1 + j) * n2 + k;
        std::snprintf(buf, sizeof buf, "%zu %zu %.17g", r + 1, r + 1, 6.5 + std::sin(double(r)));
        lines.push_back(buf);
        const auto neighbour = [&](std::size_t c) {
          std::snprintf(buf, sizeof buf, "%zu %zu %.17g", r + 1, c + 1, -1.0 - 0.25 * std::cos(double(r + c)));
          lines.push_back(buf);
        };
        if (i + 1 < n0) neighbour(r + n1 * n2);
        if (i > 0) neighbour(r - n1 * n2);
        if (j + 1 < n1) neighbour(r + n2);
        if (j > 0) neighbour(r - n2);
        if (k + 1 < n2) neighbour(r + 1);
        if (k > 0) neighbour(r - 1);
      }
  std::FILE* f = std::fopen(krylov_mtx, "w");
  BOOST_REQUIRE(f);
  std::fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%zu %zu %zu\n", n, n, lines.size());
  for (const auto& l : lines) std::fprintf(f, "%s\n", l.c_str());
  std::fclose(f);
}

const xt::xtensor<double, 3>& host_copy(const xt::xtensor<double, 3>& x) { return x; }
#if KRONEX_TEST_DEVICE
xt::xtensor<double, 3> host_copy(const kronex::device_tensor<double, 3>& x) { return x.to_host(); }
#endif

// The DSL program (a Krylov solve, with its history kept) on one backend against solve(b, x, opt)
// with b and x of that backend's tensor type: the same solution bit for bit, the same
// iterations, status, residual and history.
template <class Tensor, class Solve>
void compare_krylov_on(const kronex::dsl::evaluated_program& program, backend_kind backend, const Tensor& b, Tensor x,
                       const kronex::krylov_options<double>& options, Solve&& solve) {
  BOOST_TEST_MESSAGE("backend: " << kronex::dsl::to_string(backend));
  auto exec = kronex::dsl::prepare(program, backend);
  exec->run();
  const kronex::krylov_result* got = exec->krylov();
  BOOST_REQUIRE(got);
  kronex::krylov_options<double> opt = options;
  opt.history = true;
  const kronex::krylov_result want = solve(b, x, opt);
  BOOST_TEST(got->iterations == want.iterations);
  BOOST_TEST(got->converged == want.converged);
  BOOST_TEST(got->status == want.status);
  BOOST_TEST(got->relative_residual == want.relative_residual);
  BOOST_TEST(got->history == want.history, boost::test_tools::per_element());
  BOOST_TEST(got->message == want.message);
  const auto result = exec->result();
  const auto& y = std::get<xt::xarray<double>>(result.data);
  const xt::xtensor<double, 3> xh = host_copy(x);
  BOOST_TEST(std::equal(xh.begin(), xh.end(), y.begin(), y.end()));
  BOOST_TEST(want.iterations > 1u);
  // A second run (bench's timed runs) starts from x = 0 again: the same result.
  exec->run();
  BOOST_TEST(exec->krylov()->iterations == want.iterations);
  const auto again = exec->result();
  const auto& y2 = std::get<xt::xarray<double>>(again.data);
  BOOST_TEST(std::equal(xh.begin(), xh.end(), y2.begin(), y2.end()));
}

// compare_krylov_on on the host and, with a device runtime, on the (CPU) device, where the
// solver's vectors and scalars are device memory and an assembled operator is uploaded.
template <class Solve>
void compare_krylov(const std::string& source, const kronex::krylov_options<double>& options, Solve&& solve) {
  BOOST_TEST_MESSAGE("program: " << source);
  auto program = kronex::dsl::evaluate(source);
  BOOST_REQUIRE(program.krylov);
  program.krylov_history = true;
  const xt::xtensor<double, 3> b = dsl_operand<double, 3>(program);
  const xt::xtensor<double, 3> zero = xt::zeros<double>({4, 3, 5});
  compare_krylov_on(program, backend_kind::host, b, zero, options, solve);
#if KRONEX_TEST_DEVICE
  compare_krylov_on(program, backend_kind::device, kronex::device_tensor<double, 3>(b),
                    kronex::device_tensor<double, 3>(zero), options, solve);
#endif
}

} // namespace

BOOST_AUTO_TEST_CASE(krylov_cg_assembled_operator_kronecker_preconditioner) {
  write_krylov_matrix();
  const auto A = kronex::sparse_operator<double>::read_matrix_market(krylov_mtx, krylov_shape);
  const auto L0 = gallery::laplacian<double>(4), L1 = gallery::laplacian<double>(3), L2 = gallery::laplacian<double>(5);
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-11;
  opt.max_iterations = 200;
  compare_krylov("A = mtx_operator(\"test_dsl_vs_cpp_krylov.mtx\", 4, 3, 5)\n"
                 "cg(A, random(3), kron(laplacian(4), laplacian(3), laplacian(5)).inverse(), rtol=1e-11, maxiter=200)",
                 opt, [&](const auto& b, auto& x, const auto& o) {
                   return kronex::cg(A, b, x, kronex::kron(L0, L1, L2).inverse(), o);
                 });
  std::remove(krylov_mtx);
}

BOOST_AUTO_TEST_CASE(krylov_gmres_jacobi_and_bicgstab_not_converged) {
  write_krylov_matrix();
  const auto A = kronex::sparse_operator<double>::read_matrix_market(krylov_mtx, krylov_shape);
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-12;
  opt.restart = 4;
  compare_krylov("A = mtx_operator(\"test_dsl_vs_cpp_krylov.mtx\", 4, 3, 5)\ngmres(A, ones(), jacobi(A), rtol=1e-12, restart=4)",
                 opt, [&](const auto& b, auto& x, const auto& o) { return kronex::gmres(A, b, x, kronex::jacobi(A), o); });
  kronex::krylov_options<double> few;
  few.rtol = 1e-14;
  few.max_iterations = 3;
  few.check_every = 2;
  compare_krylov("bicgstab(mtx_operator(\"test_dsl_vs_cpp_krylov.mtx\", 4, 3, 5), random(9), rtol=1e-14, maxiter=3, "
                 "check_every=2)",
                 few, [&](const auto& b, auto& x, const auto& o) { return kronex::bicgstab(A, b, x, o); });
  std::remove(krylov_mtx);
}

BOOST_AUTO_TEST_CASE(krylov_minres_and_bicgstab_with_dsl_operators) {
  // A sum of Kronecker products as the operator (the composite plan), then a Kronecker product
  // with the fast-diagonalisation inverse of a sum as the preconditioner.
  const auto L0 = gallery::laplacian<double>(4), L1 = gallery::laplacian<double>(3), L2 = gallery::laplacian<double>(5);
  const auto M0 = gallery::bspline_mass<double>(4, 1), M1 = gallery::bspline_mass<double>(3, 1),
             M2 = gallery::bspline_mass<double>(5, 1);
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-10;
  compare_krylov("L = kron(laplacian(4), mass(3, 1), mass(5, 1)) + kron(mass(4, 1), laplacian(3), mass(5, 1)) + "
                 "0.5 * kron(mass(4, 1), mass(3, 1), laplacian(5))\n"
                 "minres(L, random(4), rtol=1e-10)",
                 opt, [&](const auto& b, auto& x, const auto& o) {
                   return kronex::minres(kronex::kron(L0, M1, M2) + kronex::kron(M0, L1, M2) + 0.5 * kronex::kron(M0, M1, L2),
                                         b, x, o);
                 });
  compare_krylov("S = kron(laplacian(4), mass(3, 1), mass(5, 1)) + kron(mass(4, 1), laplacian(3), mass(5, 1))\n"
                 "bicgstab(kron(laplacian(4), laplacian(3), mass(5, 1)).transpose(), random(4), S.inverse(), rtol=1e-10)",
                 opt, [&](const auto& b, auto& x, const auto& o) {
                   return kronex::bicgstab(kronex::kron(L0, L1, M2).transpose(), b, x,
                                           (kronex::kron(L0, M1, M2) + kronex::kron(M0, L1, M2)).inverse(), o);
                 });
}

// ---- assembled operators in operator arithmetic: the sparse_operator leaf of the C++ expression --

namespace {

// compare (host and, with a device runtime, the CPU device, where the library uploads the
// sparse matrix once and multiplies it with the device's sparse product), and the plan's step.
template <class T, std::size_t D, class Make>
void compare_with_spmv(const std::string& source, Make&& make) {
  compare<T, D>(source, make);
  const auto program = kronex::dsl::evaluate(source);
  const std::string plan = to_string(kronex::dsl::prepare(program, backend_kind::host, false)->plans().back());
  BOOST_TEST(plan.find("apply  csr_spmv sparse_operator(4,3,5)") != std::string::npos, plan);
}

} // namespace

BOOST_AUTO_TEST_CASE(assembled_operator_in_sums_compositions_and_transposes) {
  write_krylov_matrix();
  const auto A = kronex::sparse_operator<double>::read_matrix_market(krylov_mtx, krylov_shape);
  const auto L0 = gallery::laplacian<double>(4), L1 = gallery::laplacian<double>(3), L2 = gallery::laplacian<double>(5);
  const auto M0 = gallery::bspline_mass<double>(4, 1), M1 = gallery::bspline_mass<double>(3, 1),
             M2 = gallery::bspline_mass<double>(5, 2);
  const auto K = kronex::kron(L0, M1, M2);
  const std::string defs = "A = mtx_operator(\"test_dsl_vs_cpp_krylov.mtx\", 4, 3, 5)\n"
                           "K = kron(laplacian(4), mass(3, 1), mass(5, 2))\n";
  compare_with_spmv<double, 3>(defs + "(A + 0.5 * K).apply(random(3))",
                               [&](const auto& b) { return (A + 0.5 * K).apply(b); });
  // Compositions: K^-1 A (the Kronecker product solved, A applied), A K, and -A + 2 A K.
  compare_with_spmv<double, 3>(defs + "(K.inverse() * A).apply(random(4))",
                               [&](const auto& b) { return (K.inverse() * A).apply(b); });
  compare_with_spmv<double, 3>(defs + "(-A + 2 * A * K).apply(ones())",
                               [&](const auto& b) { return (-A + 2 * A * K).apply(b); });
  // Transposes and adjoints: of a sum, and of the leaf alone (the one-term multiple 1 * A).
  compare_with_spmv<double, 3>(defs + "(A - 0.5 * K).transpose().apply(random(5))",
                               [&](const auto& b) { return (A - 0.5 * K).transpose().apply(b); });
  compare_with_spmv<double, 3>(defs + "(jacobi(A).adjoint() * K + A.transpose()).apply(random(6))", [&](const auto& b) {
    return ((1.0 * kronex::jacobi(A)).adjoint() * K + (1.0 * A).transpose()).apply(b);
  });
  // A bare apply: the sparse_operator's own product, bit for bit, through the one-leaf plan (on
  // the device, the device's sparse product against the same plan compiled by the library).
  const auto program = kronex::dsl::evaluate(defs + "A.apply(random(7))");
  const auto b = dsl_operand<double, 3>(program);
  auto exec = kronex::dsl::prepare(program, backend_kind::host);
  BOOST_TEST(to_string(exec->plans().back()).find("apply  csr_spmv sparse_operator(4,3,5)") != std::string::npos);
  exec->run();
  const xt::xtensor<double, 3> want = A.apply(b);
  const auto result = exec->result();
  const auto& got = std::get<xt::xarray<double>>(result.data);
  BOOST_TEST(std::equal(want.begin(), want.end(), got.begin(), got.end()));
#if KRONEX_TEST_DEVICE
  auto on_device = kronex::dsl::prepare(program, backend_kind::device);
  BOOST_TEST(to_string(on_device->plans().back()).find("apply  csr_spmv sparse_operator(4,3,5)") != std::string::npos);
  on_device->run();
  const auto device_result = on_device->result();
  const auto& y = std::get<xt::xarray<double>>(device_result.data);
  BOOST_REQUIRE(y.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) BOOST_TEST(std::abs(y.flat(i) - want.flat(i)) <= 1e-13 * std::abs(want.flat(i)) + 1e-300);
#endif
  std::remove(krylov_mtx);
}

BOOST_AUTO_TEST_CASE(krylov_cg_with_an_assembled_operator_plus_a_kronecker_sum) {
  // A = S + (L0 M1 M2 + M0 L1 M2 + 0.25 M0 M1 L2), S the assembled matrix: symmetric positive
  // definite, neither assembled nor Kronecker; CG preconditioned by the Kronecker sum's inverse.
  write_krylov_matrix();
  const auto S = kronex::sparse_operator<double>::read_matrix_market(krylov_mtx, krylov_shape);
  const auto L0 = gallery::laplacian<double>(4), L1 = gallery::laplacian<double>(3), L2 = gallery::laplacian<double>(5);
  const auto M0 = gallery::bspline_mass<double>(4, 1), M1 = gallery::bspline_mass<double>(3, 1),
             M2 = gallery::bspline_mass<double>(5, 1);
  const auto sum = kronex::kron(L0, M1, M2) + kronex::kron(M0, L1, M2) + 0.25 * kronex::kron(M0, M1, L2);
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-11;
  const std::string source = "S = mtx_operator(\"test_dsl_vs_cpp_krylov.mtx\", 4, 3, 5)\n"
                             "L = kron(laplacian(4), mass(3, 1), mass(5, 1)) + kron(mass(4, 1), laplacian(3), mass(5, 1)) + "
                             "0.25 * kron(mass(4, 1), mass(3, 1), laplacian(5))\n"
                             "cg(S + L, random(8), L.inverse(), rtol=1e-11)";
  compare_krylov(source, opt, [&](const auto& b, auto& x, const auto& o) {
    return kronex::cg(S + sum, b, x, sum.inverse(), o);
  });
  std::remove(krylov_mtx);
}
