// The host backend against the reference backend (dense Kronecker product + dense LU) on random
// data, beyond what the conformance suite (tests/conformance: every factor kind and type, N/T/C/R
// solve and apply, 1D to 6D, on every backend) covers: every band width up to 3 in 1D (kl != ku,
// with and without pivoting, sizes 1 to 13), all 5^4 kind combinations in 4D, the panel
// boundaries of the host kernels, other spellings of the same operators, gallery matrices and
// round trips. All four value types.
//
// Two routes into the host backend: the typed public API, kron(f...).solve(b) and friends, and
// the host plan (what kronex::compile's host_operator runs) built from a runtime operator_desc,
// which costs nothing per combination (1D band widths, 4D sweep, panel boundaries).
// The oracle always gets the dense matrices that the test built the factors from, in double
// precision (for float types too, so the tolerance measures only the host backend's error).
#define BOOST_TEST_MODULE test_host_vs_reference
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstring>
#include <cstddef>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex::op;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

// ---- factors ------------------------------------------------------------------------------------

enum class kind { clamped, periodic, dense, identity, diagonal };
constexpr kind all_kinds[] = {kind::clamped, kind::periodic, kind::dense, kind::identity, kind::diagonal};

// The C++ factor types, in the order of this variant, are the "slots" of the typed route:
// 0 banded (clamped or periodic), 1 dense, 2 identity, 3 diagonal.
template <class T>
using any_factor = std::variant<kronex::banded<T>, xt::xtensor<T, 2>, kronex::identity_factor,
                                kronex::diagonal_factor<T>>;

template <class T>
struct test_factor {
  any_factor<T> factor;
  xt::xtensor<T, 2> matrix;  // the same matrix, dense: what the oracle gets
  std::string text;          // for failure messages
  bool complex_entries = true;  // false for real-valued (gallery) matrices, whatever T is
};

// A factor of kind k and size n. Banded: band (kl, ku); pivot makes LU swap rows (needs kl, ku >= 1).
template <class T>
test_factor<T> make_factor(kind k, std::size_t n, std::size_t kl = 0, std::size_t ku = 0, bool pivot = false) {
  std::ostringstream text;
  switch (k) {
    case kind::clamped:
    case kind::periodic: {
      const boundary bc = k == kind::periodic ? boundary::periodic : boundary::clamped;
      xt::xtensor<T, 2> a = kronex_test::random_band_matrix<T>(n, kl, ku, bc, pivot);
      text << kronex::to_string(bc) << " n=" << n << " kl=" << kl << " ku=" << ku << (pivot ? " pivoting" : "");
      return {kronex_test::to_banded(a, kl, ku, bc), a, text.str()};
    }
    case kind::dense: {
      xt::xtensor<T, 2> a = kronex_test::random_dense_matrix<T>(n, pivot);
      text << "dense n=" << n << (pivot ? " pivoting" : "");
      return {a, a, text.str()};
    }
    case kind::identity: {
      text << "identity n=" << n;
      return {kronex::identity(n), xt::eye<T>(n), text.str()};
    }
    case kind::diagonal: {
      std::vector<T> d(n);
      for (auto& v : d) v = kronex_test::random_value_with_magnitude<T>(0.5, 2.0);
      xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
      for (std::size_t i = 0; i < n; ++i) a(i, i) = d[i];
      text << "diagonal n=" << n;
      return {kronex::diagonal(d), a, text.str()};
    }
  }
  throw std::logic_error("make_factor: unknown kind");
}

std::size_t uniform(std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(kronex_test::rng());
}

// Random band widths (kl != ku most of the time) and, where the widths allow it, pivoting in a
// third of the banded and half of the dense factors.
template <class T>
test_factor<T> random_factor(kind k, std::size_t n) {
  const std::size_t w = std::min<std::size_t>(3, n - 1);
  const std::size_t kl = uniform(0, w);
  // A periodic band needs kl + ku < n.
  const std::size_t ku = uniform(0, k == kind::periodic ? std::min(w, n - 1 - kl) : w);
  const bool pivot = k == kind::dense ? uniform(0, 1) == 1 : (kl >= 1 && ku >= 1 && uniform(0, 2) == 0);
  return make_factor<T>(k, n, kl, ku, pivot);
}

