// MUST NOT COMPILE: a NAMED lazy result as the operand of another expression without std::move
// (it would be evaluated through a const reference, i.e. possibly a second time).
#include <utility>

#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(6, 2);
  xt::xtensor<double, 2> b = xt::ones<double>({6, 6});
  auto r = kronex::kron(M, M).solve(b);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  xt::xtensor<double, 2> x = kronex::kron(M, M).apply(r);
#else
  xt::xtensor<double, 2> x = kronex::kron(M, M).apply(std::move(r));
#endif
  return x(0, 0) > 0 ? 0 : 1;
}
