// The compiled operator (kronex::compile) and the lifetime rules of expressions:
//  - repeated solves are bit-identical; in-place (x is b) equals out-of-place; inputs are never
//    written; the raw-pointer form equals the tensor forms;
//  - a compiled operator owns what it needs: it keeps working after the factors it was compiled
//    from are modified or destroyed, and copies of it are independent;
//  - expressions built from rvalue factors own them and may be returned from functions; lazy
//    expressions over lvalue factors read them at evaluation time;
//  - non-contiguous operands (views, strided views, column-major tensors) give the results of
//    a contiguous copy; nested solve(apply(b)) returns b; shapes may be std::array or
//    std::vector.
// Results are checked against kronex::reference (dense Kronecker product + dense LU) where a
// value, not just a consistency, is asserted. Run this file under ASan/UBSan too (lifetimes).
#define BOOST_TEST_MODULE compiled
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstring>
#include <optional>
#include <thread>
#include <tuple>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xview.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;
using shape3 = std::array<std::size_t, 3>;

// Shape used throughout: mode 0 has R = 9*8 = 72 trailing lines, more than one panel of W = 64
// doubles (the contiguous-run path, with a partial panel), modes 1 and 2 take the gather path.
const shape3 kShape{8, 9, 8};

// A diagonally dominant dense factor with random entries (well conditioned).
template <class T>
xt::xtensor<T, 2> random_dense(std::size_t n) {
  xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) a(i, j) = kronex_test::random_value<T>() + (i == j ? T(double(n)) : T(0));
  return a;
}

// The three factors of kShape: clamped cubic mass, periodic quadratic mass, dense.
template <class T>
struct factors {
  kronex::banded<T> Mx = kronex::gallery::bspline_mass<T>(8, 3);
  kronex::banded<T> My = kronex::gallery::bspline_mass<T>(9, 2, boundary::periodic);
  xt::xtensor<T, 2> D = random_dense<T>(8);
  auto kron() const { return kronex::kron(Mx, My, D); }
};

// Bitwise equality of two tensors' values (stricter than ==, which equates +0 and -0).
template <class A, class B>
bool same_bits(const A& a, const B& b) {
  if (a.size() != b.size()) return false;
  using T = typename A::value_type;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    const T va = *ia, vb = *ib;
    if (std::memcmp(&va, &vb, sizeof(T)) != 0) return false;
  }
  return true;
}

// Bound for results of solves. Their error is of order cond(K) * eps(T), and the clamped cubic
// mass matrices here have condition numbers of a few hundred: for double that stays below the
// 1e-12 bar, for float (eps 6e-8) it does not (up to 8e-5 was seen), hence 50x the float bar.
template <class T>
double solve_tolerance() {
  return std::is_same_v<kronex::real_t<T>, double> ? kronex_test::tolerance<T>() : 50 * kronex_test::tolerance<T>();
}

} // namespace

// Two runs of one compiled operator give the same bits (no state carried between runs), for
// the two-argument and the allocating forms; and the results are the right ones.
BOOST_AUTO_TEST_CASE_TEMPLATE(repeated_solves_bit_identical, T, value_types) {
  const factors<T> f;
  const auto b = kronex_test::random_tensor<T>(kShape);
  auto solver = kronex::compile(f.kron().inverse(), b);
  xt::xtensor<T, 3> x1 = xt::zeros<T>(kShape), x2 = xt::zeros<T>(kShape);
  solver(b, x1);
  solver(b, x2);
  BOOST_TEST(same_bits(x1, x2));
  // A different right-hand side in between must not leave anything behind.
  const auto other = kronex_test::random_tensor<T>(kShape);
  xt::xtensor<T, 3> junk = xt::zeros<T>(kShape);
  solver(other, junk);
  BOOST_TEST(same_bits(solver(b), x1));
  BOOST_TEST(same_bits(solver(b), x1));
  BOOST_TEST(kronex_test::rel_error(x1, kronex::reference::solve(f.kron(), b)) < solve_tolerance<T>());
  // Applies too.
  auto op = kronex::compile(f.kron(), b);
  const auto y = op(b);
  BOOST_TEST(same_bits(op(b), y));
  BOOST_TEST(kronex_test::rel_error(y, kronex::reference::apply(f.kron(), b)) < kronex_test::tolerance<T>());
}

