// Distributed device ranks (on the CPU device): the same expressions as the host-rank tests, with
// each rank's block a device_tensor, against the serial host result (1e-12 relative in double).
// Exchanges from device memory (what a CUDA-aware MPI does; a CPU device's memory is host memory)
// make 0 transfers per solve, checked under no_transfer_guard; staged exchanges make exactly 2
// counted transfers each, as their plan steps say. Exchanges pack on the device unless asked
// for subarray types, which work where MPI reads device memory and are refused on staged ranks.
// Operator sums too (fast diagonalisation and its pseudo-inverse).
#define BOOST_TEST_MODULE test_distributed_device
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include <kronex/mpi_device.hpp>

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

template <class T, std::size_t D, class Expr>
void check_device_ranks(const Expr& expr, const xt::xtensor<T, D>& b, const std::array<int, D>& grid,
                        kronex::exchange_memory memory, const std::string& what,
                        std::size_t expected_projection_transfers = 0, const kronex::compile_options& options = {}) {
  std::ostringstream context;
  context << what << ", grid (";
  for (std::size_t k = 0; k < D; ++k) context << (k ? "," : "") << grid[k];
  context << "), " << (memory == kronex::exchange_memory::staged ? "staged" : "device memory");
  BOOST_TEST_CONTEXT(context.str()) {
    const xt::xtensor<T, D> serial = kronex::compile(expr, b)(b);
    std::array<std::size_t, D> global;
    for (std::size_t k = 0; k < D; ++k) global[k] = b.shape()[k];
    kronex::distributed_device_tensor<T, D> bd(MPI_COMM_WORLD, global, grid, memory);
    const auto off = bd.local_offset();
    const auto ls = bd.local_shape();
    const kronex::detail::box mine{kronex::shape_t(off.begin(), off.end()), kronex::shape_t(ls.begin(), ls.end())};
    const kronex::detail::box whole{kronex::shape_t(D, 0), kronex::shape_t(global.begin(), global.end())};
    xt::xtensor<T, D> block = xt::xtensor<T, D>::from_shape(ls);
    kronex::detail::copy_box(mine, whole, b.data(), mine, block.data());
    bd.local().copy_from_host(block.data());

    auto solver = kronex::compile(expr, bd, options);
    // Exchanges pack on the device unless asked for subarray types.
    const bool subarray = options.exchanges == kronex::exchange_transport::subarray;
    for (const auto& st : solver.plan().steps)
      if (const auto* e = std::get_if<kronex::exchange_step>(&st); e && e->how == kronex::exchange_step::method::pairwise)
        BOOST_TEST(e->transport == (subarray ? "subarray" : "packed"));
    auto xd = kronex::distributed_device_tensor<T, D>::like(bd);
    const auto before = kronex::transfers();
    if (memory == kronex::exchange_memory::staged) {
      solver(bd, xd);
    } else {
      kronex::no_transfer_guard guard;
      solver(bd, xd);
    }
    const auto used = kronex::transfers() - before;
    BOOST_TEST(used.calls() == solver.plan().run_transfers());
    BOOST_TEST(double(used.bytes()) == solver.plan().run_transfer_bytes());
    if (memory == kronex::exchange_memory::staged) {
      // Two per exchange, and two per pseudo-inverse projection (its dot products to the host
      // and back for the MPI_Allreduce).
      std::size_t projections = 0;
      for (const auto& st : solver.plan().steps)
        if (const auto* p = std::get_if<kronex::project_step>(&st)) projections += p->transfers;
      BOOST_TEST(used.calls() <= 2 * solver.exchanges() + projections);  // fewer only for a rank with an empty block
      BOOST_TEST(max_over_ranks(double(used.calls())) == double(2 * solver.exchanges() + projections));
      BOOST_TEST(projections == expected_projection_transfers);
    } else {
      BOOST_TEST(used.calls() == 0u);
    }

    const xt::xtensor<T, D> got = xd.local().to_host();
    xt::xtensor<T, D> expected = xt::xtensor<T, D>::from_shape(ls);
    kronex::detail::copy_box(mine, whole, serial.data(), mine, expected.data());
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) diff = std::max(diff, double(std::abs(got.data()[i] - expected.data()[i])));
    for (std::size_t i = 0; i < serial.size(); ++i) scale = std::max(scale, double(std::abs(serial.data()[i])));
    const double err = max_over_ranks(diff) / scale;
    BOOST_TEST(err <= kronex_test::tolerance<T>(), "relative error " << err << "\n" << solver);

    // The lazy form follows the operand too.
    kronex::distributed_device_tensor<T, D> yd = expr.apply(bd);
    const xt::xtensor<T, D> lazy = yd.local().to_host();
    double diff2 = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) diff2 = std::max(diff2, double(std::abs(lazy.data()[i] - expected.data()[i])));
    BOOST_TEST(max_over_ranks(diff2) / scale <= kronex_test::tolerance<T>());
  }
}

} // namespace

