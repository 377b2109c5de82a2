// A device module of the kronex package: kronex's device backend on arrays that live on a device,
// used in place through raw pointers (the package reads them from __cuda_array_interface__ or
// DLPack). Built once per device runtime, from this file and the objects every module shares:
//   _kronex_cuda   kronex::device_cuda (cuBLAS GEMMs on the GPU); installed;
//   _kronex_omp    kronex::device_cpu (the same plans on a CPU "device", host memory standing in
//                  for device memory); in the build tree only, for testing without a GPU.
// The expressions and compiled operators are _kronex's types (pybind11 shares them between
// modules), so kronex errors raised here are translated by _kronex into the same Python classes.
#include <cstdint>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <kronex/backends/device/device_api.hpp>
#include <kronex/backends/device/transfers.hpp>

#include <kronex_bench/timing.hpp>

#include "../binding_support.hpp"
#include "compiled_device.hpp"

#ifdef KRONEX_PYTHON_CUDA
#include <cuda_runtime_api.h>
#endif

#ifndef KRONEX_PYTHON_DEVICE_MODULE
#error "KRONEX_PYTHON_DEVICE_MODULE must name the module (_kronex_cuda, _kronex_omp)"
#endif

namespace py = pybind11;
using namespace kronex::python;

namespace {

// Waits for the work queued on the stream an array's producer named (__cuda_array_interface__'s
// "stream": 0 for none, 1 the legacy default stream, 2 the per-thread default stream, else a
// cudaStream_t), so kronex reads the array only when it is ready. A CPU device has no streams.
void wait_for_stream(std::uintptr_t stream) {
#ifdef KRONEX_PYTHON_CUDA
  if (stream == 0) return;
  cudaStream_t s = stream == 1   ? cudaStreamLegacy
                   : stream == 2 ? cudaStreamPerThread
                                 : reinterpret_cast<cudaStream_t>(stream);
  const cudaError_t e = cudaStreamSynchronize(s);
  if (e != cudaSuccess)
    throw kronex::device_error(std::string("kronex: waiting for the array's CUDA stream failed: ") +
                               cudaGetErrorString(e));
#else
  (void)stream;
#endif
}

// Refuses memory the device cannot address, before any work: on CUDA, a pointer that is neither
// device nor managed memory (a host pointer given as a device array). A CPU device reads host
// memory.
void check_device_pointer(std::uintptr_t p, const char* what) {
#ifdef KRONEX_PYTHON_CUDA
  cudaPointerAttributes a{};
  const cudaError_t e = cudaPointerGetAttributes(&a, reinterpret_cast<const void*>(p));
  if (e != cudaSuccess) {
    cudaGetLastError();  // clears the error, which would otherwise surface in the next call
    throw kronex::invalid_operator(std::string("kronex: the ") + what + " is not CUDA memory (" +
                                   cudaGetErrorString(e) + ")");
  }
  if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged)
    throw kronex::invalid_operator(std::string("kronex: the ") + what +
                                   " is host memory, not device memory, though it was given as a device array");
#else
  (void)p;
  (void)what;
#endif
}

void check_compiled_for_device(const compiled& op) {
  if (op.memory() != memory_space::device)
    throw kronex::invalid_operator("kronex: this operator was compiled for NumPy arrays, not device arrays");
}

} // namespace

PYBIND11_MODULE(KRONEX_PYTHON_DEVICE_MODULE, m) {
  m.doc() = "kronex's device backend for the kronex package (use the kronex package)";
  // _kronex registers the expression and compiled-operator types and the exception translator.
  py::module_::import("kronex._kronex");

  m.def("system", [] { return std::string(kronex::device::system_name()); },
        "The device system of this runtime: cuda, or omp (a CPU device).");
  m.def("available", &kronex::device::available, "Whether device work can run now (a GPU is visible).");
  def_compile_and_explain<device_backend>(m, "compile", "explain");
  // x = op(b) on device memory at addresses b and x, after the producers' streams; the package
  // has checked both arrays against op (shape, dtype, layout). Returns when x is written.
  m.def("run", [](compiled& op, std::uintptr_t b, std::uintptr_t x, std::uintptr_t b_stream, std::uintptr_t x_stream) {
    check_compiled_for_device(op);
    const std::size_t n = kronex::detail::product(op.shape());
    if (n != 0 && (b == 0 || x == 0)) throw kronex::invalid_operator("kronex: a device array has a null pointer");
    if (n != 0) {
      check_device_pointer(b, "input");
      check_device_pointer(x, "output");
    }
    py::gil_scoped_release release;
    wait_for_stream(b_stream);
    if (x_stream != b_stream) wait_for_stream(x_stream);
    op.run(reinterpret_cast<const void*>(b), reinterpret_cast<void*>(x));
  });
  // For benchmarks/python: `repeats` runs timed in C++ (sorted seconds, each to its end: run()
  // waits for the device), on arrays the package has checked.
  m.def("time_runs", [](compiled& op, std::uintptr_t b, std::uintptr_t x, int repeats) {
    check_compiled_for_device(op);
    py::gil_scoped_release release;
    return kronex_bench::sorted_seconds(repeats, [&] { op.run(reinterpret_cast<const void*>(b), reinterpret_cast<void*>(x)); });
  });
  m.def("transfers", [] {
    const kronex::transfer_counts t = kronex::transfers();
    return py::make_tuple(t.uploads, t.downloads, t.upload_bytes, t.download_bytes);
  }, "kronex's host<->device copies since the module was loaded: uploads, downloads and their bytes.");
}
