// The device runtime's Thrust code, written once and compiled twice: by nvcc for the CUDA device
// system (cuda/runtime_cuda.cu) and by the host compiler for a CPU device system
// (cpu/runtime_cpu.cpp, THRUST_DEVICE_SYSTEM_OMP). The including file defines
//   device_policy(context&)   the execution policy to run on (CUDA: the context's stream)
// before including this file. Thrust's exceptions become kronex::device_error.
// Not here: the GEMMs and the sparse product csr_spmv, which each runtime brings itself (CUDA:
// cuBLAS and cuSPARSE; a CPU device: host BLAS and a Thrust kernel in cpu/runtime_cpu.cpp, which
// uses this file's launch()).
#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>

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
// ---- Krylov solves (krylov/device_space.hpp) ----
template <class R>
KRONEX_HOST_DEVICE R real_part(R v) { return v; }
template <class R>
KRONEX_HOST_DEVICE R real_part(thrust::complex<R> v) { return v.real(); }
template <class R>
KRONEX_HOST_DEVICE R imag_part(R) { return R(0); }
template <class R>
KRONEX_HOST_DEVICE R imag_part(thrust::complex<R> v) { return v.imag(); }
KRONEX_HOST_DEVICE inline bool finite(double v) {
#if defined(__CUDA_ARCH__)
  return isfinite(v);
#else
  return std::isfinite(v);
#endif
}
KRONEX_HOST_DEVICE inline double sqrt_of(double v) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(v);
#else
  return std::sqrt(v);
#endif
}
KRONEX_HOST_DEVICE inline double hypot_of(double a, double b) {
#if defined(__CUDA_ARCH__)
  return ::hypot(a, b);
#else
  return std::hypot(a, b);
#endif
}

template <class V>
struct krylov_vector_element {
  krylov_vector_op op;
  const V* s;
  std::size_t flag, a;
  const V* x;
  V* y;
  KRONEX_HOST_DEVICE void operator()(std::size_t i) const {
    if (s[flag] != V(0)) return;  // a breakdown is flagged: the vectors stay as they are
    switch (op) {
      case krylov_vector_op::copy: y[i] = x[i]; break;
      case krylov_vector_op::zero: y[i] = V(0); break;
      case krylov_vector_op::axpy: y[i] += s[a] * x[i]; break;
      case krylov_vector_op::xpay: y[i] = x[i] + s[a] * y[i]; break;
      case krylov_vector_op::scale: y[i] *= s[a]; break;
    }
  }
};

// One slot op with device types (std::complex has no device constructors).
template <class V>
struct slot_op {
  krylov_slot_op op;
  std::size_t a, b, c, d;
  V value;
  int status;
};
// The same arithmetic as host_space's, one op after the other.
template <class V>
struct krylov_slot_program {
  slot_op<V> ops[krylov_slot_batch];
  std::size_t count, flag;
  int non_finite;
  V* s;
  KRONEX_HOST_DEVICE void operator()(std::size_t) const {
    for (std::size_t k = 0; k < count; ++k) run(ops[k]);
  }
  KRONEX_HOST_DEVICE void run(const slot_op<V>& o) const {
    using R = decltype(real_part(V(0)));
    V* const S = s;
    switch (o.op) {
      case krylov_slot_op::set: S[o.a] = o.value; break;
      case krylov_slot_op::assign: S[o.a] = S[o.b]; break;
      case krylov_slot_op::add: S[o.a] = S[o.b] + S[o.c]; break;
      case krylov_slot_op::sub: S[o.a] = S[o.b] - S[o.c]; break;
      case krylov_slot_op::mul: S[o.a] = S[o.b] * S[o.c]; break;
      case krylov_slot_op::div: S[o.a] = S[o.c] == V(0) ? V(0) : S[o.b] / S[o.c]; break;
      case krylov_slot_op::sub_mul: S[o.a] -= S[o.b] * S[o.c]; break;
      case krylov_slot_op::neg: S[o.a] = -S[o.b]; break;
      case krylov_slot_op::real: S[o.a] = V(real_part(S[o.b])); break;
      case krylov_slot_op::abs: S[o.a] = V(R(magnitude(S[o.b]))); break;
      case krylov_slot_op::sqrt: {
        const R r = real_part(S[o.b]);
        S[o.a] = V(r < R(0) ? R(0) : R(sqrt_of(double(r))));  // a NaN stays a NaN
        break;
      }
      case krylov_slot_op::hypot: S[o.a] = V(R(hypot_of(magnitude(S[o.b]), magnitude(S[o.c])))); break;
      case krylov_slot_op::givens: {  // (c, s, a, b) in (o.a, o.b, o.c, o.d)
        const V x = S[o.c], y = S[o.d];
        const R ax = R(magnitude(x)), h = R(hypot_of(double(ax), magnitude(y)));
        if (!finite(double(h))) {
          S[o.a] = S[o.b] = V(std::numeric_limits<R>::quiet_NaN());
          break;
        }
        if (h == R(0)) {
          S[o.a] = V(0);
          S[o.b] = V(1);
          break;
        }
        const V phase = ax == R(0) ? V(1) : x / V(ax);
        S[o.a] = V(ax / h);
        S[o.b] = phase * conj_value(y) / V(h);
        S[o.c] = phase * V(h);
        S[o.d] = V(0);
        break;
      }
      case krylov_slot_op::rotate: {
        const V x = S[o.c], y = S[o.d], cs = S[o.a], ss = S[o.b];
        S[o.c] = cs * x + ss * y;
        S[o.d] = -conj_value(ss) * x + cs * y;
        break;
      }
      case krylov_slot_op::guard_positive:
      case krylov_slot_op::guard_nonnegative:
      case krylov_slot_op::guard_nonzero: {
        if (S[flag] != V(0)) break;
        const V v = S[o.a];
        const R r = real_part(v);
        if (!finite(double(r)) || !finite(double(imag_part(v)))) {
          S[flag] = V(R(1 + non_finite));
          break;
        }
        const bool ok = o.op == krylov_slot_op::guard_positive      ? r > R(0)
                        : o.op == krylov_slot_op::guard_nonnegative ? r >= R(0)
                                                                    : v != V(0);
        if (!ok) S[flag] = V(R(1 + o.status));
        break;
      }
      case krylov_slot_op::reset: S[flag] = V(0); break;
      case krylov_slot_op::read: S[flag + 1] = S[o.a]; break;
    }
  }
};