BOOST_AUTO_TEST_CASE(three_dimensions_every_grid) {
  using T = double;
  const auto c = band<T>(10, 2, 1, boundary::clamped, true);
  const auto p = band<T>(9, 1, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(7, true);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({10, 9, 7});
  for (const auto& grid : grids_for<3>(world_size())) {
    for (auto memory : {kronex::exchange_memory::automatic, kronex::exchange_memory::staged}) {
      check_device_ranks<T, 3>(kronex::kron(c, p, d).inverse(), b, grid, memory, "solve");
      check_device_ranks<T, 3>(kronex::kron(c, p, d).transpose(), b, grid, memory, "apply transpose");
    }
  }
}

// Exchanges through MPI datatypes over the device blocks (MPI reads device memory: the CPU
// device's is host memory): the same results and no transfers. Staged ranks can only pack: a
// request for subarray types there is refused on every rank.
BOOST_AUTO_TEST_CASE(subarray_transport) {
  using T = double;
  const auto c = band<T>(10, 2, 1, boundary::clamped, true);
  const auto p = band<T>(9, 1, 2, boundary::periodic);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({10, 9, 7});
  const auto e = band<T>(7, 1, 1, boundary::clamped);
  kronex::compile_options subarray;
  subarray.exchanges = kronex::exchange_transport::subarray;
  for (const auto& grid : grids_for<3>(world_size()))
    check_device_ranks<T, 3>(kronex::kron(c, p, e).inverse(), b, grid, kronex::exchange_memory::device, "solve", 0,
                             subarray);
  kronex::distributed_device_tensor<T, 3> staged(MPI_COMM_WORLD, {10, 9, 7}, grids_for<3>(world_size()).back(),
                                                 kronex::exchange_memory::staged);
  try {
    auto op = kronex::compile(kronex::kron(c, p, e).inverse(), staged, subarray);
    BOOST_ERROR("subarray exchanges compiled on staged device ranks");
  } catch (const kronex::backend_unavailable& err) {
    BOOST_TEST(std::string(err.what()).find("exchange_transport::subarray") != std::string::npos, err.what());
  }
}

BOOST_AUTO_TEST_CASE(complex_two_dimensions) {
  using T = std::complex<double>;
  const auto c = band<T>(11, 1, 2, boundary::clamped);
  const auto p = band<T>(6, 2, 1, boundary::periodic);
  const xt::xtensor<T, 2> b = random_tensor<T, 2>({11, 6});
  for (const auto& grid : grids_for<2>(world_size()))
    for (auto memory : {kronex::exchange_memory::automatic, kronex::exchange_memory::staged})
      check_device_ranks<T, 2>(kronex::kron(c, p).adjoint().inverse(), b, grid, memory, "2D complex adjoint");
}

// Operator sums on device ranks: fast diagonalisation (the device's scaling kernel on each rank's
// block, in the forward transform's last layout), an applied sum, and a pseudo-inverse whose
// dot products are summed over the ranks: from device memory, or staged through the host (two
// transfers per projection, two projections per solve).
BOOST_AUTO_TEST_CASE(operator_sums_every_grid) {
  using T = double;
  namespace gallery = kronex::gallery;
  const auto K0 = gallery::bspline_stiffness<T>(6, 2), M0 = gallery::bspline_mass<T>(6, 2);
  const auto K1 = gallery::bspline_stiffness<T>(5, 2), M1 = gallery::bspline_mass<T>(5, 2);
  const auto K2 = gallery::bspline_stiffness<T>(4, 2), M2 = gallery::bspline_mass<T>(4, 2);
  auto L = kronex::kron(K0, M1, M2) + kronex::kron(M0, K1, M2) + kronex::kron(M0, M1, K2) + 0.5 * kronex::kron(M0, M1, M2);
  const auto P0 = gallery::laplacian<T>(6, boundary::periodic), Q0 = gallery::bspline_mass<T>(6, 1, boundary::periodic);
  const auto P1 = gallery::laplacian<T>(5, boundary::periodic), Q1 = gallery::bspline_mass<T>(5, 1, boundary::periodic);
  auto singular = kronex::kron(P0, Q1, M2) + kronex::kron(Q0, P1, M2);  // the constants on axes 0, 1: 4 dropped
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({6, 5, 4});
  for (const auto& grid : grids_for<3>(world_size())) {
    for (auto memory : {kronex::exchange_memory::automatic, kronex::exchange_memory::staged}) {
      check_device_ranks<T, 3>(L.inverse(), b, grid, memory, "sum solve");
      check_device_ranks<T, 3>(L, b, grid, memory, "sum apply");
      check_device_ranks<T, 3>(singular.pseudo_inverse(1e-10), b, grid, memory, "pseudo-inverse", 4);
    }
  }
}


// A sparse_operator acts on the whole tensor, which no rank holds: an expression with one is
// refused on device ranks when compiled, naming the operator (on whole device tensors it runs:
// test_device_sums).
BOOST_AUTO_TEST_CASE(sparse_operators_are_refused_on_device_ranks) {
  const auto M = kronex::gallery::bspline_mass<double>(4, 1);
  std::vector<kronex::entry<double>> diagonal;
  for (std::size_t i = 0; i < 64; ++i) diagonal.push_back({i, i, 2.0});
  const auto S = kronex::sparse_operator<double>::from_entries({4, 4, 4}, diagonal);
  const std::array<std::size_t, 3> global{4, 4, 4};
  const auto grid = grids_for<3>(world_size()).front();
  kronex::distributed_device_tensor<double, 3> bd(MPI_COMM_WORLD, global, grid, kronex::exchange_memory::automatic);
  kronex_test::expect_error<kronex::backend_unavailable>([&] { auto op = kronex::compile(S + kronex::kron(M, M, M), bd); },
                                                         {"sparse_operator(4,4,4)", "host and device tensors only", "mpi"});
}
