// bench_host_sweep's timed cases for T = std::complex<float> (dimensions 2, 3 and 4).
#include "time_case.hpp"

namespace kronex_bench {
sweep_timing time_case_complex_float(const sweep_case& c) { return detail::time_typed<std::complex<float>>(c); }
} // namespace kronex_bench
