// The device backend in a .cu file compiled by nvcc, through the installed package
// (kronex::device_cuda): <kronex/device.hpp> next to the application's own kernel and its own
// Thrust (the CUDA toolkit's), which kronex neither sees nor constrains. The right-hand side lives
// in a thrust::device_vector, filled by a kernel, and reaches kronex as a device_view over its
// raw pointer; the solve must match the host solve and make no transfer.
#include <array>
#include <cmath>
#include <iostream>

#include <kronex/device.hpp>

// The boundary itself: no public kronex header may pull in Thrust.
#ifdef THRUST_VERSION
#error "a kronex header included Thrust: Thrust must stay inside the device runtimes (src/device/)"
#endif

#include <thrust/device_vector.h>

__global__ void fill_sin(double* x, std::size_t n) {
  const std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) x[i] = sin(double(i));
}

int main() {
  if (!kronex::device::available()) {
    std::cout << "nvcc device consumer: no GPU visible: skipped\n";
    return 77;
  }
  const std::array<std::size_t, 2> shape{12, 10};
  const std::size_t n = shape[0] * shape[1];
  auto A = kronex::gallery::bspline_mass<double>(shape[0], 3);
  auto B = kronex::gallery::bspline_mass<double>(shape[1], 2, kronex::boundary::periodic);

  thrust::device_vector<double> b(n);
  fill_sin<<<unsigned((n + 127) / 128), 128>>>(thrust::raw_pointer_cast(b.data()), n);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  const kronex::device_view<const double, 2> bv(thrust::raw_pointer_cast(b.data()), shape);

  xt::xtensor<double, 2> bh = xt::xtensor<double, 2>::from_shape({shape[0], shape[1]});
  for (std::size_t i = 0; i < n; ++i) bh.data()[i] = std::sin(double(i));
  const xt::xtensor<double, 2> host = kronex::kron(A, B).solve(bh);

  auto solver = kronex::compile(kronex::kron(A, B).inverse(), bv);
  kronex::device_tensor<double, 2> xd(shape);
  const auto before = kronex::transfers();
  {
    kronex::no_transfer_guard guard;
    solver(bv, xd);
  }
  const auto during = kronex::transfers() - before;
  const xt::xtensor<double, 2> x = xd.to_host();
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    err = std::max(err, std::abs(x.data()[i] - host.data()[i]));
    scale = std::max(scale, std::abs(host.data()[i]));
  }
  std::cout << "nvcc device consumer (" << kronex::device::system_name() << "): relative difference to host "
            << err / scale << ", transfers during solve " << during.calls() << "\n";
  return err <= 1e-12 * scale && during.calls() == 0 ? 0 : 1;
}
