// The Krylov solves in one value type (one translation unit each keeps builds parallel).
#include "krylov_impl.hpp"

namespace kronex::python {
KRONEX_PYTHON_INSTANTIATE_KRYLOV(std::complex<float>)
} // namespace kronex::python
