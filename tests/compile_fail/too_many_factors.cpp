// MUST NOT COMPILE: kron() takes at most 6 factors.
#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(3, 1);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  auto K = kronex::kron(M, M, M, M, M, M, M);
#else
  auto K = kronex::kron(M, M, M, M, M, M);
#endif
  return K.rank > 0 ? 0 : 1;
}
