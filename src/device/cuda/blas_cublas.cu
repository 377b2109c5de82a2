// cuBLAS GEMMs for the device plans, all four value types, every status checked.
#include <complex>

#include "cuda_context.hpp"

namespace kronex::detail::device {

namespace {
cublasOperation_t to_cublas(char t) { return t == 'T' ? CUBLAS_OP_T : (t == 'C' ? CUBLAS_OP_C : CUBLAS_OP_N); }

template <class T>
struct cublas_calls;

template <>
struct cublas_calls<float> {
  using V = float;
  static constexpr auto gemm = cublasSgemm;
  static constexpr auto batched = cublasSgemmStridedBatched;
  static constexpr const char* gemm_name = "cublasSgemm";
  static constexpr const char* batched_name = "cublasSgemmStridedBatched";
};
template <>
struct cublas_calls<double> {
  using V = double;
  static constexpr auto gemm = cublasDgemm;
  static constexpr auto batched = cublasDgemmStridedBatched;
  static constexpr const char* gemm_name = "cublasDgemm";
  static constexpr const char* batched_name = "cublasDgemmStridedBatched";
};
template <>
struct cublas_calls<std::complex<float>> {
  using V = cuComplex;
  static constexpr auto gemm = cublasCgemm;
  static constexpr auto batched = cublasCgemmStridedBatched;
  static constexpr const char* gemm_name = "cublasCgemm";
  static constexpr const char* batched_name = "cublasCgemmStridedBatched";
};
template <>
struct cublas_calls<std::complex<double>> {
  using V = cuDoubleComplex;
  static constexpr auto gemm = cublasZgemm;
  static constexpr auto batched = cublasZgemmStridedBatched;
  static constexpr const char* gemm_name = "cublasZgemm";
  static constexpr const char* batched_name = "cublasZgemmStridedBatched";
};

template <class V>
V one() { if constexpr (std::is_arithmetic_v<V>) return V(1); else return V{1, 0}; }
template <class V>
V zero() { if constexpr (std::is_arithmetic_v<V>) return V(0); else return V{0, 0}; }
} // namespace

template <class T>
void blas<T>::gemm(context& ctx, char trans_a, char trans_b, long m, long n, long k, const T* a, long lda, const T* b,
                   long ldb, T* c, long ldc) {
  using C = cublas_calls<T>;
  using V = typename C::V;
  const V alpha = one<V>(), beta = zero<V>();
  check(C::gemm(ctx.get().handle, to_cublas(trans_a), to_cublas(trans_b), int(m), int(n), int(k), &alpha,
                reinterpret_cast<const V*>(a), int(lda), reinterpret_cast<const V*>(b), int(ldb), &beta,
                reinterpret_cast<V*>(c), int(ldc)),
        C::gemm_name);
}

template <class T>
void blas<T>::gemm_strided_batched(context& ctx, char trans_a, char trans_b, long m, long n, long k, const T* a,
                                   long lda, long long stride_a, const T* b, long ldb, long long stride_b, T* c,
                                   long ldc, long long stride_c, long batch) {
  using C = cublas_calls<T>;
  using V = typename C::V;
  const V alpha = one<V>(), beta = zero<V>();
  check(C::batched(ctx.get().handle, to_cublas(trans_a), to_cublas(trans_b), int(m), int(n), int(k), &alpha,
                   reinterpret_cast<const V*>(a), int(lda), stride_a, reinterpret_cast<const V*>(b), int(ldb),
                   stride_b, &beta, reinterpret_cast<V*>(c), int(ldc), stride_c, int(batch)),
        C::batched_name);
}

#define KRONEX_INSTANTIATE(T) template struct blas<T>;
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
