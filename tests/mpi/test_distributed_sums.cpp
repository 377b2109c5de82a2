// Operator sums on distributed host tensors, at 1 to 4 ranks and every process grid that fits:
// the fast-diagonalisation solve, its pseudo-inverse (whose dot products are summed over the
// ranks), an applied sum and a composition, against the dense reference gathered on every rank;
// the plan's set-up and steps are the same on every rank and exchanges() counts its exchanges; errors
// (not separable, singular) are raised on every rank. Fast diagonalisation's forward transform
// ends in its last layout, the scaling and the eigenbasis projections run there and the backward
// transform starts there: on every grid, with uneven splits (the block between the transforms is
// larger than the input block on some ranks), a 3D solve and pseudo-inverse match the dense
// reference and make exactly 2m exchanges (within the bound 2m + 1; returning to the input layout
// after each transform made 2(m + 1)), m the split axes, as many as the printed plan lists.
#define BOOST_TEST_MODULE test_distributed_sums
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <string>

#include "kronex_mpi_test_support.hpp"

namespace {

namespace gallery = kronex::gallery;
using kronex_test::distribute;
using kronex_test::gather;
using kronex_test::grids_for;
using kronex_test::grid_text;
using kronex_test::random_tensor;
using kronex_test::rel_error;

// True on every rank when `s` is the same text on every rank.
bool same_on_all_ranks(const std::string& s) {
  unsigned long length = s.size(), max_length = 0, min_length = 0;
  MPI_Allreduce(&length, &max_length, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&length, &min_length, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
  if (max_length != min_length) return false;
  std::string root = s;
  MPI_Bcast(root.data(), int(length), MPI_CHAR, 0, MPI_COMM_WORLD);
  int same = root == s ? 1 : 0, all = 0;
  MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Exchanges listed in a printed plan ("  exchange  <method>  <communicator>  ..."), local
// copies ("self") not counted.
std::size_t printed_exchanges(const std::string& plan) {
  std::size_t n = 0;
  for (std::size_t at = plan.find("  exchange  "); at != std::string::npos; at = plan.find("  exchange  ", at + 1)) {
    const std::size_t comm = plan.find("  ", at + 12) + 2;
    n += plan.compare(comm, 4, "self") != 0;
  }
  return n;
}

template <class T>
void check_sums_3d(const std::array<int, 3>& grid) {
  BOOST_TEST_CONTEXT(kronex::value_traits<T>::name << ", " << grid_text(grid)) {
    const auto K0 = gallery::bspline_stiffness<T>(6, 2), M0 = gallery::bspline_mass<T>(6, 2);
    const auto K1 = gallery::bspline_stiffness<T>(5, 2), M1 = gallery::bspline_mass<T>(5, 2);
    const auto K2 = gallery::bspline_stiffness<T>(4, 2), M2 = gallery::bspline_mass<T>(4, 2);
    auto L = kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) + 0.5 * kronex::kron(M0, M1, M2);
    const xt::xtensor<T, 3> b = random_tensor<T, 3>({6, 5, 4});
    // The same b on every rank (rank 0's).
    xt::xtensor<T, 3> b0 = b;
    MPI_Bcast(b0.data(), int(b0.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
    auto bd = distribute(b0, grid);
    auto S = kronex::compile(L.inverse(), bd);
    // Local views, costs and kernels (a dense apply runs as GEMMs only on blocks large enough)
    // are each rank's own; the eigen set-up (global), the steps' kinds and modes and the
    // exchanges are the same on every rank.
    const std::string plan = kronex::to_string(S.plan());
    std::string structure = plan.substr(0, plan.find("  steps"));
    for (const auto& st : S.plan().steps) {
      const bool exchange = kronex::kind_of(st) == kronex::step_kind::exchange;
      structure += std::string(kronex::to_string(kronex::kind_of(st))) + " " +
                   (exchange ? kronex::step_method(st) : std::to_string(kronex::step_info(st).mode)) + "\n";
    }
    BOOST_TEST(same_on_all_ranks(structure), plan);
    std::size_t exchange_steps = 0;
    for (const auto& st : S.plan().steps)
      if (const auto* e = std::get_if<kronex::exchange_step>(&st))
        exchange_steps += e->how != kronex::exchange_step::method::local_copy ? 1 : 0;
    BOOST_TEST(S.exchanges() == exchange_steps);
    auto xd = kronex::distributed_tensor<T, 3>::like(bd);
    S(bd, xd);
    const auto expected = kronex::reference::solve(L, b0);
    BOOST_TEST(rel_error(gather(xd), expected) < 1e-10);
    S(xd, xd);  // in place: L^{-2} b
    BOOST_TEST(rel_error(gather(xd), kronex::reference::solve(L, expected)) < 1e-10);
    // The lazy apply of the sum, and a composition's solve.
    kronex::distributed_tensor<T, 3> yd = L.apply(bd);
    BOOST_TEST(rel_error(gather(yd), kronex::reference::apply(L, b0)) < 1e-12);
    auto P = kronex::kron(K0, M1, M2) * kronex::kron(M0, M1, M2);
    auto Q = 0.5 * kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, M2);
    kronex::distributed_tensor<T, 3> pd = Q.solve(bd);
    BOOST_TEST(rel_error(gather(pd), kronex::reference::solve(Q, b0)) < 1e-10);
    kronex::distributed_tensor<T, 3> qd = P.apply(bd);
    BOOST_TEST(rel_error(gather(qd), kronex::reference::apply(P, b0)) < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(fast_diagonalisation_on_every_grid) {
  for (const auto& g : grids_for<3>(kronex_test::world_size())) {
    check_sums_3d<double>(g);
    check_sums_3d<std::complex<double>>(g);
  }
}

// The compiled solve `op` of a 3D sum whose every axis has a stiffness matrix (so both transforms
// need every split axis whole) on `grid`: its result against `expected`, its exchanges against
// the printed plan and the bound.
template <class T, class Op>
void check_fd_solve(Op& op, const kronex::distributed_tensor<T, 3>& bd, const xt::xtensor<T, 3>& expected,
                    const std::array<int, 3>& grid) {
  std::size_t m = 0;  // split modes needing locality
  for (int g : grid) m += g > 1;
  const std::string plan = kronex::to_string(op.plan());
  BOOST_TEST(op.exchanges() == printed_exchanges(plan), plan);
  BOOST_TEST(op.exchanges() <= 2 * m + 1, plan);
  BOOST_TEST(op.exchanges() == 2 * m, plan);
  auto xd = kronex::distributed_tensor<T, 3>::like(bd);
  op(bd, xd);
  BOOST_TEST(rel_error(gather(xd), expected) < 1e-10);
  xd = bd;
  op(xd, xd);  // in place
  BOOST_TEST(rel_error(gather(xd), expected) < 1e-10);
}

template <class T>
void check_fd_exchanges_3d(const std::array<int, 3>& grid) {
  BOOST_TEST_CONTEXT(kronex::value_traits<T>::name << ", " << grid_text(grid)) {
    const xt::xtensor<T, 3> b = random_tensor<T, 3>({7, 5, 6});
    xt::xtensor<T, 3> b0 = b;
    MPI_Bcast(b0.data(), int(b0.size() * sizeof(T)), MPI_BYTE, 0, MPI_COMM_WORLD);
    auto bd = distribute(b0, grid);
    const auto K0 = gallery::bspline_stiffness<T>(7, 2), M0 = gallery::bspline_mass<T>(7, 2);
    const auto K1 = gallery::bspline_stiffness<T>(5, 2), M1 = gallery::bspline_mass<T>(5, 2);
    const auto K2 = gallery::bspline_stiffness<T>(6, 2), M2 = gallery::bspline_mass<T>(6, 2);
    auto L = kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + 2.0 * kronex::kron(M0, M1, K2) + kronex::kron(M0, M1, M2);
    auto S = kronex::compile(L.inverse(), bd);
    check_fd_solve(S, bd, kronex::reference::solve(L, b0), grid);
    // Pipelined (a tensor this small is not by default): the transforms' plans start or end in
    // the chain's last layout, whose axis 0 is split; the phase there that leaves axis 0 alone
    // runs in chunks, each sent once solved, with the same result.
    kronex::compile_options pipelined;
    pipelined.exchanges = kronex::exchange_transport::subarray;  // pipelining is for exchanges through MPI
    pipelined.exchange_chunks = 2;
    auto Sp = kronex::compile(L.inverse(), bd, pipelined);
    const std::string pipelined_plan = kronex::to_string(Sp.plan());
    BOOST_TEST((pipelined_plan.find("pipelined") != std::string::npos) == (Sp.exchanges() > 0), pipelined_plan);
    check_fd_solve(Sp, bd, kronex::reference::solve(L, b0), grid);
    // explain plans the same exchanges without compiling.
    BOOST_TEST(printed_exchanges(kronex::explain(L.inverse(), bd)) == S.exchanges());
    // Periodic: the constant mode's eigenvalue sum is dropped, with non-identity M on every axis
    // (so the eigenbasis projection runs on the block between the transforms).
    using kronex::boundary;
    const auto P0 = gallery::laplacian<T>(7, boundary::periodic), N0 = gallery::bspline_mass<T>(7, 1, boundary::periodic);
    const auto P1 = gallery::laplacian<T>(5, boundary::periodic), N1 = gallery::bspline_mass<T>(5, 1, boundary::periodic);
    const auto P2 = gallery::laplacian<T>(6, boundary::periodic), N2 = gallery::bspline_mass<T>(6, 1, boundary::periodic);
    auto pinv = (kronex::kron(P0, N1, N2) + kronex::kron(N0, P1, N2) + kronex::kron(N0, N1, P2)).pseudo_inverse(1e-10);
    auto Q = kronex::compile(pinv, bd);
    BOOST_TEST(kronex::to_string(Q.plan()).find("project") != std::string::npos, kronex::to_string(Q.plan()));
    check_fd_solve(Q, bd, kronex::reference::apply(pinv, b0), grid);
  }
}

BOOST_AUTO_TEST_CASE(fast_diagonalisation_exchanges_on_every_grid) {
  for (const auto& g : grids_for<3>(kronex_test::world_size())) {
    check_fd_exchanges_3d<double>(g);
    check_fd_exchanges_3d<std::complex<double>>(g);
  }
}

BOOST_AUTO_TEST_CASE(pseudo_inverse_and_errors_on_every_grid) {
  const auto K = gallery::laplacian<double>(6, kronex::boundary::periodic);
  const auto M = gallery::bspline_mass<double>(6, 1, kronex::boundary::periodic);
  const auto Mc = gallery::bspline_mass<double>(5, 2);
  const auto K5 = gallery::laplacian<double>(5);
  for (const auto& g : grids_for<2>(kronex_test::world_size())) {
    BOOST_TEST_CONTEXT(grid_text(g)) {
      xt::xtensor<double, 2> b = random_tensor<double, 2>({6, 5});
      MPI_Bcast(b.data(), int(b.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
      auto bd = distribute(b, g);
      // K periodic (singular) on axis 0, a non-identity M on axis 1: the projections' dot
      // products span the ranks.
      auto P = kronex::kron(K, Mc).pseudo_inverse(1e-10);
      kronex::distributed_tensor<double, 2> xd = P.apply(bd);
      BOOST_TEST(rel_error(gather(xd), kronex::reference::apply(P, b)) < 1e-10);
      // A singular sum: K ⊗ (Mc + K5) vanishes wherever K's eigenvalue does.
      auto L = kronex::kron(K, Mc) + kronex::kron(K, K5);
      kronex_test::expect_error<kronex::singular_factor>([&] { auto S = kronex::compile(L.inverse(), bd); },
                                                         {"singular", "(0,"});
      // Three matrices on axis 0.
      auto three = kronex::kron(K, Mc) + kronex::kron(M, K5) + kronex::kron(gallery::laplacian<double>(6), Mc);
      kronex_test::expect_error<kronex::not_separable>([&] { auto S = kronex::compile(three.inverse(), bd); },
                                                       {"axis 0", "three different matrices"});
    }
  }
}

} // namespace
