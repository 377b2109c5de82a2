// Compiled by clang (syntax and template instantiation only, `-fsyntax-only`): kronex's headers
// must build with clang as well as GCC, and GCC-only builtins in the host kernels break that
// only when a solve instantiates them. This instantiates host solves and applies of every value
// type on every mode (the last mode runs the register transposes), in one, two and three
// dimensions.
#include <complex>

#include <kronex/kronex.hpp>

template <class T>
void host_solves() {
  const auto M = kronex::gallery::bspline_mass<T>(9, 3);
  const auto P = kronex::gallery::bspline_mass<T>(9, 3, kronex::boundary::periodic);
  xt::xtensor<T, 1> b1 = xt::ones<T>({9});
  xt::xtensor<T, 2> b2 = xt::ones<T>({9, 9});
  xt::xtensor<T, 3> b3 = xt::ones<T>({9, 9, 9});
  xt::xtensor<T, 1> x1 = kronex::kron(M).solve(b1);
  xt::xtensor<T, 2> x2 = kronex::kron(M, P).solve(b2);
  xt::xtensor<T, 3> x3 = kronex::kron(P, M, P).solve(b3);
  xt::xtensor<T, 3> y3 = kronex::kron(M, P, M).adjoint().inverse().solve(b3);
  xt::xtensor<T, 3> z3 = kronex::kron(M, M, P).inverse().solve(b3);  // an apply: inverse of inverse
}

int main() {
  host_solves<float>();
  host_solves<double>();
  host_solves<std::complex<float>>();
  host_solves<std::complex<double>>();
}
