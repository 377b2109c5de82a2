#pragma once
// The GEMM reference of bench_sum_solve: the mode-wise products of fast diagonalisation done by
// plain CBLAS calls. Its own translation unit because <cblas.h> and kronex's headers declare
// the CBLAS names differently (kronex's pull in xtensor-blas, whose xflens has its own cblas.h).
#include <cstddef>

namespace kronex_bench {

// y = (A ⊗ A ⊗ A)(A^T ⊗ A^T ⊗ A^T) x on C-order n^3 tensors, A an n x n C-order matrix: the six
// products of one solve, alternating between y and tmp (no copies). x may not alias y or tmp.
void gemm_solve_transforms(std::size_t n, const double* a, const double* x, double* tmp, double* y);

// One thread for the BLAS (OpenBLAS; a no-op with another BLAS), and the BLAS's name.
void blas_single_thread();
const char* blas_name();

} // namespace kronex_bench
