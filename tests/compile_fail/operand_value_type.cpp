// MUST NOT COMPILE: a float operand for double factors (no silent conversion).
#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(6, 2);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  xt::xtensor<float, 2> b = xt::ones<float>({6, 6});
#else
  xt::xtensor<double, 2> b = xt::ones<double>({6, 6});
#endif
  auto x = kronex::kron(M, M).solve(b).eval();
  return x(0, 0) > 0 ? 0 : 1;
}
