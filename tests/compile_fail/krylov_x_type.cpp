// MUST NOT COMPILE: a Krylov solve into a const x. x is the initial guess in and the solution
// out, so it must be a writable xt::xtensor (or a distributed_tensor with kronex/mpi.hpp); kronex
// says which tensors it takes instead of reporting that no overload matches.
#include <kronex/kronex.hpp>

int main() {
  const auto A = kronex::sparse_operator<double>::from_entries({2}, {{0, 0, 2.0}, {1, 1, 4.0}});
  const xt::xtensor<double, 1> b = {2.0, 4.0};
  xt::xtensor<double, 1> x = xt::zeros<double>({2});
  const xt::xtensor<double, 1>& fixed = x;
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  kronex::cg(A, b, fixed);
#else
  // The accepted form: a writable x.
  (void)fixed;
  kronex::cg(A, b, x);
#endif
  return x(0) == 1.0 ? 0 : 1;
}
