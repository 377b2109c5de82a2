// Krylov solves on distributed tensors, at 1 to 4 ranks and every 3D process grid that fits,
// against the serial host solver on the same data: every method with and without a Kronecker
// product preconditioner, double and complex<double> (float with single-precision bounds), on
// operators that are not a single Kronecker product (a Kronecker sum applied through its
// distributed plan, a composition, a matrix_free that scales around a distributed plan, a
// sparse_operator), and a sum's inverse and kronex::jacobi as preconditioners; the same
// iterations, the same status, the same tested residuals, solutions within 1e-10, and results
// identical on every rank. Each batch of dot products is exactly one MPI_Allreduce: the
// MPI_Allreduce calls that sum floating-point values are counted through the MPI profiling
// interface and compared with the host solver's batches and with CG's formula; a sparse
// operator's gathers are counted the same way. Ranks with empty blocks take part; errors
// (shapes, grids, a matrix_free throwing on one rank) are raised on every rank.
#define BOOST_TEST_MODULE test_distributed_krylov
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "kronex_mpi_test_support.hpp"

// MPI_Allreduce calls that sum real numbers (what a Krylov space's dots make; the backend's error
// agreement reduces ints with MPI_MIN and is not counted). The profiling interface lets a
// program define MPI_Allreduce and forward to PMPI_Allreduce; kronex is header-only, so every
// call kronex makes is this program's.
static std::size_t g_sum_allreduces = 0;
extern "C" int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  if (op == MPI_SUM && (type == MPI_DOUBLE || type == MPI_FLOAT)) ++g_sum_allreduces;
  return PMPI_Allreduce(send, recv, count, type, op, comm);
}

// MPI_Allgatherv calls: a sparse_operator's gathers of x.
static std::size_t g_allgathers = 0;
extern "C" int MPI_Allgatherv(const void* send, int count, MPI_Datatype type, void* recv, const int* counts,
                              const int* displs, MPI_Datatype rtype, MPI_Comm comm) {
  ++g_allgathers;
  return PMPI_Allgatherv(send, count, type, recv, counts, displs, rtype, comm);
}

