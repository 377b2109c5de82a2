// The conformance suite: one source, built once per backend (host, CPU device, CUDA, MPI at 1 to
// 4 ranks), that checks every result against the dense reference (kronex::reference: the full
// Kronecker matrix of the test's own dense matrices and a dense LU, in double precision), never
// against another backend, so a bug shared by two backends cannot cancel out.
//
// The backend is an adaptor header named by KRONEX_CONFORMANCE_BACKEND (backend_host.hpp says
// what it provides); everything else goes through the public API: kronex::kron, transpose(),
// adjoint(), inverse(), solve(), apply(), kronex::compile. Each operation is run compiled out of
// place (the input must not change) and in place (x is b) on every layout it is given, and as a
// lazy result for the untransposed operator.
//
// Covered: every factor kind (clamped band, periodic band with corners, dense, diagonal,
// identity, function_solver, each through any_factor and through its own type), the four
// operators N, T, C, R (none, transpose(), adjoint(), adjoint().transpose()) in solve and apply
// (a function_solver is solve-only, N), the four value types (1e-12 relative in double, 1e-5 in
// float), 1 to 4 factors (5 and 6 where the backend's max_rank allows), sizes from 1, pivoting LU,
// and sizes that split unevenly over 2, 3 and 4 ranks (10, 7, 5).
#define BOOST_TEST_MODULE test_conformance
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <complex>
#include <cstddef>
#include <functional>
#include <iterator>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include KRONEX_CONFORMANCE_BACKEND

#include "kronex_test_support.hpp"