// ---- one test case: factors, right-hand side, results -------------------------------------------
// Everything here is independent of the rank: data is kept flat (C order), so only the typed API
// calls are instantiated per rank and per factor-type combination (compile time on 2 cores).

template <class T>
struct test_case {
  std::vector<test_factor<T>> factors;
  kronex::shape_t shape;
  std::vector<T> b;

  std::string text() const {
    std::string s = std::to_string(shape.size()) + "D [";
    for (std::size_t k = 0; k < factors.size(); ++k) s += (k ? ", " : "") + factors[k].text;
    return s + "]";
  }
};

template <class T>
test_case<T> make_case(std::vector<test_factor<T>> factors) {
  test_case<T> c;
  for (const auto& f : factors) c.shape.push_back(f.matrix.shape()[0]);
  c.factors = std::move(factors);
  c.b.resize(kronex::detail::product(c.shape));
  for (auto& v : c.b) v = kronex_test::random_value<T>();
  return c;
}

// A contiguous range over a tensor's or vector's values, for rel_error.
template <class V>
struct flat_range {
  const V* first;
  std::size_t size;
  const V* begin() const { return first; }
  const V* end() const { return first + size; }
};
template <class X>
auto flat(const X& x) {
  return flat_range<std::decay_t<decltype(*x.data())>>{x.data(), x.size()};
}

// The six operations every case is checked on, in the order of the reference results.
struct operation {
  op trans;
  bool inverse;
  const char* name;
};
constexpr operation operations[] = {
    {op::none, true, "solve"},      {op::transpose, true, "transpose().solve"},  {op::adjoint, true, "adjoint().solve"},
    {op::none, false, "apply"},     {op::transpose, false, "transpose().apply"}, {op::adjoint, false, "adjoint().apply"},
};
enum { solve_n, solve_t, solve_h, apply_n, apply_t, apply_h };

// A host result and the operation (index into `operations`) whose reference it must match.
template <class T>
struct host_result {
  std::string label;
  std::size_t expected;
  std::vector<T> x;
};

// The oracle: kronex::reference's dense Kronecker product of the test's own dense matrices, in
// double precision, and a dense LU solve or product on it (the body of reference::solve/apply,
// called rank-free so it is compiled once per value type, not once per rank). Only the
// operations in `needed` are computed (a singular operator has no solve).
template <class T>
std::vector<xt::xtensor<kronex_test::wide_t<T>, 1>> reference_results(const test_case<T>& c,
                                                                       const std::vector<bool>& needed) {
  using W = kronex_test::wide_t<T>;
  std::vector<xt::xtensor<W, 2>> m;
  for (const auto& f : c.factors) m.push_back(kronex_test::widen(f.matrix));
  kronex::operator_desc<W> d;
  for (const auto& a : m) d.factors.push_back(kronex::make_view<W>(a));
  xt::xtensor<W, 1> b = xt::xtensor<W, 1>::from_shape({c.b.size()});
  std::copy(c.b.begin(), c.b.end(), b.begin());
  std::vector<xt::xtensor<W, 1>> r;
  for (std::size_t k = 0; k < 6; ++k) {
    r.emplace_back();
    if (!needed[k]) continue;
    d.trans = operations[k].trans;
    const xt::xtensor<W, 2> K = kronex::reference::dense_kron(d);
    r.back() = operations[k].inverse ? xt::xtensor<W, 1>(xt::linalg::solve(K, b)) : xt::xtensor<W, 1>(xt::linalg::dot(K, b));
  }
  if constexpr (kronex::value_traits<W>::is_complex) {
    // The oracle's adjoint checked against the conjugation identity A^H b = conj(A^T conj(b)) (and
    // A^-H b = conj(A^-T conj(b))), which needs no adjoint at all: catches an adjoint treated as a
    // transpose by the oracle, and so, through the comparison above, by the host backend, whatever
    // the random phases of the factors.
    const xt::xtensor<W, 1> conj_b = xt::conj(b);
    d.trans = op::transpose;
    const xt::xtensor<W, 2> Kt = kronex::reference::dense_kron(d);
    for (auto [h, inverse] : {std::pair{std::size_t(solve_h), true}, std::pair{std::size_t(apply_h), false}}) {
      if (!needed[h]) continue;
      const xt::xtensor<W, 1> via_transpose =
          xt::conj(inverse ? xt::xtensor<W, 1>(xt::linalg::solve(Kt, conj_b)) : xt::xtensor<W, 1>(xt::linalg::dot(Kt, conj_b)));
      const double err = kronex_test::rel_error(flat(via_transpose), flat(r[h]));
      BOOST_TEST(err <= 1e-12, c.text() << " reference " << operations[h].name
                                        << " against the conjugated transpose: relative error " << err);
    }
  }
  return r;
}

