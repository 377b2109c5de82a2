#pragma once
// A thin typed wrapper over the BLAS's general matrix product ?gemm, through its Fortran symbols:
// the BLAS that LAPACK::LAPACK links provides them (LAPACK itself calls them). Declared here, with
// lapack.h's name mangling and string-length convention, rather than through <cblas.h>: kronex's
// headers also pull in xtensor-blas, whose bundled cblas.h declares the CBLAS names its own way.
#include <complex>
#include <cstddef>

#include "lapack.hpp"

extern "C" {
#ifdef LAPACK_FORTRAN_STRLEN_END
#define KRONEX_BLAS_GEMM_DECL(name, NAME, T)                                                                       \
  void LAPACK_GLOBAL(name, NAME)(const char* transa, const char* transb, const lapack_int* m, const lapack_int* n, \
                                 const lapack_int* k, const T* alpha, const T* a, const lapack_int* lda, const T* b, \
                                 const lapack_int* ldb, const T* beta, T* c, const lapack_int* ldc, std::size_t,     \
                                 std::size_t);
#else
#define KRONEX_BLAS_GEMM_DECL(name, NAME, T)                                                                       \
  void LAPACK_GLOBAL(name, NAME)(const char* transa, const char* transb, const lapack_int* m, const lapack_int* n, \
                                 const lapack_int* k, const T* alpha, const T* a, const lapack_int* lda, const T* b, \
                                 const lapack_int* ldb, const T* beta, T* c, const lapack_int* ldc);
#endif
KRONEX_BLAS_GEMM_DECL(sgemm, SGEMM, float)
KRONEX_BLAS_GEMM_DECL(dgemm, DGEMM, double)
KRONEX_BLAS_GEMM_DECL(cgemm, CGEMM, lapack_complex_float)
KRONEX_BLAS_GEMM_DECL(zgemm, ZGEMM, lapack_complex_double)
#undef KRONEX_BLAS_GEMM_DECL
}

namespace kronex::lapack {

// c = alpha op(a) op(b) + beta c, column-major: op(a) is m x k, op(b) k x n, c m x n; ta and tb
// are 'N', 'T' or 'C'. c must not overlap a or b.
template <class T>
void gemm(char ta, char tb, int_t m, int_t n, int_t k, T alpha, const T* a, int_t lda, const T* b, int_t ldb, T beta,
          T* c, int_t ldc) {
#ifdef LAPACK_FORTRAN_STRLEN_END
#define KRONEX_BLAS_GEMM_CALL(name, NAME) \
  LAPACK_GLOBAL(name, NAME)(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1)
#else
#define KRONEX_BLAS_GEMM_CALL(name, NAME) \
  LAPACK_GLOBAL(name, NAME)(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc)
#endif
  if constexpr (std::is_same_v<T, float>) KRONEX_BLAS_GEMM_CALL(sgemm, SGEMM);
  else if constexpr (std::is_same_v<T, double>) KRONEX_BLAS_GEMM_CALL(dgemm, DGEMM);
  else if constexpr (std::is_same_v<T, std::complex<float>>) KRONEX_BLAS_GEMM_CALL(cgemm, CGEMM);
  else KRONEX_BLAS_GEMM_CALL(zgemm, ZGEMM);
#undef KRONEX_BLAS_GEMM_CALL
}

} // namespace kronex::lapack