// x aliasing b: every step reads its input before it writes the output panel, so the in-place
// solve runs the same arithmetic as the out-of-place one and must give the same bits.
BOOST_AUTO_TEST_CASE_TEMPLATE(in_place_equals_out_of_place, T, value_types) {
  const factors<T> f;
  const auto d = kronex::diagonal(std::vector<T>{T(1), T(-2), T(3), T(0.5f), T(4), T(5), T(6), T(7)});
  // With a scale step first (mode 0), and an identity: all step kinds run in place.
  const auto K = kronex::kron(d, f.My, kronex::identity(8));
  const auto b = kronex_test::random_tensor<T>(kShape);
  for (const bool inverse : {true, false}) {
    BOOST_TEST_CONTEXT((inverse ? "solve" : "apply")) {
      auto op = inverse ? kronex::compile(f.kron().inverse(), kShape) : kronex::compile(f.kron(), kShape);
      xt::xtensor<T, 3> x = xt::zeros<T>(kShape);
      op(b, x);
      xt::xtensor<T, 3> y = b;
      op(y, y);
      BOOST_TEST(same_bits(x, y));
      xt::xtensor<T, 3> z = b;
      op.run(z.data(), z.data());
      BOOST_TEST(same_bits(x, z));

      auto op2 = inverse ? kronex::compile(K.inverse(), kShape) : kronex::compile(K, kShape);
      xt::xtensor<T, 3> x2 = xt::zeros<T>(kShape);
      op2(b, x2);
      xt::xtensor<T, 3> y2 = b;
      op2(y2, y2);
      BOOST_TEST(same_bits(x2, y2));
    }
  }
  // All identities: a copy step, skipped when x is b (the data must stay).
  auto copy = kronex::compile(kronex::kron(kronex::identity(8), kronex::identity(9), kronex::identity(8)), b);
  xt::xtensor<T, 3> c = b;
  copy(c, c);
  BOOST_TEST(same_bits(c, b));
  xt::xtensor<T, 3> c2 = xt::zeros<T>(kShape);
  copy(b, c2);
  BOOST_TEST(same_bits(c2, b));
}

// Inputs are read-only to every entry point: lazy solve/apply, nested, compiled (both forms),
// raw pointers, and a view's parent tensor.
BOOST_AUTO_TEST_CASE_TEMPLATE(inputs_never_modified, T, value_types) {
  const factors<T> f;
  const auto b = kronex_test::random_tensor<T>(kShape);
  const auto b0 = b;
  const auto K = f.kron();
  { xt::xtensor<T, 3> x = K.solve(b); }
  { xt::xtensor<T, 3> x = K.apply(b); }
  { xt::xtensor<T, 3> x = K.adjoint().solve(b); }
  { xt::xtensor<T, 3> x = K.solve(K.apply(b)); }
  BOOST_TEST(same_bits(b, b0));
  auto solver = kronex::compile(K.inverse(), b);
  xt::xtensor<T, 3> x = xt::zeros<T>(kShape);
  solver(b, x);
  (void)solver(b);
  solver.run(b.data(), x.data());
  BOOST_TEST(same_bits(b, b0));
  // The factors are not touched either (compile copies from them, never writes).
  const factors<T> g = f;
  (void)kronex::compile(K.inverse(), b);
  BOOST_TEST(g.Mx.diagonals() == f.Mx.diagonals());
  BOOST_TEST(g.My.diagonals() == f.My.diagonals());
  BOOST_TEST(same_bits(g.D, f.D));
  // A view operand: its parent is unchanged.
  const auto big = kronex_test::random_tensor<T>(shape3{8, 12, 8});
  const auto big0 = big;
  { xt::xtensor<T, 3> y = K.solve(xt::view(big, xt::all(), xt::range(1, 10), xt::all())); }
  (void)solver(xt::view(big, xt::all(), xt::range(1, 10), xt::all()));
  BOOST_TEST(same_bits(big, big0));
}

