// The device's compiled operators in one value type (one translation unit each keeps builds parallel).
#include "../compiled_impl.hpp"
#include "compiled_device.hpp"

namespace kronex::python {
KRONEX_PYTHON_INSTANTIATE(device_backend, float)
} // namespace kronex::python