namespace {

using backend = kronex_conformance::backend;
using kronex::boundary;
using kronex::op;
using kronex_test::wide_t;
using value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

// ---- factors ------------------------------------------------------------------------------------

enum class kind { clamped, periodic, dense, diagonal, identity, function };
// The kinds every operator applies to; function solvers are solve-only and get their own cases.
constexpr kind operator_kinds[] = {kind::clamped, kind::periodic, kind::dense, kind::diagonal, kind::identity};

std::size_t uniform(std::size_t lo, std::size_t hi) {
  return std::uniform_int_distribution<std::size_t>(lo, hi)(kronex_test::rng());
}

template <class T>
struct test_factor {
  kronex::any_factor<T> factor;
  xt::xtensor<T, 2> matrix;  // the same matrix, dense: what the reference gets
  std::string text;          // for failure messages
};

// A function_solver for a lower bidiagonal matrix with diagonal d and subdiagonal s, solving by
// forward substitution here, not by kronex.
template <class T>
kronex::function_solver<T> bidiagonal_solver(std::vector<T> d, std::vector<T> s) {
  const std::size_t n = d.size();
  return kronex::function_solver<T>(n, [n, d = std::move(d), s = std::move(s)](T* x, std::size_t count) {
    for (std::size_t c = 0; c < count; ++c) {
      T* v = x + c * n;
      v[0] /= d[0];
      for (std::size_t i = 1; i < n; ++i) v[i] = (v[i] - s[i] * v[i - 1]) / d[i];
    }
  });
}

// For complex T, half the time: a real matrix (complex right-hand sides with real factors, whose
// programs the host kernels run on reals).
template <class T>
bool real_entries() {
  return kronex::value_traits<T>::is_complex && uniform(0, 1) == 1;
}

// A random well-conditioned factor of kind k and size n. Bands have random widths up to 2
// (kl != ku most of the time) and pivot when both are at least 1, half the time; a periodic band
// of size 2 or more has entries in its corners; dense matrices pivot half the time. Complex bands
// and dense matrices have real entries half the time.
template <class T>
test_factor<T> make_factor(kind k, std::size_t n) {
  using R = kronex::real_t<T>;
  std::ostringstream text;
  switch (k) {
    case kind::clamped:
    case kind::periodic: {
      const bool periodic = k == kind::periodic;
      const boundary bc = periodic ? boundary::periodic : boundary::clamped;
      std::size_t kl = 0, ku = 0;
      if (!periodic) {
        kl = uniform(0, std::min<std::size_t>(2, n - 1));
        ku = uniform(0, std::min<std::size_t>(2, n - 1));
      } else if (n == 2) {
        kl = 1;  // row 0's left neighbour is the corner (0, 1)
      } else if (n >= 3) {
        kl = uniform(1, std::min<std::size_t>(2, n - 2));
        ku = uniform(1, std::min<std::size_t>(2, n - 1 - kl));  // a periodic band needs kl + ku < n
      }
      const bool pivot = kl >= 1 && ku >= 1 && uniform(0, 1) == 1;
      const bool real = real_entries<T>();
      xt::xtensor<T, 2> a = real ? xt::xtensor<T, 2>(xt::cast<T>(kronex_test::random_band_matrix<R>(n, kl, ku, bc, pivot)))
                                 : kronex_test::random_band_matrix<T>(n, kl, ku, bc, pivot);
      text << kronex::to_string(bc) << " n=" << n << " kl=" << kl << " ku=" << ku << (pivot ? " pivoting" : "")
           << (real ? " real entries" : "");
      return {kronex_test::to_banded(a, kl, ku, bc), a, text.str()};
    }
    case kind::dense: {
      const bool pivot = n > 1 && uniform(0, 1) == 1;
      const bool real = real_entries<T>();
      xt::xtensor<T, 2> a = real ? xt::xtensor<T, 2>(xt::cast<T>(kronex_test::random_dense_matrix<R>(n, pivot)))
                                 : kronex_test::random_dense_matrix<T>(n, pivot);
      text << "dense n=" << n << (pivot ? " pivoting" : "") << (real ? " real entries" : "");
      return {a, a, text.str()};
    }
    case kind::diagonal: {
      std::vector<T> d(n);
      for (auto& v : d) v = kronex_test::random_value_with_magnitude<T>(0.5, 2.0);
      xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
      for (std::size_t i = 0; i < n; ++i) a(i, i) = d[i];
      text << "diagonal n=" << n;
      return {kronex::diagonal(d), a, text.str()};
    }
    case kind::identity:
      text << "identity n=" << n;
      return {kronex::identity(n), xt::eye<T>(n), text.str()};
    case kind::function: {
      std::vector<T> d(n), s(n);
      xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
      for (std::size_t i = 0; i < n; ++i) {
        a(i, i) = d[i] = kronex_test::dominant_diagonal<T>(1);
        if (i > 0) a(i, i - 1) = s[i] = kronex_test::random_value<T>();
      }
      text << "function (lower bidiagonal) n=" << n;
      return {bidiagonal_solver(std::move(d), std::move(s)), a, text.str()};
    }
  }
  throw std::logic_error("make_factor: unknown kind");
}

// ---- one case: factors, right-hand side, reference results -------------------------------------

template <class T>
struct test_case {
  std::vector<test_factor<T>> factors;
  kronex::shape_t shape;
  std::vector<T> b;  // C order
  bool solve_only = false;

  std::string text() const {
    std::string s = std::to_string(shape.size()) + "D " + kronex::value_traits<T>::name + " [";
    for (std::size_t k = 0; k < factors.size(); ++k) s += (k ? ", " : "") + factors[k].text;
    return s + "]";
  }
};

template <class T>
test_case<T> make_case(const std::vector<kind>& kinds, const std::vector<std::size_t>& shape) {
  test_case<T> c;
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    c.factors.push_back(make_factor<T>(kinds[k], shape[k]));
    c.solve_only = c.solve_only || kinds[k] == kind::function;
  }
  c.shape = shape;
  c.b.resize(std::accumulate(shape.begin(), shape.end(), std::size_t(1), std::multiplies<>()));
  for (auto& v : c.b) v = kronex_test::random_value<T>();
  return c;
}

