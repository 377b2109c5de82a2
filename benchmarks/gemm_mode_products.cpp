// Mode-wise products by CBLAS (see gemm_mode_products.hpp). For each mode the tensor is one
// matrix or a batch of them: mode 0 is an n x n^2 matrix, mode 2 an n^2 x n one, mode 1 n
// matrices of n x n.
#include "gemm_mode_products.hpp"

#include <string>

#include <cblas.h>

namespace kronex_bench {

namespace {

// dst = op(A) along mode 0 of src: dst (n x n^2) = op(A) src.
void mode0(CBLAS_TRANSPOSE t, int n, const double* a, const double* src, double* dst) {
  cblas_dgemm(CblasRowMajor, t, CblasNoTrans, n, n * n, n, 1.0, a, n, src, n * n, 0.0, dst, n * n);
}
// Mode 1: for each i, dst_i (n x n) = op(A) src_i.
void mode1(CBLAS_TRANSPOSE t, int n, const double* a, const double* src, double* dst) {
  const std::size_t slab = std::size_t(n) * std::size_t(n);
  for (int i = 0; i < n; ++i)
    cblas_dgemm(CblasRowMajor, t, CblasNoTrans, n, n, n, 1.0, a, n, src + std::size_t(i) * slab, n, 0.0,
                dst + std::size_t(i) * slab, n);
}
// Mode 2: dst (n^2 x n) = src op(A)^T.
void mode2(CBLAS_TRANSPOSE t, int n, const double* a, const double* src, double* dst) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, t == CblasTrans ? CblasNoTrans : CblasTrans, n * n, n, n, 1.0, src, n, a, n,
              0.0, dst, n);
}

} // namespace

void gemm_solve_transforms(std::size_t n, const double* a, const double* x, double* tmp, double* y) {
  const int in = int(n);
  mode0(CblasTrans, in, a, x, tmp);
  mode1(CblasTrans, in, a, tmp, y);
  mode2(CblasTrans, in, a, y, tmp);
  mode0(CblasNoTrans, in, a, tmp, y);
  mode1(CblasNoTrans, in, a, y, tmp);
  mode2(CblasNoTrans, in, a, tmp, y);
}

void blas_single_thread() {
#ifdef OPENBLAS_VERSION
  openblas_set_num_threads(1);
#endif
}

const char* blas_name() {
#ifdef OPENBLAS_VERSION
  static const std::string name = [] {  // OPENBLAS_VERSION is " OpenBLAS 0.3.21 ": trimmed
    const std::string v = OPENBLAS_VERSION;
    const auto b = v.find_first_not_of(' '), e = v.find_last_not_of(' ');
    return b == std::string::npos ? std::string("OpenBLAS") : v.substr(b, e - b + 1);
  }();
  return name.c_str();
#else
  return "CBLAS";
#endif
}

} // namespace kronex_bench
