// The distributed backend against the serial host result: every process grid that fits the
// number of ranks (1 to 4), uneven splits, 1D to 4D and 6D, clamped / periodic / dense / diagonal
// / identity factors, transpose and adjoint, complex values; every rank compares its block of the
// result with the same block of the serial result (1e-12 relative in double). Each plan's number
// of exchanges is checked against the bound (split modes + 1). Errors are collective.
#define BOOST_TEST_MODULE test_distributed
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

#include "kronex_mpi_test_support.hpp"

namespace {

using kronex::boundary;
using kronex_test::max_over_ranks;
using kronex_test::random_band_matrix;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::to_banded;
using kronex_test::world_size;

using kronex_test::band;

using kronex_test::grids_for;

using kronex_test::grid_text;

// Distributes b, evaluates `expr` on it (lazily and compiled), and compares with the serial host
// result block by block.
template <class T, std::size_t D, class Expr>
void check_distributed(const Expr& expr, const xt::xtensor<T, D>& b, const std::array<int, D>& grid,
                       std::size_t split_modes_needing_local, const std::string& what) {
  BOOST_TEST_CONTEXT(what << ", " << grid_text(grid)) {
    const xt::xtensor<T, D> serial = kronex::compile(expr, b)(b);
    std::array<std::size_t, D> global;
    for (std::size_t k = 0; k < D; ++k) global[k] = b.shape()[k];
    kronex::distributed_tensor<T, D> bd(MPI_COMM_WORLD, global, grid);
    auto& local = bd.local();
    const auto off = bd.local_offset();
    const kronex::detail::box mine{kronex::shape_t(off.begin(), off.end()),
                                   kronex::shape_t(local.shape().begin(), local.shape().end())};
    const kronex::detail::box whole{kronex::shape_t(D, 0), kronex::shape_t(global.begin(), global.end())};
    kronex::detail::copy_box(mine, whole, b.data(), mine, local.data());

    auto solver = kronex::compile(expr, bd);
    auto xd = kronex::distributed_tensor<T, D>::like(bd);
    solver(bd, xd);
    BOOST_TEST(solver.exchanges() <= split_modes_needing_local + 1, solver);

    // This rank's block of the serial result.
    xt::xtensor<T, D> expected = xt::xtensor<T, D>::from_shape(local.shape());
    kronex::detail::copy_box(mine, whole, serial.data(), mine, expected.data());
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) diff = std::max(diff, double(std::abs(xd.local().data()[i] - expected.data()[i])));
    for (std::size_t i = 0; i < serial.size(); ++i) scale = std::max(scale, double(std::abs(serial.data()[i])));
    const double err = max_over_ranks(diff) / scale;
    BOOST_TEST(err <= kronex_test::tolerance<T>(), "relative error " << err << "\n" << solver);

    // The lazy form (the backend follows the operand), then in place.
    kronex::distributed_tensor<T, D> yd = expr.apply(bd);
    double diff1 = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) diff1 = std::max(diff1, double(std::abs(yd.local().data()[i] - expected.data()[i])));
    BOOST_TEST(max_over_ranks(diff1) / scale <= kronex_test::tolerance<T>());
    solver(bd, bd);
    double diff2 = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) diff2 = std::max(diff2, double(std::abs(bd.local().data()[i] - expected.data()[i])));
    BOOST_TEST(max_over_ranks(diff2) / scale <= kronex_test::tolerance<T>());
  }
}

template <class T>
std::size_t split_count(const std::vector<bool>& needs, const std::vector<int>& grid) {
  std::size_t m = 0;
  for (std::size_t k = 0; k < needs.size(); ++k) m += needs[k] && grid[k] > 1;
  return m;
}

} // namespace

