// MUST NOT COMPILE: evaluating a named lazy result with lvalue .eval() (here: twice). Doing so
// would factor twice and could read operands that changed in between; kronex rejects it with a
// static_assert that says what to do instead.
#include <utility>

#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(6, 2);
  xt::xtensor<double, 2> b = xt::ones<double>({6, 6});
  auto r = kronex::kron(M, M).solve(b);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  xt::xtensor<double, 2> x1 = r.eval();
  xt::xtensor<double, 2> x2 = r.eval();
#else
  // The accepted forms: evaluate the named result once as an rvalue; a fresh one for the second.
  xt::xtensor<double, 2> x1 = std::move(r).eval();
  xt::xtensor<double, 2> x2 = kronex::kron(M, M).solve(b);
#endif
  return x1(0, 0) == x2(0, 0) ? 0 : 1;
}
