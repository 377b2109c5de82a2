// bench_host_sweep's shared pieces: the value types' names and sizes, the dispatch to the typed
// translation units, and what the process's BLAS says about itself. The build defines
// KRONEX_BENCH_OPENBLAS when the BLAS that kronex links provides openblas_get_corename (a CMake
// check, benchmarks/CMakeLists.txt), and KRONEX_BENCH_OPENBLAS_CONFIG when it provides
// openblas_get_config; other BLAS libraries build without them and report "not OpenBLAS".
#include <algorithm>
#include <cctype>
#include <string>

#include "host_sweep.hpp"

#ifdef KRONEX_BENCH_OPENBLAS
extern "C" char* openblas_get_corename();
extern "C" int openblas_get_num_threads();
#endif
#ifdef KRONEX_BENCH_OPENBLAS_CONFIG
extern "C" char* openblas_get_config();
#endif

namespace kronex_bench {

// OpenBLAS's fallback kernels, picked when its run-time CPU detection does not know the CPU (a
// new CPU, a virtual machine hiding the CPU's features, an old OpenBLAS): on a modern x86 CPU
// Prescott, Core2 and the older Intel targets run dgemm several times slower than Haswell or
// SkylakeX; "armv8" is the generic AArch64 target; "generic"/"unknown" are what builds without
// a target report. Compared case-insensitively.
bool is_generic_core(const std::string& corename) {
  static const char* const generic[] = {"prescott", "core2", "katmai", "coppermine", "northwood", "banias",
                                        "generic", "unknown", "armv8", "armv7", "riscv64_generic"};
  std::string lower = corename;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
  return std::find(std::begin(generic), std::end(generic), lower) != std::end(generic);
}

blas_info query_blas() {
  blas_info info;
#ifdef KRONEX_BENCH_OPENBLAS
  info.openblas = true;
  if (const char* core = openblas_get_corename()) info.corename = core;
  info.threads = openblas_get_num_threads();
  info.generic = is_generic_core(info.corename);
#endif
#ifdef KRONEX_BENCH_OPENBLAS_CONFIG
  if (const char* config = openblas_get_config()) info.config = config;
#endif
  return info;
}

const char* type_name(sweep_type t) {
  switch (t) {
    case sweep_type::f32: return "float";
    case sweep_type::f64: return "double";
    case sweep_type::c32: return "complex<float>";
    default: return "complex<double>";
  }
}

std::size_t type_size(sweep_type t) {
  switch (t) {
    case sweep_type::f32: return sizeof(float);
    case sweep_type::f64: return sizeof(double);
    case sweep_type::c32: return 2 * sizeof(float);
    default: return 2 * sizeof(double);
  }
}

sweep_timing time_case(const sweep_case& c) {
  switch (c.type) {
    case sweep_type::f32: return time_case_float(c);
    case sweep_type::f64: return time_case_double(c);
    case sweep_type::c32: return time_case_complex_float(c);
    default: return time_case_complex_double(c);
  }
}

} // namespace kronex_bench
