// MUST NOT COMPILE: solve() on a sparse_operator. An assembled matrix (or a matrix_free
// operator) has no Kronecker structure to factor; kronex says to use a Krylov solver instead.
#include <kronex/kronex.hpp>

int main() {
  const auto A = kronex::sparse_operator<double>::from_entries({2}, {{0, 0, 2.0}, {1, 1, 4.0}});
  const xt::xtensor<double, 1> b = {2.0, 4.0};
  xt::xtensor<double, 1> x = xt::zeros<double>({2});
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  A.solve(b);
#else
  // The accepted form: a Krylov solve.
  kronex::cg(A, b, x);
#endif
  return x(0) == 1.0 ? 0 : 1;
}
