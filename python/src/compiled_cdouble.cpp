// The compiled operators in one value type (one translation unit each keeps builds parallel).
#include "compiled_impl.hpp"

namespace kronex::python {
KRONEX_PYTHON_INSTANTIATE(std::complex<double>)
} // namespace kronex::python
