// Solves a small 3D Kronecker system through the installed headers and checks it with apply.
#include <cmath>
#include <iostream>

#include <kronex/kronex.hpp>

int main() {
  auto A = kronex::gallery::bspline_mass<double>(12, 3);
  auto B = kronex::gallery::bspline_mass<double>(10, 2, kronex::boundary::periodic);
  auto C = kronex::gallery::laplacian<double>(9);
  xt::xtensor<double, 3> b = xt::xtensor<double, 3>::from_shape({12, 10, 9});
  for (std::size_t i = 0; i < b.size(); ++i) b.data()[i] = std::sin(double(i));
  xt::xtensor<double, 3> x = kronex::kron(A, B, C).solve(b);
  xt::xtensor<double, 3> r = kronex::kron(A, B, C).apply(x);
  double err = 0;
  for (std::size_t i = 0; i < b.size(); ++i) err = std::max(err, std::abs(r.data()[i] - b.data()[i]));
  std::cout << "consumer: max|K x - b| = " << err << "\n";
  return err < 1e-10 ? 0 : 1;
}