// Partial sum t = j * parts + p of x_j^H y_j over the entries p, p + parts, ...
template <class V>
struct krylov_dot_partial {
  const V* x[krylov_dot_batch];
  const V* y[krylov_dot_batch];
  std::size_t n, parts;
  V* partials;
  KRONEX_HOST_DEVICE void operator()(std::size_t t) const {
    const std::size_t j = t / parts;
    const V* xj = x[j];
    const V* yj = y[j];
    V sum(0);
    for (std::size_t i = t % parts; i < n; i += parts) sum += conj_value(xj[i]) * yj[i];
    partials[t] = sum;
  }
};
template <class V>
struct krylov_dot_total {
  std::size_t out[krylov_dot_batch];
  std::size_t parts;
  const V* partials;
  V* s;
  KRONEX_HOST_DEVICE void operator()(std::size_t j) const {
    V sum(0);
    for (std::size_t p = 0; p < parts; ++p) sum += partials[j * parts + p];
    s[out[j]] = sum;
  }
};

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

template <class T>
void krylov_vector(context& ctx, krylov_vector_op op, std::size_t n, const T* s, std::size_t flag, std::size_t a,
                   const T* x, T* y) {
  using V = device_value_t<T>;
  try {
    launch(ctx, n, krylov_vector_element<V>{op, reinterpret_cast<const V*>(s), flag, a, reinterpret_cast<const V*>(x),
                                            reinterpret_cast<V*>(y)});
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device Krylov vector operation on ", n, " values failed: ", e.what()));
  }
}

template <class T>
void krylov_slots(context& ctx, T* s, std::size_t flag, int non_finite_status, const krylov_slot_args<T>* ops,
                  std::size_t count) {
  using V = device_value_t<T>;
  if (count == 0) return;
  if (count > krylov_slot_batch)
    throw device_error(message("kronex: device Krylov slot batch of ", count, " ops (at most ", krylov_slot_batch, ")"));
  krylov_slot_program<V> f{};
  for (std::size_t k = 0; k < count; ++k) {
    const krylov_slot_args<T>& o = ops[k];
    f.ops[k] = slot_op<V>{o.op, o.a, o.b, o.c, o.d, V(o.value), o.status};
  }
  f.count = count;
  f.flag = flag;
  f.non_finite = non_finite_status;
  f.s = reinterpret_cast<V*>(s);
  try {
    launch(ctx, 1, f);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device Krylov scalar arithmetic (", count, " ops) failed: ", e.what()));
  }
}

template <class T>
void krylov_dots(context& ctx, std::size_t n, const krylov_dot_term<T>* terms, std::size_t count, T* partials, T* s) {
  using V = device_value_t<T>;
  if (count == 0) return;
  if (count > krylov_dot_batch)
    throw device_error(message("kronex: device Krylov dot batch of ", count, " terms (at most ", krylov_dot_batch, ")"));
  const std::size_t parts = n < krylov_dot_partitions ? (n ? n : 1) : krylov_dot_partitions;
  krylov_dot_partial<V> partial{};
  krylov_dot_total<V> total{};
  for (std::size_t j = 0; j < count; ++j) {
    partial.x[j] = reinterpret_cast<const V*>(terms[j].x);
    partial.y[j] = reinterpret_cast<const V*>(terms[j].y);
    total.out[j] = terms[j].out;
  }
  partial.n = n;
  partial.parts = total.parts = parts;
  partial.partials = reinterpret_cast<V*>(partials);
  total.partials = reinterpret_cast<const V*>(partials);
  total.s = reinterpret_cast<V*>(s);
  try {
    launch(ctx, count * parts, partial);
    launch(ctx, count, total);
  } catch (const std::exception& e) {
    throw device_error(message("kronex: device Krylov dot products (", count, " of ", n, " values) failed: ", e.what()));
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
  template void rank_one_subtract<T>(context&, const rank_one_args<T>&, const T*, T*);              \
  template void krylov_vector<T>(context&, krylov_vector_op, std::size_t, const T*, std::size_t, std::size_t, \
                                 const T*, T*);                                                   \
  template void krylov_slots<T>(context&, T*, std::size_t, int, const krylov_slot_args<T>*, std::size_t); \
  template void krylov_dots<T>(context&, std::size_t, const krylov_dot_term<T>*, std::size_t, T*, T*);
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
