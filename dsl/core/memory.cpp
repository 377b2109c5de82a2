#include "core/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>

namespace kronex::dsl {

namespace {
// Bytes the process maps now (the first field of /proc/self/statm, in pages); 0 if unknown.
std::uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::uint64_t pages = 0;
  if (!(statm >> pages)) return 0;
  return pages * std::uint64_t(sysconf(_SC_PAGESIZE));
}
} // namespace

std::uint64_t memory_limit() {
  std::uint64_t limit = std::numeric_limits<std::uint64_t>::max();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) limit = std::uint64_t(pages) * std::uint64_t(page);
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const std::uint64_t mapped = mapped_bytes();
    limit = std::min<std::uint64_t>(limit, as.rlim_cur > mapped ? as.rlim_cur - mapped : 0);
  }
  return limit;
}

void check_memory(double needs, const std::string& what, const source_range& where) {
  const std::uint64_t limit = memory_limit();
  if (needs <= double(limit)) return;
  const std::string bytes = needs < 1.8e19 ? std::to_string(std::uint64_t(std::ceil(needs))) : "more than 2^64";
  throw dsl_error(where, what + " is too large: needs " + bytes + " bytes, limit " + std::to_string(limit) +
                             " bytes (the physical memory, or the address-space limit less what kronex maps already)");
}

} // namespace kronex::dsl
