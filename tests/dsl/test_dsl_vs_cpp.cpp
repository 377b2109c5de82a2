// The DSL builds the same expression objects as the C++ API: for each program below, the plan the
// DSL compiles prints exactly as the compiled C++ expression's plan, the plan it explains exactly
// as kronex::explain prints the equivalent C++ expression, and the
// results are identical (bit for bit: same plan, same operand), on the host and on the (CPU)
// device. The operand is the one the DSL generated (random(seed), ones() or a file).
#define BOOST_TEST_MODULE dsl_vs_cpp
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstdio>
#include <string>

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

// `make(b)` builds the C++ lazy result equivalent to the DSL program's last stage.
template <class T, std::size_t D, class Make>
void compare(const std::string& source, Make&& make) {
  BOOST_TEST_MESSAGE("program: " << source);
  const auto program = kronex::dsl::evaluate(source);
  const xt::xtensor<T, D> b = dsl_operand<T, D>(program);

  // explain: the check and plan phases, as kronex::explain; run: the compiled plan.
  BOOST_TEST(to_string(kronex::dsl::prepare(program, backend_kind::host, false)->plans().back()) ==
             kronex::explain(make(b)));
  auto host = kronex::dsl::prepare(program, backend_kind::host);
  BOOST_TEST(to_string(host->plans().back()) == compiled_plan(make(b)));
  host->run();
  const xt::xtensor<T, D> x = make(b);
  const auto result = host->result();
  const auto& got = std::get<xt::xarray<T>>(result.data);
  BOOST_TEST(std::equal(x.begin(), x.end(), got.begin(), got.end()));

#if KRONEX_TEST_DEVICE
  const kronex::device_tensor<T, D> bd(b);
  BOOST_TEST(to_string(kronex::dsl::prepare(program, backend_kind::device, false)->plans().back()) ==
             kronex::explain(make(bd)));
  auto device = kronex::dsl::prepare(program, backend_kind::device);
  BOOST_TEST(to_string(device->plans().back()) == compiled_plan(make(bd)));
  device->run();
  const kronex::device_tensor<T, D> xd = make(bd);
  const xt::xtensor<T, D> xh = xd.to_host();
  const auto result_d = device->result();
  const auto& got_d = std::get<xt::xarray<T>>(result_d.data);
  BOOST_TEST(std::equal(xh.begin(), xh.end(), got_d.begin(), got_d.end()));
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