struct operation {
  op trans;
  bool inverse;
};
constexpr operation operations[] = {{op::none, true},      {op::transpose, true},  {op::adjoint, true},
                                    {op::conjugate, true}, {op::none, false},      {op::transpose, false},
                                    {op::adjoint, false},  {op::conjugate, false}};

std::string operation_text(const operation& o) {
  return std::string(1, kronex::trans_letter(o.trans)) + (o.inverse ? " solve" : " apply");
}

// The reference result of one operation, in double precision (for float types too, so the
// tolerance measures only the backend's error). Rank-free: compiled once per value type.
template <class T>
std::vector<wide_t<T>> reference_result(const test_case<T>& c, const operation& o) {
  using W = wide_t<T>;
  std::vector<xt::xtensor<W, 2>> m;
  for (const auto& f : c.factors) m.push_back(kronex_test::widen(f.matrix));
  kronex::operator_desc<W> d;
  for (const auto& a : m) d.factors.push_back(kronex::make_view<W>(a));
  d.trans = o.trans;
  xt::xtensor<W, 1> b = xt::xtensor<W, 1>::from_shape({c.b.size()});
  std::copy(c.b.begin(), c.b.end(), b.begin());
  const xt::xtensor<W, 2> K = kronex::reference::dense_kron(d);
  const xt::xtensor<W, 1> r = o.inverse ? xt::xtensor<W, 1>(xt::linalg::solve(K, b)) : xt::xtensor<W, 1>(xt::linalg::dot(K, b));
  return std::vector<W>(r.begin(), r.end());
}

// max |x - ref| / max |ref| over the C-order values of x.
template <class T, std::size_t D>
double error_against(const xt::xtensor<T, D>& x, const std::vector<wide_t<T>>& ref) {
  const std::vector<wide_t<T>> w(x.data(), x.data() + x.size());
  return kronex_test::rel_error(w, ref);
}

template <class T, std::size_t D>
xt::xtensor<T, D> as_tensor(const std::vector<T>& v, const kronex::shape_t& shape) {
  std::array<std::size_t, D> s{};
  std::copy(shape.begin(), shape.end(), s.begin());
  xt::xtensor<T, D> t = xt::xtensor<T, D>::from_shape(s);
  std::copy(v.begin(), v.end(), t.data());
  return t;
}

// ---- running a case on the backend --------------------------------------------------------------

template <class K>
K with_trans(const K& K0, op o) {
  switch (o) {
    case op::none: return K0;
    case op::transpose: return K0.transpose();
    case op::adjoint: return K0.adjoint();
    case op::conjugate: return K0.adjoint().transpose();
  }
  throw std::logic_error("with_trans: unknown op");
}

// Every operation of the case (N solve only when it is solve-only) with the expression K0 over
// its factors, on each layout: compiled out of place, compiled in place (on a copy of the
// operand: no new layout), and as a lazy result for the untransposed operator (the lazy form
// compiles the same plan; doing it for every operator would double the compiles, which cost
// communicator setups on MPI).
template <class T, std::size_t D, class K>
void check_expression(const K& K0, const test_case<T>& c, const std::vector<std::array<int, D>>& layouts) {
  using tensor = typename backend::template tensor<T, D>;
  const double tol = kronex_test::tolerance<T>();
  const xt::xtensor<T, D> b = as_tensor<T, D>(c.b, c.shape);
  std::vector<operation> ops;
  std::vector<std::vector<wide_t<T>>> refs;
  for (const operation& o : operations) {
    if (c.solve_only && !(o.trans == op::none && o.inverse)) continue;
    ops.push_back(o);
    refs.push_back(reference_result(c, o));
  }
  for (const auto& layout : layouts) {
    const tensor bd = backend::upload(b, layout);
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const operation& o = ops[i];
      const std::vector<wide_t<T>>& ref = refs[i];
      const K Ko = with_trans(K0, o.trans);
      BOOST_TEST_CONTEXT(c.text() << ", " << operation_text(o) << ", " << backend::layout_text(layout)) {
        auto solver = kronex::compile(o.inverse ? Ko.inverse() : Ko, bd, backend::options());
        tensor xd = backend::like(bd);
        solver(bd, xd);
        const double err = error_against(backend::download(xd), ref);
        BOOST_TEST(err <= tol, "compiled: relative error " << err << " > " << tol << "\n" << solver);

        tensor yd = bd;
        solver(yd, yd);
        const double in_place_err = error_against(backend::download(yd), ref);
        BOOST_TEST(in_place_err <= tol, "in place: relative error " << in_place_err << " > " << tol);

        if (o.trans == op::none) {
          auto lazy = [&]() -> tensor {
            if (o.inverse) return Ko.solve(bd);
            return Ko.apply(bd);
          };
          const double lazy_err = error_against(backend::download(lazy()), ref);
          BOOST_TEST(lazy_err <= tol, "lazy: relative error " << lazy_err << " > " << tol);
        }
      }
    }
    BOOST_TEST(kronex_test::rel_error(backend::download(bd), b) == 0.0,
               c.text() << ", " << backend::layout_text(layout) << ": the input was modified");
  }
}