// The compiled operator copies what it needs: it is built in an inner scope from local factors,
// which are then overwritten and destroyed, and used afterwards.
BOOST_AUTO_TEST_CASE_TEMPLATE(outlives_its_factors, T, value_types) {
  const auto b = kronex_test::random_tensor<T>(kShape);
  std::optional<kronex::host_operator<T, 3>> solver, op;
  xt::xtensor<T, 3> expected_solve, expected_apply;
  {
    factors<T> f;
    const auto d = kronex::diagonal(std::vector<T>(8, T(2)));
    solver.emplace(kronex::compile(kronex::kron(f.Mx, f.My, f.D).inverse(), b));
    op.emplace(kronex::compile(kronex::kron(f.Mx, f.My, d), b));
    expected_solve = kronex::reference::solve(f.kron(), b);
    expected_apply = kronex::reference::apply(kronex::kron(f.Mx, f.My, d), b);
    // Overwrite every factor before it goes away: a plan that still read them would see this.
    for (std::size_t i = 0; i < 8; ++i) f.Mx(i, i) = T(1e6f);
    for (std::size_t i = 0; i < 9; ++i) f.My(i, i) = T(-3);
    f.D.fill(T(0));
  }
  BOOST_TEST(kronex_test::rel_error((*solver)(b), expected_solve) < solve_tolerance<T>());
  BOOST_TEST(kronex_test::rel_error((*op)(b), expected_apply) < kronex_test::tolerance<T>());
}

namespace {
// Built and compiled from locals that die at the return.
template <class T>
kronex::host_operator<T, 2> make_solver(const std::array<std::size_t, 2>& shape) {
  auto Mx = kronex::gallery::bspline_mass<T>(shape[0], 3);
  auto My = kronex::gallery::bspline_stiffness<T>(shape[1], 2);
  My(0, 0) += T(1);  // stiffness is singular (constants); this makes it definite
  return kronex::compile(kronex::kron(Mx, My).transpose().inverse(), shape);
}
} // namespace

// A compiled operator returned from a function, modified factors after compile, and copies.
BOOST_AUTO_TEST_CASE(modified_factors_and_copies) {
  using T = double;
  const std::array<std::size_t, 2> shape{10, 7};
  const auto b = kronex_test::random_tensor<T>(shape);
  auto solver = make_solver<T>(shape);
  auto Mx = kronex::gallery::bspline_mass<T>(10, 3);
  auto My = kronex::gallery::bspline_stiffness<T>(7, 2);
  My(0, 0) += 1.0;
  const auto expected = kronex::reference::solve(kronex::kron(Mx, My).transpose(), b);
  const auto x = solver(b);
  BOOST_TEST(kronex_test::rel_error(x, expected) < solve_tolerance<T>());

  // Compile, then change a factor: the compiled operator keeps the old matrix, while a lazy
  // expression over the same (lvalue) factors reads them when it is evaluated.
  auto compiled = kronex::compile(kronex::kron(Mx, My).transpose().inverse(), b);
  auto lazy = kronex::kron(Mx, My).transpose().solve(b);
  Mx(3, 3) *= 2.0;
  const auto changed = kronex::reference::solve(kronex::kron(Mx, My).transpose(), b);
  BOOST_TEST(kronex_test::rel_error(changed, expected) > 1e-3);  // the change matters
  BOOST_TEST(same_bits(compiled(b), x));
  const xt::xtensor<T, 2> from_lazy = std::move(lazy).eval();
  BOOST_TEST(kronex_test::rel_error(from_lazy, changed) < solve_tolerance<T>());

  // Copies are independent (each owns its workspace and programs) and outlive the original.
  std::optional<kronex::host_operator<T, 2>> original(kronex::compile(kronex::kron(Mx, My).inverse(), b));
  auto copy = *original;
  const auto y = (*original)(b);
  original.reset();
  BOOST_TEST(same_bits(copy(b), y));
  // Two copies on two threads at once (one operator must not be shared between threads).
  auto copy2 = copy;
  xt::xtensor<T, 2> y1, y2;
  std::thread t1([&] { for (int k = 0; k < 20; ++k) y1 = copy(b); });
  std::thread t2([&] { for (int k = 0; k < 20; ++k) y2 = copy2(b); });
  t1.join();
  t2.join();
  BOOST_TEST(same_bits(y1, y));
  BOOST_TEST(same_bits(y2, y));
}

