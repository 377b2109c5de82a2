// MUST NOT COMPILE: factors of different value types in one kron().
#include <kronex/kronex.hpp>

int main() {
  auto Md = kronex::gallery::bspline_mass<double>(6, 2);
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  auto Mf = kronex::gallery::bspline_mass<float>(6, 2);
#else
  auto Mf = kronex::gallery::bspline_mass<double>(6, 2);
#endif
  auto K = kronex::kron(Md, Mf);
  return K.rank == 2 ? 0 : 1;
}