template <class T, std::size_t... I>
auto kron_of_any(const test_case<T>& c, std::index_sequence<I...>) {
  return kronex::kron(c.factors[I].factor...);
}

// The backend's layouts: one of them, `which` modulo their number (cases rotate through them),
// or all of them when `which` is negative.
template <std::size_t D>
std::vector<std::array<int, D>> layouts(long which) {
  auto all = backend::template layouts<D>();
  if (which < 0) return all;
  return {all[std::size_t(which) % all.size()]};
}

// The case through any_factor (one expression type per rank and value type).
template <class T, std::size_t D>
void check_case(const test_case<T>& c, long which = -1) {
  check_expression<T, D>(kron_of_any(c, std::make_index_sequence<D>{}), c, layouts<D>(which));
}

template <class T, std::size_t D>
void random_cases(std::size_t count, const std::vector<std::size_t>& sizes, long& which) {
  for (std::size_t t = 0; t < count; ++t) {
    std::vector<kind> kinds(D);
    std::vector<std::size_t> shape(D);
    for (std::size_t k = 0; k < D; ++k) {
      kinds[k] = operator_kinds[uniform(0, std::size(operator_kinds) - 1)];
      shape[k] = sizes[uniform(0, sizes.size() - 1)];
    }
    check_case<T, D>(make_case<T>(kinds, shape), which++);
  }
}

// A function solver at each mode in turn, the other modes of random kinds.
template <class T, std::size_t D>
void function_at_every_mode(const std::vector<std::size_t>& sizes, long& which) {
  for (std::size_t f = 0; f < D; ++f) {
    std::vector<kind> kinds(D);
    std::vector<std::size_t> shape(D);
    for (std::size_t k = 0; k < D; ++k) {
      kinds[k] = k == f ? kind::function : operator_kinds[uniform(0, std::size(operator_kinds) - 1)];
      shape[k] = sizes[uniform(0, sizes.size() - 1)];
    }
    check_case<T, D>(make_case<T>(kinds, shape), which++);
  }
}

} // namespace

// 1D: every kind at sizes 1, 2, 3 and 10 (10 splits unevenly over 3 and 4 ranks).
BOOST_AUTO_TEST_CASE_TEMPLATE(one_factor_every_kind, T, value_types) {
  long which = 0;
  for (std::size_t n : {1, 2, 3, 10}) {
    for (kind k : operator_kinds) check_case<T, 1>(make_case<T>({k}, {n}), which++);
    check_case<T, 1>(make_case<T>({kind::function}, {n}), which++);
  }
}

