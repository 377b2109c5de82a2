// The host backend for one value type (one translation unit per type keeps builds parallel).
#include "exec/chain_program.hpp"
#include "exec/host_policy.hpp"
#include "exec/krylov_program.hpp"

namespace kronex::dsl::exec {
template <>
std::unique_ptr<executable> prepare_host<float>(const evaluated_program& p, bool allocate) { return prepare_on<host_policy, float>(p, allocate); }
template <>
std::unique_ptr<executable> prepare_krylov<float>(const evaluated_program& p, bool allocate) { return prepare_krylov_on<host_policy, float>(p, allocate); }
} // namespace kronex::dsl::exec
