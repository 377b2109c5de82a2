#pragma once
// Running an evaluated program on a backend. prepare() turns each stage into the C++ expression
// the same program would be written as (kron(...), the methods, .solve(b) or .apply(b)) and
// compiles it with kronex::compile for the backend's tensor type, so the DSL prints and runs
// exactly the plans of the C++ API. Buffers are allocated and the operand is generated (and
// uploaded) here, once: run() then repeats the whole chain with no allocation and, on the
// device, no host<->device transfer.
#include <complex>
#include <memory>
#include <string>
#include <vector>

#include <kronex/plan/plan.hpp>

#include "eval/evaluator.hpp"
#include "io/npy.hpp"

namespace kronex::dsl {

enum class backend_kind { host, device };
const char* to_string(backend_kind b);

class executable {
public:
  virtual ~executable() = default;
  // "host", "device/cuda", "device/omp", "device/cpp".
  virtual std::string backend_name() const = 0;
  // One plan per stage, innermost first.
  virtual const std::vector<plan_description>& plans() const = 0;
  // Runs every stage on the backend's buffers; on the device, inside a no_transfer_guard.
  virtual void run() = 0;
  // The last run's result, on the host (a counted download on the device).
  virtual io::npy_array result() const = 0;
  // The backend's memory bandwidth in bytes/s, measured now: the host's triad, or a large
  // device-to-device copy.
  virtual double memory_bandwidth() const = 0;
  // Seconds one run() takes, timed the backend's way (device events on CUDA); for bench.
  virtual double timed_run() = 0;
  // A Krylov program's last solve (what kronex::cg ... returned); null for other programs.
  virtual const krylov_result* krylov() const { return nullptr; }
};

// Whether this build of the kronex command has a device runtime (and which: "cuda", "omp").
bool device_backend_built();
std::string device_system_name();

// Compiles every stage for the backend (factorizations run here; a singular factor throws a
// dsl_error at the factor). Throws kronex::backend_unavailable for the device when none is built
// in or present. With `allocate` false (explain) only the plans are made: nothing is allocated
// for the tensor, and run() and result() throw.
std::unique_ptr<executable> prepare(const evaluated_program& p, backend_kind backend, bool allocate = true);

// The innermost operand as the program generates it (for --check and tests).
io::npy_array initial_operand(const evaluated_program& p);

// The relative residual of the last stage, computed on the host with the opposite operation:
// for x = K^-1 b it is ||K x - b|| / ||b|| (K applied with .apply); for y = K x it is
// ||K^-1 y - x|| / ||x||. `result` is the program's result, from any backend.
double relative_residual(const evaluated_program& p, const io::npy_array& result);

namespace exec {
// Defined for the four value types, one translation unit each (exec/host_*.cpp, exec/device_*.cpp).
template <class T>
std::unique_ptr<executable> prepare_host(const evaluated_program& p, bool allocate);
template <class T>
std::unique_ptr<executable> prepare_device(const evaluated_program& p, bool allocate);
// A program ending with a Krylov solve, on the host or the device: exec/krylov_program.hpp.
template <class T>
std::unique_ptr<executable> prepare_krylov(const evaluated_program& p, bool allocate);
template <class T>
std::unique_ptr<executable> prepare_device_krylov(const evaluated_program& p, bool allocate);
#define KRONEX_DSL_DECLARE_PREPARE(T)                                                                  \
  template <> std::unique_ptr<executable> prepare_host<T>(const evaluated_program& p, bool allocate);  \
  template <> std::unique_ptr<executable> prepare_krylov<T>(const evaluated_program& p, bool allocate); \
  template <> std::unique_ptr<executable> prepare_device<T>(const evaluated_program& p, bool allocate); \
  template <> std::unique_ptr<executable> prepare_device_krylov<T>(const evaluated_program& p, bool allocate);
KRONEX_DSL_DECLARE_PREPARE(float)
KRONEX_DSL_DECLARE_PREPARE(double)
KRONEX_DSL_DECLARE_PREPARE(std::complex<float>)
KRONEX_DSL_DECLARE_PREPARE(std::complex<double>)
#undef KRONEX_DSL_DECLARE_PREPARE
} // namespace exec

} // namespace kronex::dsl
