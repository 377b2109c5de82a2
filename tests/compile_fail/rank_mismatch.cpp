// MUST NOT COMPILE: a rank-2 xtensor as the operand of a 3-factor operator (ranks known statically).
#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(4, 2);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  xt::xtensor<double, 2> b = xt::zeros<double>({4, 4});
#else
  xt::xtensor<double, 3> b = xt::zeros<double>({4, 4, 4});
#endif
  auto x = kronex::kron(M, M, M).solve(b).eval();
  return int(x.size() == 0);
}
