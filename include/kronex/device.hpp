#pragma once
// kronex with the device backend: everything in kronex.hpp, plus device_tensor / device_view /
// device_buffer, device plans, the transfer counter and kronex::device (system, synchronize,
// timer, copy). No Thrust: an application's own Thrust code is independent of kronex's. Link
// kronex::device_cuda (GPU) or kronex::device_cpu (the same code on a CPU "device", for testing):
// see docs/backends.md.
#include "kronex.hpp"

#include "backends/device/device_api.hpp"
#include "backends/device/device_buffer.hpp"
#include "backends/device/device_operator.hpp"
#include "backends/device/device_tensor.hpp"
#include "backends/device/transfers.hpp"
#include "backends/device/xtensor_interop.hpp"
#include "krylov/device_solver.hpp"