template <class T>
void check(const test_case<T>& c, const std::vector<host_result<T>>& host, const char* route) {
  std::vector<bool> needed(6, false);
  for (const auto& h : host) needed[h.expected] = true;
  const auto ref = reference_results(c, needed);
  const double tol = kronex_test::tolerance<T>();
  for (const auto& h : host) {
    std::vector<kronex_test::wide_t<T>> x(h.x.begin(), h.x.end());
    const double err = kronex_test::rel_error(flat(x), flat(ref[h.expected]));
    BOOST_TEST(err <= tol, c.text() << " " << h.label << " via " << route << ": relative error " << err
                                    << " > " << tol);
  }
}

template <class T, std::size_t D>
xt::xtensor<T, D> as_tensor(const std::vector<T>& v, const kronex::shape_t& shape) {
  std::array<std::size_t, D> s{};
  std::copy(shape.begin(), shape.end(), s.begin());
  xt::xtensor<T, D> t = xt::xtensor<T, D>::from_shape(s);
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

template <class T, std::size_t D>
std::vector<T> as_vector(const xt::xtensor<T, D>& t) {
  return std::vector<T>(t.data(), t.data() + t.size());
}

// ---- route 1: the typed public API --------------------------------------------------------------

// Per type combination: only the lines that build and evaluate expressions (one evaluation site;
// each extra spelling here costs ~0.3 s of compile time per combination, so other spellings of
// the same operators are checked once, in `other_spellings`).
template <class T, std::size_t D, class K>
std::vector<host_result<T>> typed_results(const K& K0, const test_case<T>& c) {
  const xt::xtensor<T, D> b = as_tensor<T, D>(c.b, c.shape);
  std::vector<host_result<T>> r;
  for (std::size_t k = 0; k < 6; ++k) {
    const operation& o = operations[k];
    const K Ko = o.trans == op::none ? K0 : (o.trans == op::transpose ? K0.transpose() : K0.adjoint());
    xt::xtensor<T, D> x = o.inverse ? Ko.solve(b) : Ko.apply(b);
    r.push_back({o.name, k, as_vector(x)});
  }
  return r;
}

// Random shapes with sizes in [lo, hi].
template <std::size_t D>
std::vector<std::array<std::size_t, D>> random_shapes(std::size_t count, std::size_t lo, std::size_t hi) {
  std::vector<std::array<std::size_t, D>> s(count);
  for (auto& a : s)
    for (auto& n : a) n = uniform(lo, hi);
  return s;
}

// ---- route 2: the host plan on a runtime operator_desc ------------------------------------------

// host_plan<T> is what host_operator<T, D> (kronex::compile's result) wraps; it is rank-free, so
// using it here compiles the host backend once per value type instead of once per rank.
template <class T>
std::vector<host_result<T>> desc_results(const test_case<T>& c) {
  kronex::operator_desc<T> d;
  for (const auto& f : c.factors)
    d.factors.push_back(std::visit([](const auto& x) { return kronex::make_view<T>(x); }, f.factor));
  std::vector<host_result<T>> r;
  for (std::size_t k = 0; k < 6; ++k) {
    d.trans = operations[k].trans;
    d.inverse = operations[k].inverse;
    kronex::detail::host_plan<T> h(d, c.shape);
    std::vector<T> x(c.b.size());
    h.run(c.b.data(), x.data());
    {
      // b read in pieces of other arrays (as a distributed exchange within a node hands it
      // over): the first step reads the same values, so the result has the same bits.
      const auto pieces = kronex_test::scatter(c.b.data(), c.shape, 2);
      std::vector<T> y(c.b.size(), T(7));
      h.run(*pieces.tensor, y.data());
      BOOST_TEST_INFO("gathered operand, " << operations[k].name);
      BOOST_TEST(std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0);
    }
    r.push_back({operations[k].name, k, std::move(x)});
    if (k == solve_n || k == apply_h) {
      // x aliasing b: documented as allowed; every step after the first works in place.
      std::vector<T> y = c.b;
      h.run(y.data(), y.data());
      r.push_back({std::string(operations[k].name) + " in place", k, std::move(y)});
    }
  }
  return r;
}

template <class T, std::size_t D>
void desc_case(const std::array<kind, D>& kinds, const std::array<std::size_t, D>& shape) {
  std::vector<test_factor<T>> f;
  for (std::size_t k = 0; k < D; ++k) f.push_back(random_factor<T>(kinds[k], shape[k]));
  const auto c = make_case<T>(std::move(f));
  check(c, desc_results(c), "host plan");
}

// Every kind tuple of rank D (5^D of them), each on `draws` random shapes with sizes in [lo, hi].
template <class T, std::size_t D>
void all_kind_tuples(std::size_t draws, std::size_t lo, std::size_t hi) {
  std::array<kind, D> kinds{};
  std::size_t total = 1;
  for (std::size_t k = 0; k < D; ++k) total *= 5;
  for (std::size_t t = 0; t < total; ++t) {
    for (std::size_t k = 0, r = t; k < D; ++k, r /= 5) kinds[k] = all_kinds[r % 5];
    for (const auto& shape : random_shapes<D>(draws, lo, hi)) desc_case<T, D>(kinds, shape);
  }
}

// A gallery factor: real-valued, so its adjoint equals its transpose.
template <class T>
test_factor<T> gallery_factor(const kronex::banded<T>& a, const std::string& text) {
  return {a, kronex_test::to_dense(a), text, false};
}

// ---- dense applies run as GEMMs ------------------------------------------------------------------

constexpr op all_ops[] = {op::none, op::transpose, op::adjoint, op::conjugate};

// The oracle for applies too large for a dense Kronecker product: op(A_k) applied along each mode
// k listed in `modes` (the others are identities), by plain loops over the lines, in double
// precision.
template <class T>
std::vector<kronex_test::wide_t<T>> mode_products(const test_case<T>& c, const std::vector<std::size_t>& modes, op o) {
  using W = kronex_test::wide_t<T>;
  std::vector<W> x(c.b.begin(), c.b.end()), y(x.size());
  for (std::size_t k : modes) {
    const xt::xtensor<W, 2> a = kronex_test::widen(c.factors[k].matrix);
    const std::size_t n = c.shape[k], R = kronex::detail::product(kronex::shape_t(c.shape.begin() + long(k) + 1, c.shape.end()));
    const std::size_t L = x.size() / (n * R);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t r = 0; r < R; ++r) {
          W sum = 0;
          for (std::size_t j = 0; j < n; ++j) {
            W v = is_transposed(o) ? a(j, i) : a(i, j);
            if (is_conjugated(o)) v = kronex::detail::conj_if_complex(v);
            sum += v * x[(l * n + j) * R + r];
          }
          y[(l * n + i) * R + r] = sum;
        }
    std::swap(x, y);
  }
  return x;
}

