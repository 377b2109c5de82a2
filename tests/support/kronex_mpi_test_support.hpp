#pragma once
// MPI tests: MPI is initialised before the first test and finalised after the last; every rank
// runs every test case. The random seed is chosen on rank 0 and broadcast, so all ranks build the
// same global data (and print the same seed, for replay with KRONEX_TEST_SEED).
#include <algorithm>
#include <array>
#include <cstdlib>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <mpi.h>

#include <kronex/mpi.hpp>

#include "kronex_test_support.hpp"

namespace kronex_test {

struct mpi_environment {
  mpi_environment() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    unsigned long long s = 0;
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) s = seed();
    MPI_Bcast(&s, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    if (rank != 0) {
      setenv("KRONEX_TEST_SEED", std::to_string(s).c_str(), 1);
      (void)seed();
    }
  }
  ~mpi_environment() { MPI_Finalize(); }
};

inline int world_size() {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}
// Whether every rank runs on this rank's node (shares its memory).
inline bool one_node() {
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int size = 0;
  MPI_Comm_size(node, &size);
  MPI_Comm_free(&node);
  int all = 0;
  const int mine = size == world_size() ? 1 : 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}
inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

// The largest value over all ranks (so every rank checks the same number).
inline double max_over_ranks(double v) {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}

// Every process grid of D entries whose product is the number of ranks.
template <std::size_t D>
std::vector<std::array<int, D>> grids_for(int ranks) {
  std::vector<std::array<int, D>> out;
  std::array<int, D> g{};
  g.fill(1);
  while (true) {
    int p = 1;
    for (int v : g) p *= v;
    if (p == ranks) out.push_back(g);
    std::size_t k = D;
    while (k-- > 0) {
      if (++g[k] <= ranks) break;
      g[k] = 1;
    }
    if (k == std::size_t(-1)) return out;
  }
}

// Calls f(local, global) for each element of t's block: its C-order index in the block and in
// the global tensor (public API only: local(), local_offset(), global_shape()).
template <class Tensor, class F>
void for_each_block_element(const Tensor& t, F&& f) {
  constexpr std::size_t D = Tensor::rank;
  const auto& global = t.global_shape();
  const auto& offset = t.local_offset();
  const auto& extent = t.local().shape();
  const std::size_t count = t.local().size();
  std::array<std::size_t, D> i{};
  for (std::size_t local = 0; local < count; ++local) {
    std::size_t g = 0;
    for (std::size_t k = 0; k < D; ++k) g = g * global[k] + offset[k] + i[k];
    f(local, g);
    for (std::size_t k = D; k-- > 0;) {
      if (++i[k] < extent[k]) break;
      i[k] = 0;
    }
  }
}

// A distributed copy of the global tensor b (the same on every rank) on `grid`: every rank
// fills its block.
template <class T, std::size_t D>
kronex::distributed_tensor<T, D> distribute(const xt::xtensor<T, D>& b, const std::array<int, D>& grid) {
  std::array<std::size_t, D> global;
  std::copy(b.shape().begin(), b.shape().end(), global.begin());
  kronex::distributed_tensor<T, D> t(MPI_COMM_WORLD, global, grid);
  for_each_block_element(t, [&](std::size_t l, std::size_t g) { t.local().data()[l] = b.data()[g]; });
  return t;
}

// The whole tensor x on every rank: each rank writes its block into zeros, the blocks are summed
// (each element comes from exactly one rank, so the sum is an exact copy).
template <class T, std::size_t D>
xt::xtensor<T, D> gather(const kronex::distributed_tensor<T, D>& x) {
  xt::xtensor<T, D> whole = xt::zeros<T>(x.global_shape());
  for_each_block_element(x, [&](std::size_t l, std::size_t g) { whole.data()[g] = x.local().data()[l]; });
  using R = kronex::real_t<T>;
  const int reals = int(whole.size() * (sizeof(T) / sizeof(R)));
  MPI_Allreduce(MPI_IN_PLACE, whole.data(), reals, std::is_same_v<R, float> ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM,
                MPI_COMM_WORLD);
  return whole;
}

// "grid (2,1,1)", for test contexts.
template <std::size_t D>
std::string grid_text(const std::array<int, D>& g) {
  std::ostringstream os;
  os << "grid (";
  for (std::size_t k = 0; k < D; ++k) os << (k ? "," : "") << g[k];
  os << ")";
  return os.str();
}

} // namespace kronex_test

using kronex_test::mpi_environment;
BOOST_TEST_GLOBAL_FIXTURE(mpi_environment);
