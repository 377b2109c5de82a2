#pragma once
// The memory the kronex command may use, and the check made before every allocation whose size
// depends on the input (tensors, dense factors read from files, plans' factors and workspaces):
// a request larger than the limit is an input error, "too large: needs X bytes, limit Y bytes"
// (exit 2), found before anything is allocated, instead of "out of memory" (exit 1) part way.
#include <cstdint>
#include <string>

#include "core/diagnostics.hpp"

namespace kronex::dsl {

// The smaller of the machine's physical memory and what the address-space limit (RLIMIT_AS,
// `ulimit -v`) leaves beyond what the process maps already. Read at each call.
std::uint64_t memory_limit();

// Throws dsl_error(where, "<what> is too large: needs <needs> bytes, limit <memory_limit()>
// bytes") when needs is more than the limit. `needs` is a double so that sums of large sizes
// cannot wrap.
void check_memory(double needs, const std::string& what, const source_range& where);

} // namespace kronex::dsl
