// Picks the backend and the value type. Compiled into each kronex executable with
// KRONEX_DSL_DEVICE set to whether that executable links a device runtime.
#include <cmath>

#include "exec/chain_program.hpp"
#include "exec/executable.hpp"
#if KRONEX_DSL_DEVICE
#include <kronex/backends/device/device_api.hpp>
#endif

namespace kronex::dsl {

const char* to_string(backend_kind b) { return b == backend_kind::host ? "host" : "device"; }

bool device_backend_built() { return KRONEX_DSL_DEVICE != 0; }

std::string device_system_name() {
#if KRONEX_DSL_DEVICE
  return kronex::device::system_name();
#else
  return "none";
#endif
}

std::unique_ptr<executable> prepare(const evaluated_program& p, backend_kind backend, bool allocate) {
  return with_dtype(p.type, [&](auto t) -> std::unique_ptr<executable> {
    using T = decltype(t);
    if (backend == backend_kind::host) return p.krylov ? exec::prepare_krylov<T>(p, allocate) : exec::prepare_host<T>(p, allocate);
#if KRONEX_DSL_DEVICE
    return p.krylov ? exec::prepare_device_krylov<T>(p, allocate) : exec::prepare_device<T>(p, allocate);
#else
    throw backend_unavailable("kronex: this kronex command was built without a device runtime "
                              "(configure with Thrust for the CPU device, or with CUDA)");
#endif
  });
}

io::npy_array initial_operand(const evaluated_program& p) {
  return with_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    return with_rank(p.shape.size(), [&](auto d) {
      return io::to_npy_array(xt::xarray<T>(exec::make_operand<T, decltype(d)::value>(p)));
    });
  });
}

double relative_residual(const evaluated_program& p, const io::npy_array& result) {
  if (!p.runnable() || p.stages.empty()) throw kronex::error("kronex: only a solve or an apply has a residual");
  // The last stage's operand: the innermost operand, or the program without its last stage run
  // on the host.
  io::npy_array operand;
  if (p.stages.size() == 1) {
    operand = initial_operand(p);
  } else {
    evaluated_program inner = p;
    inner.stages.pop_back();
    auto e = prepare(inner, backend_kind::host);
    e->run();
    operand = e->result();
  }
  // The opposite operation on the result: apply for a solve, solve for an apply.
  evaluated_program back = p;
  back.stages = {p.stages.back()};
  back.stages[0].what = p.stages.back().what == result_value::kind::solve ? result_value::kind::apply
                                                                           : result_value::kind::solve;
  auto arr = std::make_shared<array_value>();
  arr->type = result.type;
  arr->shape = result.shape;
  arr->values = std::make_shared<const io::npy_array>(result);
  back.operand = arr;
  auto e = prepare(back, backend_kind::host);
  e->run();
  const io::npy_array r = e->result();
  return with_dtype(p.type, [&](auto t) {
    using T = decltype(t);
    const auto& a = std::get<xt::xarray<T>>(r.data);
    const auto& b = std::get<xt::xarray<T>>(operand.data);
    long double num = 0, den = 0;
    for (std::size_t i = 0; i < b.size(); ++i) {
      num += std::norm(std::complex<long double>(a.flat(i)) - std::complex<long double>(b.flat(i)));
      den += std::norm(std::complex<long double>(b.flat(i)));
    }
    return den > 0 ? double(std::sqrt(num / den)) : double(std::sqrt(num));
  });
}

} // namespace kronex::dsl
