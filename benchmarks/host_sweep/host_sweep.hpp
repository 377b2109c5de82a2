#pragma once
// bench_host_sweep's pieces, declared here and built in small translation units (one per value
// type, so no single file instantiates the host backend more than three times): one timed case,
// and what the process's BLAS says about itself.
#include <cstddef>
#include <string>

#include <kronex/core/options.hpp>
#include <kronex/factors/boundary.hpp>

namespace kronex_bench {

// The value types the sweep runs; the names are what --type takes and the JSON records.
enum class sweep_type { f32, f64, c32, c64 };
const char* type_name(sweep_type t);       // "float", "double", "complex<float>", "complex<double>"
std::size_t type_size(sweep_type t);       // sizeof(T)

struct sweep_case {
  std::size_t dim = 3, n = 64, degree = 3;
  kronex::boundary bc = kronex::boundary::clamped;
  sweep_type type = sweep_type::f64;
  int warmup = 1, reps = 0;  // reps 0: chosen from the size
  std::size_t threads = 1;   // compile_options::threads (0: OpenMP's default)
  kronex::solve_method solves = kronex::solve_method::automatic;  // compile_options::solves
};

struct sweep_timing {
  double unknowns = 0, median_s = 0, min_s = 0;
  double plan_bytes = 0;  // the compiled plan's bytes per solve
  int reps = 0;           // timed solves
  std::size_t threads = 1;  // the threads the compiled plan runs on
};

// Times kron(M, ..., M).inverse() (dim factors, M = gallery::bspline_mass<T>(n, degree, bc)) on
// a random right-hand side: `warmup` untimed solves, then median and minimum of `reps`.
sweep_timing time_case(const sweep_case& c);
sweep_timing time_case_float(const sweep_case& c);
sweep_timing time_case_double(const sweep_case& c);
sweep_timing time_case_complex_float(const sweep_case& c);
sweep_timing time_case_complex_double(const sweep_case& c);

// The BLAS linked into this process, when it is OpenBLAS and the build found its introspection
// functions (KRONEX_BENCH_OPENBLAS); `generic` is true for a core name on the fallback list.
struct blas_info {
  bool openblas = false, generic = false;
  std::string corename, config;
  int threads = -1;
};
blas_info query_blas();
bool is_generic_core(const std::string& corename);

} // namespace kronex_bench