namespace {
// Expressions over rvalue factors own them (closure rules): safe to return, even after
// further transpose/inverse, and a lazy result over an rvalue expression and an rvalue operand
// owns both.
auto owning_expression() {
  return kronex::kron(kronex::gallery::bspline_mass<double>(8, 3),
                      kronex::gallery::bspline_mass<double>(6, 2, boundary::periodic));
}
auto owning_transposed_inverse() {
  return kronex::kron(kronex::gallery::bspline_mass<double>(8, 3),
                      kronex::gallery::laplacian<double>(6))
      .transpose()
      .inverse();
}
auto owning_lazy_solve(const xt::xtensor<double, 2>& b) {
  return kronex::kron(kronex::gallery::bspline_mass<double>(8, 3),
                      kronex::gallery::bspline_mass<double>(6, 2, boundary::periodic))
      .solve(xt::xtensor<double, 2>(b));  // a temporary copy, owned by the lazy result
}
} // namespace

BOOST_AUTO_TEST_CASE(rvalue_factors_returned_from_functions) {
  const std::array<std::size_t, 2> shape{8, 6};
  const auto b = kronex_test::random_tensor<double>(shape);
  const auto Mx = kronex::gallery::bspline_mass<double>(8, 3);
  const auto My = kronex::gallery::bspline_mass<double>(6, 2, boundary::periodic);
  const auto L = kronex::gallery::laplacian<double>(6);
  const auto expected = kronex::reference::solve(kronex::kron(Mx, My), b);

  const auto K = owning_expression();
  const xt::xtensor<double, 2> x = K.solve(b);
  BOOST_TEST(kronex_test::rel_error(x, expected) < solve_tolerance<double>());
  // Derived expressions of the returned one (they refer to K's factors; K is alive).
  const xt::xtensor<double, 2> y = K.transpose().apply(x);
  BOOST_TEST(kronex_test::rel_error(y, kronex::reference::apply(kronex::kron(Mx, My).transpose(), x)) < 1e-12);
  // compile from a temporary owning expression: the operator copies before it dies.
  auto solver = kronex::compile(owning_expression().inverse(), b);
  BOOST_TEST(kronex_test::rel_error(solver(b), expected) < solve_tolerance<double>());

  const auto KTi = owning_transposed_inverse();
  const xt::xtensor<double, 2> z = KTi.apply(b);  // apply of an inverse is a solve
  BOOST_TEST(kronex_test::rel_error(z, kronex::reference::solve(kronex::kron(Mx, L).transpose(), b)) <
             solve_tolerance<double>());

  auto lazy = owning_lazy_solve(b);
  const xt::xtensor<double, 2> w = std::move(lazy);
  BOOST_TEST(kronex_test::rel_error(w, expected) < solve_tolerance<double>());
}