// 2D: every pair of kinds, random sizes from 1.
BOOST_AUTO_TEST_CASE_TEMPLATE(two_factors_every_kind_pair, T, value_types) {
  long which = 0;
  const std::vector<std::size_t> sizes = {1, 2, 3, 4, 5, 7};
  for (kind a : operator_kinds)
    for (kind b : operator_kinds)
      check_case<T, 2>(make_case<T>({a, b}, {sizes[uniform(0, 5)], sizes[uniform(0, 5)]}), which++);
  function_at_every_mode<T, 2>(sizes, which);
}

// 3D: every one of the 5^3 kind tuples (a random sample of them where the backend's cases are
// costly, see every_kind_tuple); 4D: random kinds. Random sizes from 1; cases rotate through the
// backend's layouts (every process grid of the ranks in turn).
BOOST_AUTO_TEST_CASE_TEMPLATE(three_and_four_factors, T, value_types) {
  long which = 0;
  const std::vector<std::size_t> sizes = {1, 2, 3, 4, 5};
  if (backend::every_kind_tuple) {
    for (kind a : operator_kinds)
      for (kind b : operator_kinds)
        for (kind c : operator_kinds)
          check_case<T, 3>(make_case<T>({a, b, c}, {sizes[uniform(0, 4)], sizes[uniform(0, 4)], sizes[uniform(0, 4)]}),
                           which++);
  } else {
    random_cases<T, 3>(16, sizes, which);
  }
  function_at_every_mode<T, 3>(sizes, which);
  random_cases<T, 4>(8, {1, 2, 3, 4}, which);
  function_at_every_mode<T, 4>({1, 2, 3}, which);
}

// 5D and 6D where the backend takes them (the host).
BOOST_AUTO_TEST_CASE_TEMPLATE(five_and_six_factors, T, value_types) {
  if constexpr (backend::max_rank >= 6) {
    long which = 0;
    random_cases<T, 5>(4, {1, 2, 3}, which);
    random_cases<T, 6>(4, {1, 2, 3}, which);
    function_at_every_mode<T, 6>({1, 2}, which);
  }
}

// Sizes that split unevenly over 2, 3 and 4 ranks, a band, a periodic band and a dense factor
// (all pivoting where they can), on every layout.
BOOST_AUTO_TEST_CASE_TEMPLATE(uneven_sizes_every_layout, T, value_types) {
  check_case<T, 3>(make_case<T>({kind::clamped, kind::periodic, kind::dense}, {10, 7, 5}));
  check_case<T, 2>(make_case<T>({kind::dense, kind::function}, {7, 10}));
}

// Each factor type as itself, not through any_factor: banded (clamped and periodic),
// xt::xtensor<T, 2>, kronex::diagonal, kronex::identity, kronex::function_solver. One layout
// (on 4 ranks, grids (1,1,2,2) and (1,2,2)): the types matter here, not the layouts.
BOOST_AUTO_TEST_CASE_TEMPLATE(each_factor_type_as_itself, T, value_types) {
  const auto c = make_case<T>({kind::clamped, kind::dense, kind::diagonal, kind::periodic}, {5, 3, 4, 6});
  const auto& f = c.factors;
  const auto& A = std::get<kronex::banded<T>>(f[0].factor.get());
  const auto& B = std::get<xt::xtensor<T, 2>>(f[1].factor.get());
  const auto& C = std::get<kronex::diagonal_factor<T>>(f[2].factor.get());
  const auto& E = std::get<kronex::banded<T>>(f[3].factor.get());
  check_expression<T, 4>(kronex::kron(A, B, C, E), c, layouts<4>(1));

  const auto s = make_case<T>({kind::identity, kind::function, kind::clamped}, {4, 5, 3});
  const auto& I = std::get<kronex::identity_factor>(s.factors[0].factor.get());
  const auto& F = std::get<kronex::function_solver<T>>(s.factors[1].factor.get());
  const auto& G = std::get<kronex::banded<T>>(s.factors[2].factor.get());
  check_expression<T, 3>(kronex::kron(I, F, G), s, layouts<3>(1));
}
