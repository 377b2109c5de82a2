// MUST NOT COMPILE: banded<T> is for float, double and their complex types only.
#include <kronex/kronex.hpp>

int main() {
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  kronex::banded<int> A(4, 1, 1);
#else
  kronex::banded<double> A(4, 1, 1);
#endif
  return A.size() == 4 ? 0 : 1;
}
