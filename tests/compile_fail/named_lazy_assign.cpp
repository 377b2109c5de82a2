// MUST NOT COMPILE: initialising a tensor from a NAMED lazy result (it converts only as an
// rvalue); kronex's static_assert explains why.
#include <utility>

#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(6, 2);
  xt::xtensor<double, 2> b = xt::ones<double>({6, 6});
  auto r = kronex::kron(M, M).solve(b);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  xt::xtensor<double, 2> x = r;
#else
  xt::xtensor<double, 2> x = std::move(r);
#endif
  return x(0, 0) > 0 ? 0 : 1;
}
