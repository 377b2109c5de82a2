#pragma once
// DLPack (dlpack/dlpack.h, libdlpack-dev): an array handed over as a "dltensor" capsule, read as
// kronex reads device arrays: address, shape, strides, dtype, device.
#include <string>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace kronex::python {

// Takes over the capsule's tensor (renames the capsule "used_dltensor", as the protocol asks of a
// consumer) and returns (owner, address, shape, strides or None, typestr, device type): owner is a
// capsule that releases the tensor (its deleter) when Python drops it, so the address is valid
// while owner lives. Strides are in elements, as DLPack gives them. `what` names the array in
// messages.
pybind11::tuple dlpack_view(const pybind11::capsule& c, const std::string& what);

} // namespace kronex::python
