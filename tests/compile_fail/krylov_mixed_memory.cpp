// MUST NOT COMPILE: a Krylov solve with b on the device and x on the host. The solve runs where
// its vectors are; kronex says both must be host tensors or both device tensors.
#include <kronex/device.hpp>

int main() {
  const auto A = kronex::sparse_operator<double>::from_entries({2}, {{0, 0, 2.0}, {1, 1, 4.0}});
  const xt::xtensor<double, 1> b = {2.0, 4.0};
  const kronex::device_tensor<double, 1> bd(b);
  xt::xtensor<double, 1> x = xt::zeros<double>({2});
#ifndef KRONEX_COMPILE_FAIL_CONTROL
  kronex::cg(A, bd, x);
#else
  // The accepted form: both on the device.
  kronex::device_tensor<double, 1> xd(x);
  kronex::cg(A, bd, xd);
#endif
  return x(0) == 1.0 ? 0 : 1;
}
