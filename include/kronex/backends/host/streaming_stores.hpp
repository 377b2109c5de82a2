#pragma once
// Writes that bypass the cache, for a step that writes its result elsewhere than it reads (a
// plan's first step, b -> x). A plain store first reads its line from memory (the line must be
// in the cache to be written), so such a step moves the tensor three times: b in, x in, x out.
// Non-temporal stores write whole lines without reading them: two times, as in place. For a
// small tensor plain stores are better: the next step then finds x in the cache, where after
// streaming stores it reads it from memory. On a 2-vCPU cloud VM with a shared 32 MiB L3,
// streaming made 192^3 and 256^3 double solves 5-10 % faster and was level, within the noise,
// from 2 MiB to 32 MiB (docs/performance.md): the threshold is an eighth of the largest cache.
// The values are the same either way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "../../core/error.hpp"

namespace kronex::detail {

// memcpy(to, from, bytes) with non-temporal stores for the `unit`-byte units aligned in `to`
// (plain stores for the bytes before and after them, and everywhere without SSE2); `unit` is a
// multiple of 16. A unit of a cache line (64) leaves a partial line at either end of the range
// to plain stores: a non-temporal write of part of a line is a slow partial write to memory, so
// for short ranges in an array that is not line-aligned (runs of a few lines each), whole lines
// only is faster.
inline void stream_copy(void* to, const void* from, std::size_t bytes, std::size_t unit = 16) {
#if defined(__SSE2__)
  char* d = static_cast<char*>(to);
  const char* s = static_cast<const char*>(from);
  const std::size_t head = std::min<std::size_t>(bytes, (unit - reinterpret_cast<std::uintptr_t>(d) % unit) % unit);
  std::memcpy(d, s, head);
  d += head, s += head, bytes -= head;
  for (; bytes >= unit; bytes -= unit)
    for (std::size_t k = 0; k < unit; k += 16, d += 16, s += 16)
      _mm_stream_si128(reinterpret_cast<__m128i*>(d), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
  std::memcpy(d, s, bytes);
#else
  (void)unit;
  std::memcpy(to, from, bytes);
#endif
}

// Orders the calling thread's non-temporal stores before its later stores (and so before the
// barrier that ends a step): they are weakly ordered otherwise.
inline void streaming_stores_done() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// The size of the largest data cache of CPU 0 as Linux's sysfs lists it (the cache that CPU's
// core shares with others: on a chip with several L3 slices, one slice), or 0 if unknown.
inline std::size_t sysfs_cache_bytes() {
  std::size_t largest = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::ifstream type_file(dir + "type"), size_file(dir + "size");
    std::string type, size;
    if (!(type_file >> type) || !(size_file >> size)) break;
    if (type == "Instruction") continue;
    char* end = nullptr;
    const unsigned long long value = std::strtoull(size.c_str(), &end, 10);
    const std::size_t scale = *end == 'K' ? 1024 : *end == 'M' ? std::size_t(1) << 20 : 1;
    largest = std::max<std::size_t>(largest, std::size_t(value) * scale);
  }
  return largest;
}

// The output size (bytes) from which host plans write out-of-place panel steps with streaming
// stores: the environment variable KRONEX_HOST_STREAMING_MIN_BYTES (a byte count; 0 streams
// every such step), else an eighth of sysfs_cache_bytes() (read once), else 4 MiB. Throws
// kronex::error for a variable that is not a byte count.
inline std::size_t host_streaming_min_bytes() {
  if (const char* asked = std::getenv("KRONEX_HOST_STREAMING_MIN_BYTES")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(asked, &end, 10);
    if (*asked < '0' || *asked > '9' || *end != '\0')
      throw error(std::string("KRONEX_HOST_STREAMING_MIN_BYTES is '") + asked + "'; expected a number of bytes");
    return std::size_t(value);
  }
  static const std::size_t cache = sysfs_cache_bytes();
  return cache > 0 ? cache / 8 : std::size_t(4) << 20;
}

} // namespace kronex::detail