// The host plan's applies of c's operator under N, T, C and R, out of place and in place, against
// expected(op). The modes in gemm_modes, and only those, must run as GEMMs: the check that this
// test covers the GEMM path at all, and that the plan's rule keeps small or banded factors on row
// programs.
template <class T, class Expected>
void check_gemm_applies(const test_case<T>& c, const std::vector<std::size_t>& gemm_modes, Expected&& expected) {
  kronex::operator_desc<T> d;
  for (const auto& f : c.factors)
    d.factors.push_back(std::visit([](const auto& x) { return kronex::make_view<T>(x); }, f.factor));
  const double tol = kronex_test::tolerance<T>();
  for (op o : all_ops) {
    d.trans = o;
    kronex::detail::host_plan<T> h(d, c.shape);
    const std::string what = c.text() + " apply " + kronex::trans_letter(o);
    std::vector<std::size_t> gemms;
    for (const auto& st : h.description().steps)
      if (kronex::step_method(st) == "gemm") gemms.push_back(kronex::step_info(st).mode);
    BOOST_TEST(gemms == gemm_modes, what << ": the modes run as GEMMs differ from those expected");
    const auto ref = expected(o);
    std::vector<T> x(c.b.size());
    h.run(c.b.data(), x.data());
    std::vector<T> y = c.b;
    h.run(y.data(), y.data());
    for (const auto* r : {&x, &y}) {
      std::vector<kronex_test::wide_t<T>> w(r->begin(), r->end());
      const double err = kronex_test::rel_error(flat(w), flat(ref));
      BOOST_TEST(err <= tol, what << (r == &y ? " in place" : "") << ": relative error " << err << " > " << tol);
    }
  }
}

