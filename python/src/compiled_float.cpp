// The host's compiled operators in one value type (one translation unit each keeps builds parallel).
#include "compiled_host.hpp"
#include "compiled_impl.hpp"

namespace kronex::python {
KRONEX_PYTHON_INSTANTIATE(host_backend, float)
} // namespace kronex::python
