// The device backend through the installed package, compiled by the C++ compiler with no Thrust
// or CUDA flags: kronex::device_cpu (target device_consumer) or device_cuda (device_consumer_cuda), a
// device_tensor round trip and a solve with no transfer, checked against the host solve.
#include <cmath>
#include <iostream>

#include <kronex/device.hpp>

// The boundary itself: no public kronex header may pull in Thrust.
#ifdef THRUST_VERSION
#error "a kronex header included Thrust: Thrust must stay inside the device runtimes (src/device/)"
#endif

int main() {
  if (!kronex::device::available()) {
    std::cout << "device consumer: no device visible: skipped\n";
    return 77;
  }
  auto A = kronex::gallery::bspline_mass<double>(12, 3);
  auto B = kronex::gallery::bspline_mass<double>(10, 2, kronex::boundary::periodic);
  xt::xtensor<double, 2> b = xt::xtensor<double, 2>::from_shape({12, 10});
  for (std::size_t i = 0; i < b.size(); ++i) b.data()[i] = std::sin(double(i));
  const xt::xtensor<double, 2> host = kronex::kron(A, B).solve(b);
  kronex::device_tensor<double, 2> bd(b);
  auto solver = kronex::compile(kronex::kron(A, B).inverse(), bd);
  kronex::device_tensor<double, 2> xd(bd.shape());
  const auto before = kronex::transfers();
  {
    kronex::no_transfer_guard guard;
    solver(bd, xd);
  }
  const auto during = kronex::transfers() - before;
  const xt::xtensor<double, 2> x = xd.to_host();
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    err = std::max(err, std::abs(x.data()[i] - host.data()[i]));
    scale = std::max(scale, std::abs(host.data()[i]));
  }
  std::cout << solver << "device consumer: relative difference to host " << err / scale << ", transfers during solve "
            << during.calls() << "\n";
  return err <= 1e-12 * scale && during.calls() == 0 ? 0 : 1;
}