// Against the dense Kronecker product (small shapes).
template <class T>
void check_gemm_against_kron(const test_case<T>& c, const std::vector<std::size_t>& gemm_modes) {
  using W = kronex_test::wide_t<T>;
  std::vector<xt::xtensor<W, 2>> m;
  kronex::operator_desc<W> d;
  for (const auto& f : c.factors) m.push_back(kronex_test::widen(f.matrix));
  for (const auto& a : m) d.factors.push_back(kronex::make_view<W>(a));
  xt::xtensor<W, 1> b = xt::xtensor<W, 1>::from_shape({c.b.size()});
  std::copy(c.b.begin(), c.b.end(), b.begin());
  check_gemm_applies(c, gemm_modes, [&](op o) {
    d.trans = o;
    return xt::xtensor<W, 1>(xt::linalg::dot(kronex::reference::dense_kron(d), b));
  });
}

} // namespace

// 1D: every kind, every band width up to 3 (kl != ku included), with and without pivoting,
// sizes from 1 up. Host plan (the typed API in 1D is in the conformance suite).
BOOST_AUTO_TEST_CASE_TEMPLATE(one_dimension_every_band, T, value_types) {
  for (std::size_t n : {1, 2, 3, 4, 5, 8, 13}) {
    std::vector<test_factor<T>> factors;
    for (std::size_t kl = 0; kl <= std::min<std::size_t>(3, n - 1); ++kl) {
      for (std::size_t ku = 0; ku <= std::min<std::size_t>(3, n - 1); ++ku) {
        for (bool pivot : {false, true}) {
          if (pivot && (kl == 0 || ku == 0)) continue;
          factors.push_back(make_factor<T>(kind::clamped, n, kl, ku, pivot));
          if (kl + ku < n) factors.push_back(make_factor<T>(kind::periodic, n, kl, ku, pivot));
        }
      }
    }
    for (bool pivot : {false, true}) factors.push_back(make_factor<T>(kind::dense, n, 0, 0, pivot));
    factors.push_back(make_factor<T>(kind::identity, n));
    factors.push_back(make_factor<T>(kind::diagonal, n));

    for (auto& f : factors) {
      const auto c = make_case<T>({f});
      check(c, desc_results(c), "host plan");
    }
  }
}

// 4D: every one of the 5^4 kind combinations (a random shape each, sizes from 1).
BOOST_AUTO_TEST_CASE_TEMPLATE(four_dimensions_all_kind_combinations, T, value_types) {
  all_kind_tuples<T, 4>(1, 1, 3);
}

