// The device runtime's Thrust code, written once and compiled twice: by nvcc for the CUDA device
// system (cuda/runtime_cuda.cu) and by the host compiler for a CPU device system
// (cpu/runtime_cpu.cpp, THRUST_DEVICE_SYSTEM_OMP). The including file defines
//   device_policy(context&)   the execution policy to run on (CUDA: the context's stream)
// before including this file. Thrust's exceptions become kronex::device_error.
#include <complex>
#include <cstddef>

#include <kronex/core/error.hpp>
#include <kronex/core/value_traits.hpp>
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
template <class R>
KRONEX_HOST_DEVICE double magnitude(R v) { return double(v < R(0) ? -v : v); }
template <class R>
KRONEX_HOST_DEVICE double magnitude(thrust::complex<R> v) { return double(thrust::abs(v)); }

template <class V>
struct axpy_element {
  V a;
  const V* x;
  V* y;
  KRONEX_HOST_DEVICE void operator()(std::size_t i) const { y[i] = x ? a * x[i] + y[i] : a * y[i]; }
};
template <class V, class R>
struct eigen_scale_element {
  int rank;
  std::size_t terms, axis_total;
  std::size_t local[6], origin[6], axis_offset[6];
  const V* coefs;
  const R* weights;
  V scale;
  double cutoff;
  V* x;
  KRONEX_HOST_DEVICE void operator()(std::size_t idx) const {
    std::size_t at[6] = {};
    std::size_t rest = idx;
    for (int d = rank - 1; d >= 0; --d) {
      at[d] = origin[d] + rest % local[d] + axis_offset[d];
      rest /= local[d];
    }
    V s(0);
    for (std::size_t t = 0; t < terms; ++t) {
      V p = coefs[t];
      for (int d = 0; d < rank; ++d) p *= weights[t * axis_total + at[d]];
      s += p;
    }
    x[idx] = magnitude(s) <= cutoff ? V(0) : x[idx] * (scale / s);
  }
};
template <class R>
KRONEX_HOST_DEVICE R conj_value(R v) { return v; }
template <class R>
KRONEX_HOST_DEVICE thrust::complex<R> conj_value(thrust::complex<R> v) { return thrust::conj(v); }

// Entry idx of the block of the rank-one tensor r_j.
template <class V>
struct rank_one_entry {
  int rank;
  std::size_t axis_total;
  std::size_t local[6], axis_offset[6];
  const V* vectors;
  KRONEX_HOST_DEVICE V operator()(std::size_t j, std::size_t idx) const {
    V w(1);
    for (int d = rank - 1; d >= 0; --d) {
      w *= vectors[j * axis_total + axis_offset[d] + idx % local[d]];
      idx /= local[d];
    }
    return w;
  }
};
// Partial sum t = j * parts + p of r_j^H x, over the entries p, p + parts, ...: neighbouring
// threads read neighbouring entries.
template <class V>
struct rank_one_partial_element {
  rank_one_entry<V> r;
  std::size_t n, parts;
  const V* x;
  V* partials;
  KRONEX_HOST_DEVICE void operator()(std::size_t t) const {
    const std::size_t j = t / parts;
    V s(0);
    for (std::size_t idx = t % parts; idx < n; idx += parts) s += conj_value(r(j, idx)) * x[idx];
    partials[t] = s;
  }
};
template <class V>
struct rank_one_dot_element {
  std::size_t parts;
  const V* partials;
  V* dots;
  KRONEX_HOST_DEVICE void operator()(std::size_t j) const {
    V s(0);
    for (std::size_t p = 0; p < parts; ++p) s += partials[j * parts + p];
    dots[j] = s;
  }
};
template <class V>
struct rank_one_coef_element {
  std::size_t k;
  const V* gram_inverse;
  const V* dots;
  V* coefs;
  KRONEX_HOST_DEVICE void operator()(std::size_t a) const {
    V s(0);
    for (std::size_t b = 0; b < k; ++b) s += gram_inverse[a * k + b] * dots[b];
    coefs[a] = s;
  }
};
template <class V>
struct rank_one_subtract_element {
  rank_one_entry<V> r;
  std::size_t k;
  const V* coefs;
  V* y;
  KRONEX_HOST_DEVICE void operator()(std::size_t idx) const {
    V s(0);
    for (std::size_t j = 0; j < k; ++j) s += coefs[j] * r(j, idx);
    y[idx] -= s;
  }
};
template <class T>
rank_one_entry<device_value_t<T>> rank_one_of(const rank_one_args<T>& a, std::size_t& n) {
  rank_one_entry<device_value_t<T>> r{a.rank, a.axis_total, {}, {}, reinterpret_cast<const device_value_t<T>*>(a.vectors)};
  n = 1;
  for (int d = 0; d < a.rank; ++d) {
    r.local[d] = a.local[d];
    r.axis_offset[d] = a.axis_offset[d];
    n *= a.local[d];
  }
  return r;
}
template <class F>
void launch(context& ctx, std::size_t n, const F& f) {
  thrust::for_each(device_policy(ctx), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(n), f);
}
} // namespace

