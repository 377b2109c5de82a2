// The device backend for one value type, built once per device runtime (CPU device, CUDA).
#include "exec/chain_program.hpp"
#include "exec/device_policy.hpp"
#include "exec/krylov_program.hpp"

namespace kronex::dsl::exec {
template <>
std::unique_ptr<executable> prepare_device<float>(const evaluated_program& p, bool allocate) { return prepare_on<device_policy, float>(p, allocate); }
template <>
std::unique_ptr<executable> prepare_device_krylov<float>(const evaluated_program& p, bool allocate) { return prepare_krylov_on<device_policy, float>(p, allocate); }
} // namespace kronex::dsl::exec