namespace {

namespace gallery = kronex::gallery;
using kronex::krylov_method;
using kronex::krylov_status;
using kronex_test::distribute;
using kronex_test::gather;
using kronex_test::grid_text;
using kronex_test::grids_for;
using kronex_test::rel_error;
using kronex_test::world_rank;
using kronex_test::world_size;

constexpr krylov_method methods[] = {krylov_method::cg, krylov_method::bicgstab, krylov_method::gmres,
                                     krylov_method::minres};
constexpr std::size_t n0 = 5, n1 = 6, n2 = 7;

long sum_over_ranks(long v) {
  long r = 0;
  PMPI_Allreduce(&v, &r, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  return r;
}

// Every rank returned the same result, bit for bit: the replicated scalars took the same values.
bool same_on_every_rank(const kronex::krylov_result& r) {
  std::vector<double> mine{double(r.iterations), double(r.status), r.relative_residual};
  mine.insert(mine.end(), r.history.begin(), r.history.end());
  long size = long(mine.size()), max_size = 0;
  PMPI_Allreduce(&size, &max_size, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (sum_over_ranks(size) != max_size * world_size()) return false;
  std::vector<double> lo(mine.size()), hi(mine.size());
  PMPI_Allreduce(mine.data(), lo.data(), int(size), MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Allreduce(mine.data(), hi.data(), int(size), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return lo == mine && hi == mine;
}

// The same random tensor on every rank (rank 0's).
template <class T>
xt::xtensor<T, 3> shared_random() {
  xt::xtensor<T, 3> b = kronex_test::random_tensor<T, 3>({n0, n1, n2});
  MPI_Bcast(b.data(), int(b.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
  return b;
}

// A hermitian positive definite tridiagonal factor: `diag` on the diagonal, `off` above it and
// its conjugate below (imaginary for complex T, so the complex solves are not real ones).
template <class T>
kronex::banded<T> tridiagonal(std::size_t n, double diag, double off) {
  T o = T(off);
  if constexpr (kronex::value_traits<T>::is_complex) o = T(0.6 * off, 0.8 * off);
  xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
  for (std::size_t i = 0; i < n; ++i) {
    a(i, i) = T(diag);
    if (i + 1 < n) a(i, i + 1) = o, a(i + 1, i) = kronex::detail::conj_if_complex(o);
  }
  return kronex_test::to_banded(a, 1, 1, kronex::boundary::clamped);
}

// Well-conditioned factors (condition numbers below 2), so that the distributed solve, which
// sums its dot products in another order, stays within rounding of the serial one through the
// whole iteration: K ("stiffness") and M ("mass");
// L = K⊗M⊗M + M⊗K⊗M + M⊗M⊗K (hermitian positive definite, not a Kronecker product), the
// preconditioner kron(M, M, M).inverse().
template <class T>
struct problem {
  kronex::banded<T> M0 = tridiagonal<T>(n0, 1.0, 0.2), M1 = tridiagonal<T>(n1, 1.0, 0.2), M2 = tridiagonal<T>(n2, 1.0, 0.2);
  kronex::banded<T> K0 = tridiagonal<T>(n0, 2.0, -0.5), K1 = tridiagonal<T>(n1, 2.0, -0.5), K2 = tridiagonal<T>(n2, 2.0, -0.5);
  auto sum() const { return kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2); }
  // Not hermitian.
  auto composition() const { return sum() * kronex::kron(K0, M1, M2); }
  auto preconditioner() const { return kronex::kron(M0, M1, M2).inverse(); }
};

template <class R>
kronex::krylov_options<R> options() {
  kronex::krylov_options<R> o;
  o.rtol = R(1e-12);
  o.history = true;
  o.restart = 8;  // GMRES restarts within the solve
  return o;
}

// The serial solve and the distributed one agree: status, iterations (one check apart only when
// a norm lands within rounding of the threshold), every tested residual norm, the solution, and
// the number of batched reductions, which is the number of real-sum MPI_Allreduce calls the
// distributed solve made.
template <class T>
void expect_same(const kronex::krylov_result& serial, const xt::xtensor<T, 3>& x_serial, std::size_t serial_reductions,
                 const kronex::krylov_result& dist, const kronex::distributed_tensor<T, 3>& x_dist,
                 std::size_t dist_reductions, std::size_t allreduces, const std::string& what) {
  BOOST_TEST_CONTEXT(what << "\n  serial:      " << serial.message << "\n  distributed: " << dist.message) {
    BOOST_TEST(serial.converged);
    BOOST_TEST(serial.iterations > 3);  // enough iterations for rounding to matter
    BOOST_TEST(dist.status == serial.status);
    // Each check compares the tested norm with the threshold rtol ||b|| (x0 = 0: history[0] is
    // ||b||). When one solve's norm lands within rounding of it, the other, whose sums round
    // differently, may stop one check later: allowed only then, the longer solve's norm at the
    // shorter one's last check within 10 % of the threshold.
    const std::size_t common = std::min(dist.history.size(), serial.history.size());
    const bool same_length = dist.iterations == serial.iterations;
    if (!same_length) {
      const kronex::krylov_result& longer = dist.iterations > serial.iterations ? dist : serial;
      const double threshold = options<double>().rtol * serial.history.at(0);
      BOOST_TEST(std::max(dist.iterations, serial.iterations) - std::min(dist.iterations, serial.iterations) == 1u);
      BOOST_TEST_REQUIRE(common >= 1u);
      BOOST_TEST(std::abs(longer.history.at(common - 1) - threshold) <= 0.1 * threshold,
                 "the solves stopped one check apart, but not at a norm within rounding of the threshold");
    }
    for (std::size_t k = 0; k < common; ++k)
      BOOST_TEST(std::abs(dist.history[k] - serial.history[k]) <= 1e-11 * serial.history[0]);
    BOOST_TEST(rel_error(gather(x_dist), x_serial) < 1e-10);
    if (same_length) BOOST_TEST(dist_reductions == serial_reductions);
    BOOST_TEST(allreduces == dist_reductions);
    BOOST_TEST(dist.relative_residual < 1e-11);
    BOOST_TEST(same_on_every_rank(dist));
  }
}

// One method on one operator (host form `ah`, distributed form `ad`), with and without P, on grid.
template <class T, class AH, class AD, class P>
void compare(krylov_method m, const AH& ah, const AD& ad, const P& p, const xt::xtensor<T, 3>& b,
             kronex::distributed_tensor<T, 3>& bd, const std::string& what) {
  const auto opt = options<kronex::real_t<T>>();
  for (const bool with_p : {false, true}) {
    const std::string context = what + ", " + kronex::to_string(m) + (with_p ? ", preconditioned" : "");
    xt::xtensor<T, 3> x = xt::zeros<T>(b.shape());
    auto xd = kronex::distributed_tensor<T, 3>::like(bd);
    kronex::krylov_result serial, dist;
    std::size_t serial_reductions = 0, dist_reductions = 0, allreduces = 0;
    if (with_p) {
      auto s = kronex::compile_krylov(m, ah, p, b, opt);
      serial = s(b, x);
      serial_reductions = s.reductions();
      auto d = kronex::compile_krylov(m, ad, p, bd, opt);
      xd.local().fill(T(0));
      g_sum_allreduces = 0;
      dist = d(bd, xd);
      allreduces = g_sum_allreduces;
      dist_reductions = d.reductions();
      BOOST_TEST(d.preconditioned());
    } else {
      auto s = kronex::compile_krylov(m, ah, b, opt);
      serial = s(b, x);
      serial_reductions = s.reductions();
      auto d = kronex::compile_krylov(m, ad, bd, opt);
      xd.local().fill(T(0));
      g_sum_allreduces = 0;
      dist = d(bd, xd);
      allreduces = g_sum_allreduces;
      dist_reductions = d.reductions();
    }
    expect_same(serial, x, serial_reductions, dist, xd, dist_reductions, allreduces, context);
    // CG: ||b||, the initial {r^H r, r^H z}, two per iteration, the final residual.
    if (m == krylov_method::cg) BOOST_TEST(dist_reductions == 3 + 2 * dist.iterations, context);
  }
}

template <class T>
void every_method_on(const std::array<int, 3>& grid) {
  const problem<T> pb;
  const xt::xtensor<T, 3> b = shared_random<T>();
  auto bd = distribute(b, grid);
  const std::string what = std::string(kronex::value_traits<T>::name) + ", " + grid_text(grid);
  for (krylov_method m : methods) compare<T>(m, pb.sum(), pb.sum(), pb.preconditioner(), b, bd, what + ", Kronecker sum");
  // Not hermitian: the methods for any nonsingular operator.
  for (krylov_method m : {krylov_method::bicgstab, krylov_method::gmres})
    compare<T>(m, pb.composition(), pb.composition(), pb.preconditioner(), b, bd, what + ", composition");
}

BOOST_AUTO_TEST_CASE(every_method_matches_the_serial_solver_on_every_grid) {
  for (const auto& g : grids_for<3>(world_size())) {
    every_method_on<double>(g);
    every_method_on<std::complex<double>>(g);
  }
}

// Single precision: every method, preconditioned, against the serial float solve. Rounding is
// 1e-7 here, so the iterations may differ by one where a check lands near the tolerance; the
// solutions agree to single precision.
BOOST_AUTO_TEST_CASE(float_solves_agree_with_the_serial_solver) {
  using T = float;
  const problem<T> pb;
  const xt::xtensor<T, 3> b = shared_random<T>();
  kronex::krylov_options<float> opt;
  opt.rtol = 1e-5f;
  for (const auto& g : grids_for<3>(world_size())) {
    auto bd = distribute(b, g);
    for (krylov_method m : methods) {
      xt::xtensor<T, 3> x = xt::zeros<T>(b.shape());
      const auto serial = kronex::compile_krylov(m, pb.sum(), pb.preconditioner(), b, opt)(b, x);
      auto xd = kronex::distributed_tensor<T, 3>::like(bd);
      xd.local().fill(0);
      auto d = kronex::compile_krylov(m, pb.sum(), pb.preconditioner(), bd, opt);
      g_sum_allreduces = 0;
      const auto dist = d(bd, xd);
      const std::size_t allreduces = g_sum_allreduces;  // before gather() adds its own
      BOOST_TEST_CONTEXT(grid_text(g) << ", " << m << ": " << serial.message << " / " << dist.message) {
        BOOST_TEST(dist.converged);
        BOOST_TEST(dist.iterations + 1 >= serial.iterations);
        BOOST_TEST(dist.iterations <= serial.iterations + 1);
        BOOST_TEST(rel_error(gather(xd), x) < 1e-4);
        BOOST_TEST(allreduces == d.reductions());
        BOOST_TEST(same_on_every_rank(dist));
      }
    }
  }
}

// The one-shot functions take distributed tensors too, and give what compile_krylov gives.
BOOST_AUTO_TEST_CASE(one_shot_functions_match_compiled_solvers) {
  using T = double;
  const problem<T> pb;
  const xt::xtensor<T, 3> b = shared_random<T>();
  const auto opt = options<T>();
  for (const auto& g : grids_for<3>(world_size())) {
    auto bd = distribute(b, g);
    auto x1 = kronex::distributed_tensor<T, 3>::like(bd), x2 = x1, x3 = x1;
    x1.local().fill(0);
    x2.local().fill(0);
    x3.local().fill(0);
    const auto r1 = kronex::cg(pb.sum(), bd, x1, pb.preconditioner(), opt);
    const auto r2 = kronex::gmres(pb.sum(), bd, x2, opt);
    auto s = kronex::compile_krylov(krylov_method::cg, pb.sum(), pb.preconditioner(), bd, opt);
    const auto r3 = s(bd, x3);
    BOOST_TEST_CONTEXT(grid_text(g) << ": " << r1.message << " / " << r2.message) {
      BOOST_TEST(r1.converged);
      BOOST_TEST(r2.converged);
      BOOST_TEST(r1.iterations == r3.iterations);
      BOOST_TEST(r1.history == r3.history);
      BOOST_TEST(rel_error(gather(x1), gather(x3)) == 0.0);
      BOOST_TEST(rel_error(gather(x2), gather(x1)) < 1e-9);
    }
    // b may be x: solved from x = b as the initial guess, b copied first.
    auto xb = kronex::distributed_tensor<T, 3>::like(bd);
    xb.local() = bd.local();
    const auto r4 = kronex::cg(pb.sum(), xb, xb, pb.preconditioner(), opt);
    BOOST_TEST(r4.converged, r4.message);
    BOOST_TEST(rel_error(gather(xb), gather(x1)) < 1e-9);
  }
}

// A variable coefficient: A = S L S with S = diag(s) a positive pointwise scaling, as a
// matrix_free whose function gets this rank's blocks; it applies L through a compiled
// distributed plan (collective: every rank calls the function at once). The host solve runs the
// same operator on the whole tensor. And the same matrix assembled as a sparse_operator (x
// gathered on every rank per apply). Preconditioned by kron(M, M, M)^-1 and by L^-1.
BOOST_AUTO_TEST_CASE(matrix_free_scaling_and_sparse_operator_match_the_serial_solver) {
  using T = double;
  const problem<T> pb;
  const xt::xtensor<T, 3> b = shared_random<T>();
  xt::xtensor<T, 3> s = shared_random<T>();
  for (auto& v : s) v = 1.0 + 0.1 * v;  // in [0.9, 1.1]: well conditioned, as L (see problem)
  const kronex::shape_t shape{n0, n1, n2};
  const std::size_t N = n0 * n1 * n2;
  auto L_host = kronex::compile(pb.sum(), shape);
  std::vector<T> host_tmp(N);
  const kronex::matrix_free<T> A_host(shape, [&](const T* x, T* y) {
    for (std::size_t i = 0; i < N; ++i) host_tmp[i] = s.data()[i] * x[i];
    L_host.run(host_tmp.data(), y);
    for (std::size_t i = 0; i < N; ++i) y[i] *= s.data()[i];
  });
  // Its assembled matrix, column by column.
  std::vector<kronex::entry<T>> entries;
  {
    std::vector<T> e(N, 0), col(N);
    for (std::size_t j = 0; j < N; ++j) {
      e[j] = 1;
      A_host.run(e.data(), col.data());
      e[j] = 0;
      for (std::size_t i = 0; i < N; ++i)
        if (col[i] != 0) entries.push_back({i, j, col[i]});
    }
  }
  const auto A_sparse = kronex::sparse_operator<T>::from_entries(shape, entries);
  for (const auto& g : grids_for<3>(world_size())) {
    auto bd = distribute(b, g);
    const auto sd = distribute(s, g);
    auto L_dist = kronex::compile(pb.sum(), bd);
    const std::size_t n = bd.local().size();
    std::vector<T> tmp(n);
    const kronex::matrix_free<T> A_dist(shape, [&](const T* x, T* y) {
      for (std::size_t i = 0; i < n; ++i) tmp[i] = sd.local().data()[i] * x[i];
      L_dist.run(tmp.data(), y);
      for (std::size_t i = 0; i < n; ++i) y[i] *= sd.local().data()[i];
    });
    for (krylov_method m : methods) {
      compare<T>(m, A_host, A_dist, pb.preconditioner(), b, bd, grid_text(g) + ", matrix_free S L S");
      compare<T>(m, A_sparse, A_sparse, pb.preconditioner(), b, bd, grid_text(g) + ", sparse_operator S L S");
    }
    // The inverse of the sum (fast diagonalisation, with its distributed transforms) as the
    // preconditioner of the hermitian methods.
    for (krylov_method m : {krylov_method::cg, krylov_method::minres})
      compare<T>(m, A_host, A_dist, pb.sum().inverse(), b, bd, grid_text(g) + ", matrix_free S L S, L^-1");
  }
}

// A tensor smaller than the grid: some ranks hold empty blocks, and still take part in every
// reduction and exchange (with zero partial sums), so the solve ends on every rank.
BOOST_AUTO_TEST_CASE(ranks_with_empty_blocks) {
  using T = double;
  const auto K2 = tridiagonal<T>(2, 2.0, -0.5), M2 = tridiagonal<T>(2, 1.0, 0.2);
  const auto K3 = tridiagonal<T>(3, 2.0, -0.5), M3 = tridiagonal<T>(3, 1.0, 0.2);
  const auto L = kronex::kron(K2, M3, M3) + kronex::kron(M2, K3, M3);
  xt::xtensor<T, 3> b = kronex_test::random_tensor<T, 3>({2, 3, 3});
  MPI_Bcast(b.data(), int(b.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const auto opt = options<T>();
  for (krylov_method m : methods) {
    xt::xtensor<T, 3> x = xt::zeros<T>(b.shape());
    auto s = kronex::compile_krylov(m, L, b, opt);
    const auto serial = s(b, x);
    auto bd = distribute(b, std::array<int, 3>{world_size(), 1, 1});  // 2 planes over P ranks
    auto xd = kronex::distributed_tensor<T, 3>::like(bd);
    xd.local().fill(0);
    auto d = kronex::compile_krylov(m, L, bd, opt);
    g_sum_allreduces = 0;
    const auto dist = d(bd, xd);
    expect_same(serial, x, s.reductions(), dist, xd, d.reductions(), g_sum_allreduces,
                std::string("empty blocks, ") + kronex::to_string(m));
  }
}

// A sparse_operator that couples the blocks gathers x once per apply; one whose rows refer only
// to the rank's own block (kronex::jacobi: a diagonal) gathers nothing, on every grid.
BOOST_AUTO_TEST_CASE(sparse_operators_gather_only_what_they_need) {
  using T = double;
  const problem<T> pb;
  const xt::xtensor<T, 3> b = shared_random<T>();
  const kronex::shape_t shape{n0, n1, n2};
  const std::size_t N = n0 * n1 * n2;
  auto L_host = kronex::compile(pb.sum(), shape);
  std::vector<kronex::entry<T>> entries;
  std::vector<T> e(N, 0), col(N);
  for (std::size_t j = 0; j < N; ++j) {
    e[j] = 1;
    L_host.run(e.data(), col.data());
    e[j] = 0;
    for (std::size_t i = 0; i < N; ++i)
      if (col[i] != 0) entries.push_back({i, j, col[i]});
  }
  const auto A = kronex::sparse_operator<T>::from_entries(shape, entries);
  const auto J = kronex::jacobi(A);
  const auto opt = options<T>();
  for (const auto& g : grids_for<3>(world_size())) {
    auto bd = distribute(b, g);
    for (krylov_method m : {krylov_method::cg, krylov_method::gmres}) {
      xt::xtensor<T, 3> x = xt::zeros<T>(b.shape());
      auto s = kronex::compile_krylov(m, pb.sum(), J, b, opt);
      const auto serial = s(b, x);
      auto xd = kronex::distributed_tensor<T, 3>::like(bd);
      xd.local().fill(0);
      auto d = kronex::compile_krylov(m, pb.sum(), J, bd, opt);
      g_sum_allreduces = 0;
      g_allgathers = 0;
      const auto dist = d(bd, xd);
      BOOST_TEST(g_allgathers == 0u, grid_text(g));  // Jacobi: block-local
      expect_same(serial, x, s.reductions(), dist, xd, d.reductions(), g_sum_allreduces,
                  grid_text(g) + ", Jacobi preconditioner, " + kronex::to_string(m));
    }
    // The coupled operator: one gather per apply of A (CG: one per iteration, and one each for
    // the initial and the final residual), none when there is one rank.
    auto xd = kronex::distributed_tensor<T, 3>::like(bd);
    xd.local().fill(0);
    auto d = kronex::compile_krylov(krylov_method::cg, A, J, bd, opt);
    g_allgathers = 0;
    const auto r = d(bd, xd);
    BOOST_TEST(r.converged, r.message);
    BOOST_TEST(g_allgathers == (world_size() == 1 ? 0 : r.iterations + 2), grid_text(g));
  }
}

// Runs call on every rank; true when every rank threw E with every needle in its message.
template <class E, class F>
bool every_rank_throws(F&& call, const std::vector<std::string>& needles) {
  int ok = 0;
  try {
    call();
  } catch (const E& e) {
    const std::string text = e.what();
    ok = 1;
    for (const auto& n : needles) ok = ok && text.find(n) != std::string::npos;
    BOOST_TEST_MESSAGE("caught: " << text);
  } catch (...) {
  }
  return sum_over_ranks(ok) == world_size();
}

BOOST_AUTO_TEST_CASE(shape_and_grid_mismatches_raise_on_every_rank) {
  using T = double;
  const problem<T> pb;
  const int P = world_size();
  const std::array<int, 3> grid{P, 1, 1};
  auto bd = distribute(shared_random<T>(), grid);
  auto xd = kronex::distributed_tensor<T, 3>::like(bd);
  kronex::distributed_tensor<T, 3> other(MPI_COMM_WORLD, {n0, n1, n2 + 1}, grid);
  // The operator's shape against b's global shape, both named.
  BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>([&] { kronex::cg(pb.sum(), other, other); },
                                                            {"(5,6,7)", "(5,6,8)", "operator"}));
  BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>(
      [&] { kronex::compile_krylov(krylov_method::gmres, pb.sum(), kronex::kron(pb.M0, pb.M1, pb.M0).inverse(), bd); },
      {"preconditioner", "(5,6,5)", "(5,6,7)"}));
  // b and x of different global shapes.
  BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>([&] { kronex::minres(pb.sum(), bd, other); },
                                                            {"(5,6,7)", "(5,6,8)"}));
  auto s = kronex::compile_krylov(krylov_method::cg, pb.sum(), bd);
  BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>([&] { s(bd, other); }, {"(5,6,7)", "(5,6,8)"}));
  if (P > 1) {
    kronex::distributed_tensor<T, 3> other_grid(MPI_COMM_WORLD, {n0, n1, n2}, {1, P, 1});
    const std::string g1 = "(" + std::to_string(P) + ",1,1)", g2 = "(1," + std::to_string(P) + ",1)";
    BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>([&] { kronex::cg(pb.sum(), bd, other_grid); }, {g1, g2}));
    BOOST_TEST(every_rank_throws<kronex::dimension_mismatch>([&] { s(other_grid, xd); }, {g1, g2, "right-hand side"}));
  }
  // Nobody was left inside a collective: the solver still works.
  xd.local().fill(0);
  BOOST_TEST(s(bd, xd).converged);
}

struct bad_block : std::exception {
  const char* what() const noexcept override { return "bad block"; }
};

// A matrix_free whose function throws on the last rank only: every rank throws (that rank the
// function's exception, the others a kronex::error naming it), nobody waits in a reduction.
BOOST_AUTO_TEST_CASE(a_matrix_free_throwing_on_one_rank_raises_on_every_rank) {
  using T = double;
  const problem<T> pb;
  const int P = world_size();
  auto bd = distribute(shared_random<T>(), std::array<int, 3>{1, 1, P});
  auto xd = kronex::distributed_tensor<T, 3>::like(bd);
  xd.local().fill(0);
  const kronex::shape_t shape{n0, n1, n2};
  int calls = 0;
  const kronex::matrix_free<T> bad(shape, [&](const T* x, T* y) {
    if (++calls == 3 && world_rank() == P - 1) throw bad_block();
    for (std::size_t i = 0; i < xd.local().size(); ++i) y[i] = x[i];
  });
  int ok = 0;
  try {
    kronex::cg(pb.sum(), bd, xd, bad);
  } catch (const bad_block&) {
    ok = world_rank() == P - 1;
  } catch (const kronex::error& e) {
    ok = std::string(e.what()).find("failed on rank " + std::to_string(P - 1)) != std::string::npos;
  }
  BOOST_TEST(sum_over_ranks(ok) == P);
}

} // namespace
