#pragma once
// The memory-bandwidth floor that kronex benchmarks are measured against: a STREAM-like triad
// (a = b + s*c over arrays far larger than the caches), best of several runs, in bytes/s, measured
// in the same process as the benchmark so noisy shared machines compare like with like.
// With threads > 1 (and OpenMP) the triad is split between that many threads, each touching its
// own part first, as a plan's threads share the memory: what a multithreaded solve can reach.
// Without OpenMP it runs on one thread whatever threads says (as kronex's host plans then do).
//
// Compiled in its own translation unit (membw.cpp), optimised and without sanitizer
// instrumentation in every build type: it measures the machine, and in a sanitizer build at -O0
// the instrumented triad over 768 MiB took about 15 s per call.
#include <cstddef>

namespace kronex_bench {

double triad_bandwidth(std::size_t n = std::size_t(1) << 25, int reps = 7, int threads = 1);

} // namespace kronex_bench