template <class T>
void axpy(context& ctx, std::size_t n, T a, const T* x, T* y) {
  using V = device_value_t<T>;
  const axpy_element<V> f{V(a), reinterpret_cast<const V*>(x), reinterpret_cast<V*>(y)};
  try {
    thrust::for_each(device_policy(ctx), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(n), f);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device axpy of ", n, " values failed: ", e.what()));
  }
}

template <class T>
void scale(context& ctx, std::size_t n, T a, T* y) {
  axpy<T>(ctx, n, a, nullptr, y);
}

template <class T>
void eigen_scale(context& ctx, const eigen_scale_args<T>& a, T* x) {
  using V = device_value_t<T>;
  using R = typename value_traits<T>::real_type;
  eigen_scale_element<V, R> f{a.rank, a.terms, a.axis_total, {}, {}, {}, reinterpret_cast<const V*>(a.coefs), a.weights,
                              V(a.scale), a.cutoff, reinterpret_cast<V*>(x)};
  std::size_t n = 1;
  for (int d = 0; d < a.rank; ++d) {
    f.local[d] = a.local[d];
    f.origin[d] = a.origin[d];
    f.axis_offset[d] = a.axis_offset[d];
    n *= a.local[d];
  }
  try {
    thrust::for_each(device_policy(ctx), thrust::counting_iterator<std::size_t>(0), thrust::counting_iterator<std::size_t>(n), f);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device eigenvalue scaling of ", n, " values failed: ", e.what()));
  }
}

template <class T>
void rank_one_dots(context& ctx, const rank_one_args<T>& a, const T* x) {
  using V = device_value_t<T>;
  std::size_t n = 0;
  const rank_one_entry<V> r = rank_one_of(a, n);
  const std::size_t parts = n < rank_one_partitions ? (n ? n : 1) : rank_one_partitions;
  V* partials = reinterpret_cast<V*>(a.partials);
  try {
    launch(ctx, a.count * parts, rank_one_partial_element<V>{r, n, parts, reinterpret_cast<const V*>(x), partials});
    launch(ctx, a.count, rank_one_dot_element<V>{parts, partials, reinterpret_cast<V*>(a.dots)});
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device dot products with ", a.count, " rank-one tensors (", n,
                               " values) failed: ", e.what()));
  }
}

template <class T>
void rank_one_combine(context& ctx, const rank_one_args<T>& a, T* coefs) {
  using V = device_value_t<T>;
  try {
    launch(ctx, a.count,
           rank_one_coef_element<V>{a.count, reinterpret_cast<const V*>(a.gram_inverse), reinterpret_cast<const V*>(a.dots),
                                    reinterpret_cast<V*>(coefs)});
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device projection coefficients (", a.count, " rank-one tensors) failed: ", e.what()));
  }
}

template <class T>
void rank_one_subtract(context& ctx, const rank_one_args<T>& a, const T* coefs, T* y) {
  using V = device_value_t<T>;
  std::size_t n = 0;
  const rank_one_entry<V> r = rank_one_of(a, n);
  try {
    launch(ctx, n, rank_one_subtract_element<V>{r, a.count, reinterpret_cast<const V*>(coefs), reinterpret_cast<V*>(y)});
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device projection of ", n, " values onto ", a.count, " rank-one tensors failed: ",
                               e.what()));
  }
}

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
  template void copy_box<T>(context&, const device_box&, const T*, T*);                           \
  template void axpy<T>(context&, std::size_t, T, const T*, T*);                                   \
  template void scale<T>(context&, std::size_t, T, T*);                                            \
  template void eigen_scale<T>(context&, const eigen_scale_args<T>&, T*);                          \
  template void rank_one_dots<T>(context&, const rank_one_args<T>&, const T*);                    \
  template void rank_one_combine<T>(context&, const rank_one_args<T>&, T*);                        \
  template void rank_one_subtract<T>(context&, const rank_one_args<T>&, const T*, T*);
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
