#pragma once
// The Krylov vector space of distributed tensors (the concept is in space.hpp): the host space
// (host_space.hpp) over this rank's block, whose batched dots end in one MPI_Allreduce.
//
//   vectors        this rank's block of each vector (C order); vector operations are local
//   dots({...})    each term summed over the block, then the whole batch summed over the ranks
//                  in ONE MPI_Allreduce (the methods batch an iteration's reductions)
//   slots          replicated: every rank holds every scalar and does the same slot arithmetic
//                  on the same reduced values, so every rank takes the same branches (guards,
//                  convergence checks) and stops at the same iteration. This relies on
//                  MPI_Allreduce giving every rank the same result, as the MPI standard
//                  specifies (one result, returned to every rank).
//   read           local: a load from the replicated slots, no communication
//
// Communication per solve: one MPI_Allreduce per batched dots (reductions() counts them), plus
// what the operator and the preconditioner make when applied.
#include <cstddef>

#include <mpi.h>

#include "../backends/mpi/mpi_support.hpp"
#include "host_space.hpp"

namespace kronex::krylov {

// The Sum of a distributed space: a batch's partial sums added over the communicator's ranks.
struct mpi_sums {
  MPI_Comm comm = MPI_COMM_NULL;

  template <class T>
  void operator()(T* v, std::size_t k) const {
    detail::allreduce_sum(v, k, comm);
  }
};

template <class T>
class distributed_space : public host_space<T, mpi_sums> {
public:
  // local_n: this rank's block size; the communicator must outlive the space (a distributed
  // tensor's, held by the solver).
  distributed_space(MPI_Comm comm, std::size_t local_n, std::size_t vectors, std::size_t slots)
      : host_space<T, mpi_sums>(local_n, vectors, slots, mpi_sums{comm}), m_comm(comm) {}

  MPI_Comm comm() const noexcept { return m_comm; }

private:
  MPI_Comm m_comm;
};

} // namespace kronex::krylov
