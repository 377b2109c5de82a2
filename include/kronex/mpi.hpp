#pragma once
// kronex with the distributed (MPI) backend: everything in kronex.hpp, plus distributed_tensor
// and distributed plans, and Krylov solves on distributed tensors. Link kronex::mpi.
#include "kronex.hpp"

#include "backends/mpi/distributed_operator.hpp"
#include "backends/mpi/distributed_tensor.hpp"
#include "krylov/distributed_solver.hpp"
