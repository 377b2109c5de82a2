#pragma once
// What the device benchmarks (bench_device_*.cpp) share: timing device work with the runtime's
// device timer, and the header lines that say which device system and BLAS a run measured.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <kronex/device.hpp>

#ifdef KRONEX_BENCH_CUDA
#include <cuda_runtime.h>
#endif

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

// OpenBLAS's introspection, if the BLAS in this process is OpenBLAS (weak: absent elsewhere).
extern "C" char* openblas_get_corename(void) __attribute__((weak));
extern "C" int openblas_get_num_threads(void) __attribute__((weak));

namespace kronex_bench {

struct device_stats {
  double median = 0, min = 0;
};

// Times f() `reps` times with the device timer after `warmup` untimed calls.
template <class F>
device_stats time_device(kronex::detail::device::context& ctx, int warmup, int reps, F&& f) {
  for (int w = 0; w < warmup; ++w) f();
  ctx.synchronize();
  kronex::detail::device::timer timer(ctx);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    timer.start();
    f();
    timer.stop();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

// The device system and the build flags; the GPU (CUDA), or the host BLAS's core and threads (a
// CPU device, whose GEMMs are the host BLAS's: a generic core makes them several times slower).
inline void print_device_system() {
  const std::string system = kronex::detail::device::system_name();
  std::printf("device system: %s; built with %s\n", system.c_str(), KRONEX_BENCHMARK_FLAGS);
#ifdef KRONEX_BENCH_CUDA
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    std::printf("GPU %d: %s, compute capability %d.%d, %.1f GiB, %d SMs; CUDA runtime %d, driver %d\n", device,
                prop.name, prop.major, prop.minor, double(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0),
                prop.multiProcessorCount, runtime, driver);
  }
#endif
  if (system != "cuda") {
    const char* omp = std::getenv("OMP_NUM_THREADS");
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    if (openblas_get_corename) {
      const std::string core = openblas_get_corename();
      std::printf("host BLAS: OpenBLAS, core %s (OPENBLAS_CORETYPE=%s), %d threads; OMP_NUM_THREADS=%s\n",
                  core.c_str(), coretype ? coretype : "unset", openblas_get_num_threads ? openblas_get_num_threads() : -1,
                  omp ? omp : "unset");
      if (core == "Prescott" || core == "prescott")
        std::printf("WARNING: OpenBLAS runs its generic Prescott kernels (dgemm 4-6x slow on this CPU); set "
                    "OPENBLAS_CORETYPE=SkylakeX (AVX-512) or Haswell (AVX2)\n");
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
      else if (__builtin_cpu_supports("avx512f") && core != "SkylakeX" && core != "Cooperlake" &&
               core != "SapphireRapids")
        std::printf("note: this CPU has AVX-512 but OpenBLAS uses its %s kernels; OPENBLAS_CORETYPE=SkylakeX may "
                    "be faster\n", core.c_str());
#endif
    } else {
      std::printf("host BLAS: not OpenBLAS (core unknown); OMP_NUM_THREADS=%s\n", omp ? omp : "unset");
    }
  }
}

} // namespace kronex_bench
