// MUST NOT COMPILE: a std::vector is not a factor (kronex::diagonal(v) is).
#include <vector>

#include <kronex/kronex.hpp>

int main() {
  auto M = kronex::gallery::bspline_mass<double>(4, 2);
  std::vector<double> d{1.0, 2.0, 3.0, 4.0};
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  auto K = kronex::kron(M, d);
#else
  auto K = kronex::kron(M, kronex::diagonal(d));
#endif
  return K.rank == 2 ? 0 : 1;
}
