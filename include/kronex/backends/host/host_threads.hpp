#pragma once
// Threads for host plans: how many a plan runs on, and a parallel loop over independent pieces
// of a step (panels of lines, groups of slabs, runs of rows). Each piece is computed by the same
// code whichever thread takes it, so results do not depend on the thread count. Without OpenMP
// (kronex's CMake target adds it when the compiler has it) everything runs on the calling thread.
#include <algorithm>
#include <cstddef>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "../../core/options.hpp"

namespace kronex::detail {

// The threads compile_options::threads asks for: 0 is OpenMP's default (OMP_NUM_THREADS).
inline std::size_t resolve_host_threads(std::size_t requested) {
#if defined(_OPENMP)
  if (requested == 0) return std::size_t(std::max(1, omp_get_max_threads()));
  return requested;
#else
  (void)requested;
  return 1;
#endif
}

// The threads a plan over `values` values uses: by default (0) one for small tensors; a count
// the application chose, whatever the size.
inline std::size_t host_threads_for(std::size_t requested, std::size_t values) {
  return requested == 0 && values < host_parallel_min_values ? 1 : resolve_host_threads(requested);
}

// f(i, t) for i < count, t the index (< threads) of the thread running it; pieces are handed out
// in contiguous blocks. f must not throw.
template <class F>
void parallel_pieces(std::size_t count, std::size_t threads, F&& f) {
#if defined(_OPENMP)
  if (threads > 1 && count > 1) {
#pragma omp parallel for num_threads(int(std::min(threads, count))) schedule(static)
    for (long i = 0; i < long(count); ++i) f(std::size_t(i), std::size_t(omp_get_thread_num()));
    return;
  }
#else
  (void)threads;
#endif
  for (std::size_t i = 0; i < count; ++i) f(i, std::size_t(0));
}

} // namespace kronex::detail
