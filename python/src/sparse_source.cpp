#include "sparse_source.hpp"

namespace kronex::python {

sparse_source::sparse_source(shape_t shape, csr_arrays csr, dtype t)
    : m_shape(std::move(shape)), m_csr(std::move(csr)), m_type(t) {
  dsl::with_dtype(t, [&](auto zero) { action<decltype(zero)>(); });  // its checks, now
}

} // namespace kronex::python