// Non-contiguous and non-C-order operands are evaluated as their contiguous copy would be:
// bit-identical results (the same arithmetic runs on the copy), for lazy and compiled forms.
BOOST_AUTO_TEST_CASE_TEMPLATE(non_contiguous_operands, T, value_types) {
  const factors<T> f;
  const auto K = f.kron();
  auto solver = kronex::compile(K.inverse(), kShape);

  // A view: every other row of mode 1 from a (8, 18, 10) parent, and an offset in mode 2.
  const auto big = kronex_test::random_tensor<T>(shape3{8, 18, 10});
  const auto v = xt::view(big, xt::all(), xt::range(0, 18, 2), xt::range(1, 9));
  const xt::xtensor<T, 3> vc = v;  // its contiguous copy
  const xt::xtensor<T, 3> x_ref = K.solve(vc);
  BOOST_TEST(kronex_test::rel_error(x_ref, kronex::reference::solve(K, vc)) < solve_tolerance<T>());
  BOOST_TEST(same_bits(xt::xtensor<T, 3>(K.solve(v)), x_ref));
  BOOST_TEST(same_bits(solver(v), x_ref));
  xt::xtensor<T, 3> x = xt::zeros<T>(kShape);
  solver(v, x);  // the two-argument form converts the view to a temporary C-order tensor
  BOOST_TEST(same_bits(x, x_ref));
  // compile() with a view as `like`.
  auto from_view = kronex::compile(K.inverse(), v);
  BOOST_TEST(same_bits(from_view(vc), x_ref));

  // A strided view with a negative-free step in mode 0 and a range in mode 2.
  const auto big2 = kronex_test::random_tensor<T>(shape3{16, 9, 11});
  const auto sv = xt::strided_view(big2, {xt::range(0, 16, 2), xt::all(), xt::range(2, 10)});
  const xt::xtensor<T, 3> svc = sv;
  BOOST_TEST(same_bits(xt::xtensor<T, 3>(K.solve(sv)), xt::xtensor<T, 3>(K.solve(svc))));
  BOOST_TEST(same_bits(solver(sv), solver(svc)));
  BOOST_TEST(same_bits(xt::xtensor<T, 3>(K.apply(sv)), xt::xtensor<T, 3>(K.apply(svc))));

  // A column-major tensor holding the same values as a C-order one.
  const auto b = kronex_test::random_tensor<T>(kShape);
  const xt::xtensor<T, 3, xt::layout_type::column_major> bc = b;
  BOOST_TEST(bc(1, 2, 3) == b(1, 2, 3));
  BOOST_TEST(same_bits(xt::xtensor<T, 3>(K.solve(bc)), xt::xtensor<T, 3>(K.solve(b))));
  BOOST_TEST(same_bits(solver(bc), solver(b)));
  BOOST_TEST(same_bits(xt::xtensor<T, 3>(K.adjoint().apply(bc)), xt::xtensor<T, 3>(K.adjoint().apply(b))));
  // A transposed view of a tensor (reversed strides).
  const auto bt = kronex_test::random_tensor<T>(shape3{8, 9, 8});
  const auto tv = xt::transpose(bt, {2, 1, 0});
  const xt::xtensor<T, 3> tvc = tv;
  BOOST_TEST(same_bits(solver(tv), solver(tvc)));
}

