#pragma once
// KRONEX_TARGET_CLONES: compile a hot kernel several times (x86-64-v4: AVX-512, v3: AVX2+FMA,
// and the build's default) and pick one at load time from the CPU (GCC's function
// multiversioning through an ifunc). So a library compiled without -march=native still runs its
// kernels at the host's full vector width. Empty where unsupported (clang before 16 cannot
// clone templates; non-x86 targets) or when the application defines KRONEX_NO_TARGET_CLONES.
#if !defined(KRONEX_NO_TARGET_CLONES) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define KRONEX_TARGET_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KRONEX_TARGET_CLONES
#endif

// with_native_vectors(f): calls f(vector_bytes<B>{}) with B the widest vector the CPU runs
// natively (64: AVX-512, 32: AVX2, 16: the x86-64 baseline), the call compiled for that CPU
// level (each level is a `flatten` function with its target, so f is inlined into it). Kernels
// written on GCC vectors of B bytes thus use whole registers in every version. (A 64-byte GCC
// vector in the AVX2 version is split, and its broadcasts go through memory: that kernel ran ten
// times slower.) Where clones are unsupported, B follows the build's flags.
// Setting KRONEX_HOST_VECTOR_BYTES to 16 or 32 runs a narrower version (below).
#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "error.hpp"

namespace kronex::detail {

template <std::size_t B>
using vector_bytes = std::integral_constant<std::size_t, B>;

// The vector level the environment variable KRONEX_HOST_VECTOR_BYTES asks for (16, 32 or 64:
// tests and benchmarks of the narrower versions on a wider CPU): 0, 1 or 2; 3 (no limit) when
// unset; -1 when set to anything else.
inline int requested_vector_level() {
  const char* asked = std::getenv("KRONEX_HOST_VECTOR_BYTES");
  if (!asked) return 3;
  const std::string bytes(asked);
  return bytes == "64" ? 2 : bytes == "32" ? 1 : bytes == "16" ? 0 : -1;
}

// Throws kronex::error if KRONEX_HOST_VECTOR_BYTES holds a value it cannot name. Host plans call
// it when they are compiled, on the compiling thread; the kernels then ignore such a value.
inline void check_vector_bytes_setting() {
  if (requested_vector_level() < 0)
    throw error(std::string("KRONEX_HOST_VECTOR_BYTES is '") + std::getenv("KRONEX_HOST_VECTOR_BYTES") +
                "'; expected 16, 32 or 64");
}

#if !defined(KRONEX_NO_TARGET_CLONES) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
template <class F>
__attribute__((target("arch=x86-64-v4"), flatten)) void run_with_64_byte_vectors(F& f) {
  f(vector_bytes<64>{});
}
template <class F>
__attribute__((target("arch=x86-64-v3"), flatten)) void run_with_32_byte_vectors(F& f) {
  f(vector_bytes<32>{});
}
template <class F>
__attribute__((flatten)) void run_with_16_byte_vectors(F& f) {
  f(vector_bytes<16>{});
}

// 2, 1, 0 for 64-, 32- and 16-byte vectors: the CPU's level, or less if KRONEX_HOST_VECTOR_BYTES
// asks for narrower vectors (requested_vector_level). Never throws: kernels run on several threads.
inline int native_vector_level() {
  static const int level = [] {
    const int cpu = __builtin_cpu_supports("x86-64-v4") ? 2 : __builtin_cpu_supports("x86-64-v3") ? 1 : 0;
    const int asked = requested_vector_level();
    return asked < 0 ? cpu : std::min(cpu, asked);
  }();
  return level;
}

template <class F>
void with_native_vectors(F&& f) {
  switch (native_vector_level()) {
    case 2: run_with_64_byte_vectors(f); break;
    case 1: run_with_32_byte_vectors(f); break;
    default: run_with_16_byte_vectors(f); break;
  }
}
#else
template <class F>
void with_native_vectors(F&& f) {
#if defined(__AVX512F__)
  f(vector_bytes<64>{});
#elif defined(__AVX__)
  f(vector_bytes<32>{});
#else
  f(vector_bytes<16>{});
#endif
}
#endif

} // namespace kronex::detail