// Shapes that make the host backend use partial strips and each of its ways of gathering lines:
// contiguous runs when the trailing size R is a multiple of the strip width W, a transpose when
// R = 1, a gather per element otherwise (tests/host/test_panels.cpp covers many-panel walks).
BOOST_AUTO_TEST_CASE_TEMPLATE(panel_boundaries, T, value_types) {
  constexpr std::size_t W = kronex::detail::strip_width<T>;
  const kind mix[] = {kind::clamped, kind::periodic, kind::dense, kind::diagonal};
  for (kind a : mix) {
    desc_case<T, 2>({a, kind::clamped}, {W + 5, 3});
    desc_case<T, 2>({kind::periodic, a}, {3, W + 3});
  }
  desc_case<T, 3>({kind::clamped, kind::dense, kind::periodic}, {2, 3, W + 1});
  desc_case<T, 3>({kind::periodic, kind::identity, kind::clamped}, {3, 1, 2 * W});
  desc_case<T, 2>({kind::clamped, kind::dense}, {4, 2 * W});
}

// The same operators spelled other ways, on one mixed operator (clamped banded with pivoting,
// dense, diagonal, periodic banded): inverse().apply is a solve, the adjoint or transpose of an
// inverse is the inverse of the adjoint or transpose, .eval() on an rvalue evaluates like an
// assignment, rvalue chains on a temporary expression, compile() with a tensor as `like`, and a
// column-major dense factor (read through its strides).
BOOST_AUTO_TEST_CASE_TEMPLATE(other_spellings, T, value_types) {
  const auto c = make_case<T>({make_factor<T>(kind::clamped, 5, 2, 1, true), make_factor<T>(kind::dense, 3, 0, 0, true),
                               make_factor<T>(kind::diagonal, 2), make_factor<T>(kind::periodic, 4, 1, 2, false)});
  const auto& A = std::get<0>(c.factors[0].factor);
  const auto& B = std::get<1>(c.factors[1].factor);
  const auto& C = std::get<3>(c.factors[2].factor);
  const auto& E = std::get<0>(c.factors[3].factor);
  const auto b = as_tensor<T, 4>(c.b, c.shape);
  const auto K = kronex::kron(A, B, C, E);
  std::vector<host_result<T>> host;
  host.push_back({"inverse().apply", solve_n, as_vector<T, 4>(K.inverse().apply(b))});
  host.push_back({"inverse().transpose().apply", solve_t, as_vector<T, 4>(K.inverse().transpose().apply(b))});
  host.push_back({"inverse().adjoint().apply", solve_h, as_vector<T, 4>(K.inverse().adjoint().apply(b))});
  host.push_back({"adjoint().inverse().apply", solve_h, as_vector<T, 4>(K.adjoint().inverse().apply(b))});
  host.push_back({"transpose().transpose().solve", solve_n, as_vector<T, 4>(K.transpose().transpose().solve(b))});
  host.push_back({"adjoint().adjoint().apply", apply_n, as_vector<T, 4>(K.adjoint().adjoint().apply(b))});
  host.push_back({"inverse().inverse().apply", apply_n, as_vector<T, 4>(K.inverse().inverse().apply(b))});
  host.push_back({"transpose().solve(b).eval()", solve_t, as_vector(K.transpose().solve(b).eval())});
  host.push_back({"kron(...).adjoint().solve on a temporary", solve_h,
                  as_vector<T, 4>(kronex::kron(A, B, C, E).adjoint().solve(b))});
  host.push_back({"kron(...).transpose().apply on a temporary", apply_t,
                  as_vector<T, 4>(kronex::kron(A, B, C, E).transpose().apply(b))});
  const xt::xtensor<T, 2, xt::layout_type::column_major> Bcm = B;
  host.push_back({"adjoint().solve with a column-major dense factor", solve_h,
                  as_vector<T, 4>(kronex::kron(A, Bcm, C, E).adjoint().solve(b))});
  auto solver = kronex::compile(K.adjoint().inverse(), b);
  host.push_back({"compile(adjoint().inverse())", solve_h, as_vector(solver(b))});
  check(c, host, "typed API");
}