// kron(M,P).solve(kron(M,P).apply(b)) == b up to rounding, with and without transposes, and
// the inner expression evaluated into a temporary first.
BOOST_AUTO_TEST_CASE_TEMPLATE(nested_solve_of_apply, T, value_types) {
  const auto M = kronex::gallery::bspline_mass<T>(8, 3);
  const auto P = kronex::gallery::bspline_mass<T>(9, 2, boundary::periodic);
  const auto b = kronex_test::random_tensor<T>(std::array<std::size_t, 2>{8, 9});
  const xt::xtensor<T, 2> x = kronex::kron(M, P).solve(kronex::kron(M, P).apply(b));
  BOOST_TEST(kronex_test::rel_error(x, b) < solve_tolerance<T>());
  const xt::xtensor<T, 2> xt_ = kronex::kron(M, P).transpose().solve(kronex::kron(M, P).transpose().apply(b));
  BOOST_TEST(kronex_test::rel_error(xt_, b) < solve_tolerance<T>());
  const xt::xtensor<T, 2> xa = kronex::kron(M, P).adjoint().apply(kronex::kron(M, P).adjoint().solve(b));
  BOOST_TEST(kronex_test::rel_error(xa, b) < solve_tolerance<T>());
  // Three levels, and the compiled pair doing the same.
  const xt::xtensor<T, 2> x3 = kronex::kron(M, P).solve(kronex::kron(M, P).solve(kronex::kron(M, P).apply(kronex::kron(M, P).apply(b))));
  BOOST_TEST(kronex_test::rel_error(x3, b) < solve_tolerance<T>());
  auto S = kronex::compile(kronex::kron(M, P).inverse(), b);
  auto A = kronex::compile(kronex::kron(M, P), b);
  BOOST_TEST(kronex_test::rel_error(S(A(b)), b) < solve_tolerance<T>());
}

// compile(expr, shape) with std::array and std::vector shapes and with a tensor all build the
// same operator (same plan, same bits), and the raw-pointer run() equals the tensor call.
BOOST_AUTO_TEST_CASE_TEMPLATE(shapes_and_raw_pointers, T, value_types) {
  const factors<T> f;
  const auto K = f.kron();
  const auto b = kronex_test::random_tensor<T>(kShape);
  auto from_tensor = kronex::compile(K.inverse(), b);
  auto from_array = kronex::compile(K.inverse(), shape3{8, 9, 8});
  auto from_vector = kronex::compile(K.inverse(), std::vector<std::size_t>{8, 9, 8});
  BOOST_TEST(from_array.shape() == kronex::shape_t({8, 9, 8}));
  BOOST_TEST(from_vector.shape() == kronex::shape_t({8, 9, 8}));
  BOOST_TEST(kronex::to_string(from_array.plan()) == kronex::to_string(from_tensor.plan()));
  BOOST_TEST(kronex::to_string(from_vector.plan()) == kronex::to_string(from_tensor.plan()));
  const auto x = from_tensor(b);
  BOOST_TEST(same_bits(from_array(b), x));
  BOOST_TEST(same_bits(from_vector(b), x));

  // run(b_ptr, x_ptr) on plain C-order buffers of shape().
  std::vector<T> bb(b.begin(), b.end()), xx(b.size(), T(0));
  from_array.run(bb.data(), xx.data());
  BOOST_TEST(same_bits(xt::adapt(xx, kShape), x));
  from_array.run(bb.data(), bb.data());  // in place
  BOOST_TEST(same_bits(xt::adapt(bb, kShape), x));
  // Rank 1 and rank 6 shapes.
  const auto M = kronex::gallery::bspline_mass<T>(5, 2);
  auto s1 = kronex::compile(kronex::kron(M).inverse(), std::array<std::size_t, 1>{5});
  const auto b1 = kronex_test::random_tensor<T>(std::array<std::size_t, 1>{5});
  BOOST_TEST(kronex_test::rel_error(s1(b1), kronex::reference::solve(kronex::kron(M), b1)) < solve_tolerance<T>());
  const auto M2 = kronex::gallery::bspline_mass<T>(2, 1);
  const auto K6 = kronex::kron(M2, M, M2, M2, M, M2);
  auto s6 = kronex::compile(K6.inverse(), std::vector<std::size_t>{2, 5, 2, 2, 5, 2});
  const auto b6 = kronex_test::random_tensor<T>(std::array<std::size_t, 6>{2, 5, 2, 2, 5, 2});
  BOOST_TEST(kronex_test::rel_error(s6(b6), kronex::reference::solve(K6, b6)) < solve_tolerance<T>());
}
