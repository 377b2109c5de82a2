#include "dlpack.hpp"

#include <cstdint>
#include <vector>

#include <dlpack/dlpack.h>

#include <kronex/core/error.hpp>

#include "binding_support.hpp"

namespace py = pybind11;

namespace kronex::python {

namespace {

// NumPy's typestr for a DLPack dtype kronex computes in, or "" for any other.
std::string typestr(DLDataType t) {
  if (t.lanes != 1) return "";
  if (t.code == kDLFloat && (t.bits == 32 || t.bits == 64)) return "<f" + std::to_string(t.bits / 8);
  if (t.code == kDLComplex && (t.bits == 64 || t.bits == 128)) return "<c" + std::to_string(t.bits / 8);
  return "";
}

} // namespace

py::tuple dlpack_view(const py::capsule& c, const std::string& what) {
  if (!PyCapsule_IsValid(c.ptr(), "dltensor"))
    throw kronex::invalid_operator("kronex: the " + what + "'s __dlpack__ gave no unused \"dltensor\" capsule");
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c.ptr(), "dltensor"));
  if (managed == nullptr) throw py::error_already_set();
  // From here kronex owns the tensor: the owner capsule calls its deleter, whatever happens next.
  if (PyCapsule_SetName(c.ptr(), "used_dltensor") != 0) throw py::error_already_set();
  py::capsule owner(managed, [](void* p) {
    auto* t = static_cast<DLManagedTensor*>(p);
    if (t->deleter != nullptr) t->deleter(t);
  });
  const DLTensor& t = managed->dl_tensor;
  const std::string type = typestr(t.dtype);
  if (type.empty())
    throw dtype_error("kronex: the " + what + " has DLPack element type code " + std::to_string(t.dtype.code) + ", " +
                      std::to_string(t.dtype.bits) + " bits, " + std::to_string(t.dtype.lanes) +
                      " lanes; kronex computes in float32, float64, complex64 or complex128");
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr))
    throw kronex::invalid_operator("kronex: the " + what + "'s DLPack tensor has no valid shape");
  std::vector<std::int64_t> shape(t.shape, t.shape + t.ndim);
  for (std::int64_t n : shape)
    if (n < 0) throw kronex::invalid_operator("kronex: the " + what + "'s DLPack tensor has a negative extent");
  py::object strides = py::none();
  if (t.strides != nullptr) strides = py::cast(std::vector<std::int64_t>(t.strides, t.strides + t.ndim));
  const auto address = reinterpret_cast<std::uintptr_t>(static_cast<char*>(t.data) + t.byte_offset);
  return py::make_tuple(owner, address, shape, strides, type, int(t.device.device_type));
}

} // namespace kronex::python
