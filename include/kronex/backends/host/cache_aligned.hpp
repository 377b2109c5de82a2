#pragma once
// Host work buffers on cache-line boundaries. The kernels move whole 128-byte strip rows as
// vectors of up to 64 bytes; in a buffer from the default allocator (16-byte aligned; a large
// one sits 16 bytes past a page boundary) those vectors straddle cache lines: with 32-byte
// vectors every other load and store is split in two, with 64-byte vectors every one.
#include <cstddef>
#include <new>
#include <vector>

namespace kronex::detail {

inline constexpr std::size_t cache_line_bytes = 64;

template <class T>
struct cache_aligned_allocator {
  using value_type = T;
  cache_aligned_allocator() = default;
  template <class U>
  cache_aligned_allocator(const cache_aligned_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(cache_line_bytes)));
  }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, std::align_val_t(cache_line_bytes)); }
  template <class U>
  bool operator==(const cache_aligned_allocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const cache_aligned_allocator<U>&) const noexcept { return false; }
};

template <class T>
using cache_aligned_vector = std::vector<T, cache_aligned_allocator<T>>;

// The number of values of T that fills whole cache lines and holds at least `values`: per-thread
// parts of one buffer then start on a line too.
template <class T>
constexpr std::size_t whole_cache_lines(std::size_t values) {
  constexpr std::size_t per_line = cache_line_bytes % sizeof(T) == 0 ? cache_line_bytes / sizeof(T) : 1;
  return (values + per_line - 1) / per_line * per_line;
}

} // namespace kronex::detail