// Gallery factors, periodic and clamped, against the oracle (dense matrices read back through
// banded's own accessor, not the factor views the backends use).
BOOST_AUTO_TEST_CASE_TEMPLATE(periodic_gallery_against_reference, T, value_types) {
  using namespace kronex::gallery;
  for (std::size_t p : {1, 2, 3}) {
    for (std::size_t n : {2 * p + 1, 2 * p + 2, std::size_t(11)}) {
      const std::string np = " p=" + std::to_string(p) + " n=" + std::to_string(n);
      auto Mp = bspline_mass<T>(n, p, boundary::periodic);
      auto Mc = bspline_mass<T>(n + 1, p);
      auto L = laplacian<T>(5);
      auto Sp = bspline_stiffness<T>(n, p, boundary::periodic);
      auto Sc = bspline_stiffness<T>(n, p);
      {
        const auto c = make_case<T>({gallery_factor(Mp, "bspline_mass periodic" + np)});
        check(c, typed_results<T, 1>(kronex::kron(Mp), c), "typed API");
      }
      {
        const std::string np1 = " p=" + std::to_string(p) + " n=" + std::to_string(n + 1);
        const auto c = make_case<T>({gallery_factor(Mc, "bspline_mass clamped" + np1),
                                     gallery_factor(Mp, "bspline_mass periodic" + np),
                                     gallery_factor(L, "laplacian clamped n=5")});
        check(c, typed_results<T, 3>(kronex::kron(Mc, Mp, L), c), "typed API");
      }
      {
        // Stiffness matrices are singular (constants are in their kernel, clamped or periodic):
        // apply only.
        const auto c = make_case<T>({gallery_factor(Sp, "bspline_stiffness periodic" + np),
                                     gallery_factor(Sc, "bspline_stiffness clamped" + np)});
        std::vector<host_result<T>> host;
        const auto b = as_tensor<T, 2>(c.b, c.shape);
        const auto K = kronex::kron(Sp, Sc);
        host.push_back({"apply", apply_n, as_vector<T, 2>(K.apply(b))});
        host.push_back({"transpose().apply", apply_t, as_vector<T, 2>(K.transpose().apply(b))});
        host.push_back({"adjoint().apply", apply_h, as_vector<T, 2>(K.adjoint().apply(b))});
        check(c, host, "typed API");
      }
    }
  }
}

// Round trips with gallery operators: apply(solve(b)) == b and solve(apply(x)) == x, for the
// plain, transposed and adjoint operator, through lazy results and through a compiled operator
// (reused for several right-hand sides, once in place). The operator is chosen with a condition
// number of about 300, so float round trips can meet the float tolerance.
BOOST_AUTO_TEST_CASE_TEMPLATE(gallery_round_trips, T, value_types) {
  using namespace kronex::gallery;
  const double tol = kronex_test::tolerance<T>();
  auto Mx = bspline_mass<T>(9, 1);
  auto My = bspline_mass<T>(9, 3, boundary::periodic);
  auto Lz = laplacian<T>(3);
  const auto K = kronex::kron(Mx, My, Lz);
  const auto b = kronex_test::random_tensor<T, 3>({9, 9, 3});

  for (int k = 0; k < 3; ++k) {
    const auto Ko = k == 0 ? K : (k == 1 ? K.transpose() : K.adjoint());
    const char* name = k == 0 ? "K" : (k == 1 ? "K^T" : "K^H");
    xt::xtensor<T, 3> x = Ko.solve(b);
    xt::xtensor<T, 3> r = Ko.apply(x);
    double err = kronex_test::rel_error(flat(r), flat(b));
    BOOST_TEST(err <= tol, name << ": apply(solve(b)) differs from b by " << err);
    xt::xtensor<T, 3> y = Ko.apply(b);
    xt::xtensor<T, 3> z = Ko.solve(y);
    err = kronex_test::rel_error(flat(z), flat(b));
    BOOST_TEST(err <= tol, name << ": solve(apply(x)) differs from x by " << err);
    // Nested lazy results: the inner one is evaluated first.
    xt::xtensor<T, 3> w = Ko.apply(Ko.solve(b));
    err = kronex_test::rel_error(flat(w), flat(b));
    BOOST_TEST(err <= tol, name << ": apply(solve(b)) as one nested expression differs from b by " << err);
  }

  auto solver = kronex::compile(K.inverse(), b);
  auto forward = kronex::compile(K, b);
  for (int rep = 0; rep < 3; ++rep) {
    const auto rhs = kronex_test::random_tensor<T, 3>({9, 9, 3});
    xt::xtensor<T, 3> x = xt::xtensor<T, 3>::from_shape(rhs.shape()), r = x;
    solver(rhs, x);
    forward(x, r);
    const double err = kronex_test::rel_error(flat(r), flat(rhs));
    BOOST_TEST(err <= tol, "compiled operator, right-hand side " << rep << ": apply(solve(b)) differs from b by " << err);
  }
  xt::xtensor<T, 3> inplace = b;
  solver(inplace, inplace);
  forward(inplace, inplace);
  const double err = kronex_test::rel_error(flat(inplace), flat(b));
  BOOST_TEST(err <= tol, "compiled operator in place: apply(solve(b)) differs from b by " << err);
}

