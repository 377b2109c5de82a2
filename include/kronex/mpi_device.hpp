#pragma once
// kronex with distributed device ranks: kronex/mpi.hpp and kronex/device.hpp, plus
// distributed_device_tensor. Link kronex::mpi and one device runtime (kronex::device_cuda or
// kronex::device_cpu).
#include "device.hpp"
#include "mpi.hpp"

#include "backends/mpi/distributed_device_tensor.hpp"