BOOST_AUTO_TEST_CASE(three_dimensions_every_grid) {
  using T = double;
  const auto c = band<T>(10, 2, 1, boundary::clamped, true);   // 10 points: uneven on 3 and 4 ranks
  const auto p = band<T>(9, 1, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(7, true);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({10, 9, 7});
  for (const auto& grid : grids_for<3>(world_size())) {
    const std::size_t m = split_count<T>({true, true, true}, {grid[0], grid[1], grid[2]});
    check_distributed<T, 3>(kronex::kron(c, p, d).inverse(), b, grid, m, "solve");
    check_distributed<T, 3>(kronex::kron(c, p, d).transpose().inverse(), b, grid, m, "transpose solve");
    check_distributed<T, 3>(kronex::kron(c, p, d), b, grid, m, "apply");
  }
}

BOOST_AUTO_TEST_CASE(complex_adjoint_and_skipped_modes) {
  using T = std::complex<double>;
  const auto c = band<T>(6, 1, 1, boundary::clamped);
  const auto p = band<T>(8, 2, 2, boundary::periodic);
  std::vector<T> dv(5);
  for (auto& v : dv) v = kronex_test::dominant_diagonal<T>(1);
  const auto diag = kronex::diagonal(dv);
  const xt::xtensor<T, 4> b = random_tensor<T, 4>({6, 8, 5, 3});
  for (const auto& grid : grids_for<4>(world_size())) {
    const std::vector<int> g{grid[0], grid[1], grid[2], grid[3]};
    check_distributed<T, 4>(kronex::kron(c, p, diag, kronex::identity(3)).adjoint().inverse(), b, grid,
                            split_count<T>({true, true, false, false}, g), "4D complex adjoint");
  }
}

BOOST_AUTO_TEST_CASE(one_and_two_dimensions) {
  using T = double;
  const auto c = band<T>(11, 2, 2, boundary::clamped, true);
  const auto p = band<T>(7, 1, 1, boundary::periodic);
  const xt::xtensor<T, 1> b1 = random_tensor<T, 1>({11});
  check_distributed<T, 1>(kronex::kron(c).inverse(), b1, {world_size()}, world_size() > 1 ? 1 : 0, "1D");
  const xt::xtensor<T, 2> b2 = random_tensor<T, 2>({11, 7});
  for (const auto& grid : grids_for<2>(world_size()))
    check_distributed<T, 2>(kronex::kron(c, p).inverse(), b2, grid, split_count<T>({true, true}, {grid[0], grid[1]}),
                            "2D");
}

BOOST_AUTO_TEST_CASE(six_dimensions) {
  using T = double;
  if (world_size() > 2) return;  // 6D on 1 and 2 ranks
  std::vector<kronex::banded<T>> f;
  const std::size_t n[6] = {4, 3, 5, 3, 4, 3};
  for (std::size_t k = 0; k < 6; ++k) f.push_back(band<T>(n[k], 1, 1, k % 2 ? boundary::periodic : boundary::clamped));
  const xt::xtensor<T, 6> b = random_tensor<T, 6>({4, 3, 5, 3, 4, 3});
  const auto K = kronex::kron(f[0], f[1], f[2], f[3], f[4], f[5]);
  for (const auto& grid : grids_for<6>(world_size())) {
    std::vector<int> g(grid.begin(), grid.end());
    check_distributed<T, 6>(K.inverse(), b, grid, split_count<T>(std::vector<bool>(6, true), g), "6D");
  }
}

BOOST_AUTO_TEST_CASE(collective_errors) {
  using T = double;
  const auto c = band<T>(6, 1, 1, boundary::clamped);
  const int size = world_size();
  // A grid whose size differs from the communicator's: every rank throws.
  BOOST_CHECK_THROW((kronex::distributed_tensor<T, 2>(MPI_COMM_WORLD, {6, 6}, {size + 1, 1})), kronex::dimension_mismatch);
  // A global shape that does not match the factors.
  kronex::distributed_tensor<T, 2> bd(MPI_COMM_WORLD, {6, 5}, {size, 1});
  BOOST_CHECK_THROW(kronex::compile(kronex::kron(c, c).inverse(), bd), kronex::dimension_mismatch);
  // A singular factor on one rank only: that rank throws singular_factor, the others a
  // kronex::error naming it; nobody hangs.
  kronex::banded<T> s = c;
  if (kronex_test::world_rank() == size - 1) s(2, 2) = 0, s(2, 1) = 0, s(2, 3) = 0;
  kronex::distributed_tensor<T, 2> b6(MPI_COMM_WORLD, {6, 6}, {size, 1});
  try {
    kronex::compile(kronex::kron(c, s).inverse(), b6);
    BOOST_TEST(false, "no exception");
  } catch (const kronex::singular_factor& e) {
    BOOST_TEST(kronex_test::world_rank() == size - 1);
    BOOST_TEST(e.mode() == 1u);
  } catch (const kronex::error& e) {
    BOOST_TEST(std::string(e.what()).find("failed on rank " + std::to_string(size - 1)) != std::string::npos, e.what());
  }
}