// Dense factors of n >= 4 run as GEMMs: on the first mode (one GEMM), a middle mode (one per
// block of the modes before), the last mode (one over all lines), and the 1D case; with banded
// and small dense factors around them (row programs, fused pairs), so the GEMM steps run both
// out of place and in place within one plan. N, T, C and R, each also with x aliasing b.
BOOST_AUTO_TEST_CASE_TEMPLATE(dense_applies_as_gemms, T, value_types) {
  using F = std::vector<test_factor<T>>;
  auto dense = [](std::size_t n) { return make_factor<T>(kind::dense, n); };
  check_gemm_against_kron(make_case<T>(F{dense(4)}), {0});
  check_gemm_against_kron(make_case<T>(F{dense(13)}), {0});
  check_gemm_against_kron(make_case<T>(F{dense(9), dense(8)}), {0, 1});
  check_gemm_against_kron(make_case<T>(F{dense(5), dense(6), dense(4)}), {0, 1, 2});
  check_gemm_against_kron(make_case<T>(F{make_factor<T>(kind::clamped, 5, 1, 2, true), dense(8), dense(11)}), {1, 2});
  // Row programs: a middle mode with fewer than 4 lines after it, a dense factor of n < 4, and
  // a dense factor with fewer than a third of its entries nonzero.
  check_gemm_against_kron(make_case<T>(F{dense(10), dense(9), dense(3)}), {0});
  check_gemm_against_kron(make_case<T>(F{dense(3), make_factor<T>(kind::diagonal, 6), dense(12)}), {2});
  xt::xtensor<T, 2> tridiagonal = kronex_test::random_band_matrix<T>(10, 1, 1, boundary::clamped, false);
  check_gemm_against_kron(make_case<T>(F{dense(7), {tridiagonal, tridiagonal, "dense n=10 tridiagonal"}}), {0});
}

// In place, GEMMs run in chunks of gemm_chunk lines through a buffer: sizes that take two full
// chunks and a partial one, on each mode position, with identities elsewhere (no other step; their
// dense matrices are never built: the oracle only reads the dense factor's).
BOOST_AUTO_TEST_CASE_TEMPLATE(dense_applies_as_gemms_in_chunks, T, value_types) {
  const std::size_t n = 16, c = kronex::detail::gemm_chunk<T>(n);
  const test_factor<T> dense = make_factor<T>(kind::dense, n);
  auto id = [](std::size_t m) { return test_factor<T>{kronex::identity(m), {}, "identity n=" + std::to_string(m)}; };
  const std::vector<std::vector<test_factor<T>>> operators = {
      {dense, id(2 * c + 5)}, {id(2), dense, id(c + 7)}, {id(2 * c + 3), dense}};
  for (const auto& factors : operators) {
    test_case<T> k;
    k.factors = factors;
    std::size_t mode = 0;
    for (std::size_t m = 0; m < factors.size(); ++m) {
      const bool is_dense = std::holds_alternative<xt::xtensor<T, 2>>(factors[m].factor);
      k.shape.push_back(is_dense ? n : std::get<kronex::identity_factor>(factors[m].factor).size());
      if (is_dense) mode = m;
    }
    k.b.resize(kronex::detail::product(k.shape));
    for (auto& v : k.b) v = kronex_test::random_value<T>();
    check_gemm_applies(k, {mode}, [&](op o) { return mode_products(k, {mode}, o); });
  }
}
