#pragma once
// MPI tests: MPI is initialised before the first test and finalised after the last; every rank
// runs every test case. The random seed is chosen on rank 0 and broadcast, so all ranks build the
// same global data (and print the same seed, for replay with KRONEX_TEST_SEED).
#include <cstdlib>
#include <string>

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

} // namespace kronex_test

using kronex_test::mpi_environment;
BOOST_TEST_GLOBAL_FIXTURE(mpi_environment);
