#pragma once
// MPI tests: MPI is initialised before the first test and finalised after the last; every rank
// runs every test case. The random seed is chosen on rank 0 and broadcast, so all ranks build the
// same global data (and print the same seed, for replay with KRONEX_TEST_SEED).
#include <array>
#include <cstdlib>
#include <sstream>
#include <string>
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
