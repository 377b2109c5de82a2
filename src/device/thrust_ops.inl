// The device runtime's Thrust code, written once and compiled twice: by nvcc for the CUDA device
// system (cuda/runtime_cuda.cu) and by the host compiler for a CPU device system
// (cpu/runtime_cpu.cpp, THRUST_DEVICE_SYSTEM_OMP). The including file defines
//   device_policy(context&)   the execution policy to run on (CUDA: the context's stream)
// before including this file. Thrust's exceptions become kronex::device_error.
#include <complex>
#include <cstddef>

#include <kronex/core/error.hpp>
#include <thrust/complex.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#if defined(__CUDACC__)
#define KRONEX_HOST_DEVICE __host__ __device__
#else
#define KRONEX_HOST_DEVICE
#endif

namespace kronex::detail::device {

namespace {
// The type device code computes with: thrust::complex for std::complex (same layout).
template <class T>
struct device_value { using type = T; };
template <class R>
struct device_value<std::complex<R>> { using type = thrust::complex<R>; };
template <class T>
using device_value_t = typename device_value<T>::type;

template <class V>
struct scale_along_mode {
  const V* s;
  const V* src;
  V* dst;
  std::size_t n, R;
  KRONEX_HOST_DEVICE void operator()(std::size_t idx) const { dst[idx] = s[(idx / R) % n] * src[idx]; }
};
template <class V>
struct copy_box_element {
  device_box b;
  const V* src;
  V* dst;
  KRONEX_HOST_DEVICE void operator()(std::size_t idx) const {
    std::size_t s = 0, d = 0, sstride = 1, dstride = 1;
    for (int k = b.rank - 1; k >= 0; --k) {
      const std::size_t i = idx % b.part_extent[k] + b.part_offset[k];
      idx /= b.part_extent[k];
      s += (i - b.from_offset[k]) * sstride;
      d += (i - b.to_offset[k]) * dstride;
      sstride *= b.from_extent[k];
      dstride *= b.to_extent[k];
    }
    dst[d] = src[s];
  }
};
} // namespace

template <class T>
void copy_box(context& ctx, const device_box& box, const T* src, T* dst) {
  using V = device_value_t<T>;
  std::size_t n = 1;
  for (int k = 0; k < box.rank; ++k) n *= box.part_extent[k];
  if (n == 0) return;
  const copy_box_element<V> f{box, reinterpret_cast<const V*>(src), reinterpret_cast<V*>(dst)};
  try {
    thrust::for_each(device_policy(ctx), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(n), f);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device box copy of ", n, " values failed: ", e.what()));
  }
}

template <class T>
void scale_mode(context& ctx, std::size_t L, std::size_t n, std::size_t R, const T* s, const T* src, T* dst) {
  using V = device_value_t<T>;
  const scale_along_mode<V> f{reinterpret_cast<const V*>(s), reinterpret_cast<const V*>(src), reinterpret_cast<V*>(dst), n, R};
  try {
    thrust::for_each(device_policy(ctx), thrust::counting_iterator<std::size_t>(0),
                     thrust::counting_iterator<std::size_t>(L * n * R), f);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device scale along a mode (", L, ",", n, ",", R, ") failed: ", e.what()));
  }
}

#define KRONEX_INSTANTIATE(T)                                       \
  template void scale_mode<T>(context&, std::size_t, std::size_t, std::size_t, const T*, const T*, T*); \
  template void copy_box<T>(context&, const device_box&, const T*, T*);
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
