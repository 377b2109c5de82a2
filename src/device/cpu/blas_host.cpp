// The host-BLAS stand-in for cuBLAS on a CPU device: the same column-major GEMM calls, through
// CBLAS. Strided-batched GEMMs loop over the batch; the host BLAS threads each GEMM itself (an
// OpenMP loop around a threaded BLAS would oversubscribe the cores).
#include <complex>

#include <cblas.h>

#include <kronex/backends/device/runtime.hpp>

namespace kronex::detail::device {

namespace {
CBLAS_TRANSPOSE to_cblas(char t) { return t == 'T' ? CblasTrans : (t == 'C' ? CblasConjTrans : CblasNoTrans); }

void call_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, long m, long n, long k, const float* a, long lda,
               const float* b, long ldb, float* c, long ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, int(m), int(n), int(k), 1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
}
void call_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, long m, long n, long k, const double* a, long lda,
               const double* b, long ldb, double* c, long ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, int(m), int(n), int(k), 1.0, a, int(lda), b, int(ldb), 0.0, c, int(ldc));
}
void call_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, long m, long n, long k, const std::complex<float>* a,
               long lda, const std::complex<float>* b, long ldb, std::complex<float>* c, long ldc) {
  const std::complex<float> one(1), zero(0);
  cblas_cgemm(CblasColMajor, ta, tb, int(m), int(n), int(k), &one, a, int(lda), b, int(ldb), &zero, c, int(ldc));
}
void call_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, long m, long n, long k, const std::complex<double>* a,
               long lda, const std::complex<double>* b, long ldb, std::complex<double>* c, long ldc) {
  const std::complex<double> one(1), zero(0);
  cblas_zgemm(CblasColMajor, ta, tb, int(m), int(n), int(k), &one, a, int(lda), b, int(ldb), &zero, c, int(ldc));
}
} // namespace

template <class T>
void blas<T>::gemm(context&, char trans_a, char trans_b, long m, long n, long k, const T* a, long lda, const T* b,
                   long ldb, T* c, long ldc) {
  call_gemm(to_cblas(trans_a), to_cblas(trans_b), m, n, k, a, lda, b, ldb, c, ldc);
}

template <class T>
void blas<T>::gemm_strided_batched(context&, char trans_a, char trans_b, long m, long n, long k, const T* a,
                                   long lda, long long stride_a, const T* b, long ldb, long long stride_b, T* c,
                                   long ldc, long long stride_c, long batch) {
  for (long i = 0; i < batch; ++i) {
    call_gemm(to_cblas(trans_a), to_cblas(trans_b), m, n, k, a + i * stride_a, lda, b + i * stride_b, ldb,
              c + i * stride_c, ldc);
  }
}

#define KRONEX_INSTANTIATE(T) template struct blas<T>;
KRONEX_DEVICE_FOR_EACH_VALUE_TYPE(KRONEX_INSTANTIATE)
#undef KRONEX_INSTANTIATE

} // namespace kronex::detail::device
