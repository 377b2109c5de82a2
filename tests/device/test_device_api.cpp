// The device layer's public boundary: kronex::device_buffer (device memory owned through the
// compiled runtime) and kronex::device (system_name, available, synchronize, copy, timer):
//  - a buffer has its size and a distinct pointer; moving leaves the source empty (a double free
//    or a leak shows under ASan); an empty buffer holds no memory;
//  - a size whose bytes overflow std::size_t is a device_error naming the count, not a small
//    allocation;
//  - kronex::device::copy copies exactly the bytes asked for, device to device, with no counted
//    transfer; device_tensor's copy constructor gives independent storage;
//  - the timer measures the work between start and stop (non-negative, finite) and is reusable;
//  - kronex/device.hpp includes no Thrust (compile-time check).
// Built against the CPU device and against CUDA.
#define BOOST_TEST_MODULE test_device_api
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <complex>
#include <cstddef>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xadapt.hpp>

#include "kronex_device_test_support.hpp"

// The boundary itself: no public kronex header may pull in Thrust.
#ifdef THRUST_VERSION
#error "a kronex header included Thrust: Thrust must stay inside the device runtimes (src/device/)"
#endif

namespace {

using kronex_test::expect_error;

std::vector<double> ramp(std::size_t n, double start) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = start + double(i);
  return v;
}

// Uploads and downloads through a device_view, the way an application's own buffers are used.
void upload(double* device, const std::vector<double>& host) {
  kronex::device_view<double, 1> v(device, {host.size()});
  kronex::device_tensor<double, 1> staged(xt::adapt(host, {host.size()}));
  kronex::device::copy(v.data(), staged.data(), host.size() * sizeof(double));
  kronex::device::synchronize();
}
std::vector<double> download(const double* device, std::size_t n) {
  kronex::device_tensor<double, 1> t({n});
  kronex::device::copy(t.data(), device, n * sizeof(double));
  kronex::device::synchronize();
  std::vector<double> h(n);
  t.copy_to_host(h.data());
  return h;
}

} // namespace

BOOST_AUTO_TEST_CASE(system_is_named_and_available) {
  const std::string name = kronex::device::system_name();
  BOOST_TEST((name == "cuda" || name == "omp" || name == "cpp"));
  BOOST_TEST(kronex::device::available());
}

BOOST_AUTO_TEST_CASE(buffer_owns_and_moves) {
  kronex::device_buffer<double> a(100);
  BOOST_TEST(a.size() == 100u);
  BOOST_TEST(a.bytes() == 800u);
  BOOST_TEST(a.data() != nullptr);
  kronex::device_buffer<double> b(7);
  BOOST_TEST(b.data() != a.data());

  double* p = a.data();
  kronex::device_buffer<double> c(std::move(a));
  BOOST_TEST(c.data() == p);
  BOOST_TEST(c.size() == 100u);
  BOOST_TEST(a.data() == nullptr);
  BOOST_TEST(a.empty());

  b = std::move(c);  // b's old memory is freed, c's moves over
  BOOST_TEST(b.data() == p);
  BOOST_TEST(b.size() == 100u);
  BOOST_TEST(c.empty());

  const kronex::device_buffer<float> none(0);
  BOOST_TEST(none.data() == nullptr);
  BOOST_TEST(kronex::device_buffer<float>().empty());
}

BOOST_AUTO_TEST_CASE(buffer_size_overflow_is_a_device_error) {
  const std::size_t n = std::numeric_limits<std::size_t>::max() / 8;
  expect_error<kronex::device_error>([&] { kronex::device_buffer<std::complex<double>> b(n); },
                                     {"device allocation of " + std::to_string(n) + " values of 16 bytes", "overflows"});
}

BOOST_AUTO_TEST_CASE(copy_moves_exactly_the_bytes_asked) {
  const std::size_t n = 1000;
  kronex::device_buffer<double> src(n), dst(n);
  upload(src.data(), ramp(n, 1.0));
  upload(dst.data(), std::vector<double>(n, -1.0));
  const auto before = kronex::transfers();
  kronex::device::copy(dst.data(), src.data(), 600 * sizeof(double));
  kronex::device::synchronize();
  BOOST_TEST((kronex::transfers() - before).calls() == 0u);
  const auto h = download(dst.data(), n);
  for (std::size_t i = 0; i < n; ++i) BOOST_TEST_REQUIRE(h[i] == (i < 600 ? 1.0 + double(i) : -1.0), "at " << i);
}

BOOST_AUTO_TEST_CASE(tensor_copies_have_their_own_buffer) {
  const auto v = ramp(24, 0.5);
  kronex::device_tensor<double, 2> a(xt::adapt(v, {std::size_t(4), std::size_t(6)}));
  kronex::device_tensor<double, 2> b(a);
  BOOST_TEST(b.data() != a.data());
  BOOST_TEST(b.storage().size() == 24u);
  upload(a.data(), std::vector<double>(24, 0.0));
  const auto hb = b.to_host();
  for (std::size_t i = 0; i < v.size(); ++i) BOOST_TEST(hb.data()[i] == v[i]);

  kronex::device_tensor<double, 2> c(std::move(b));
  BOOST_TEST(b.size() == 0u);
  BOOST_TEST(b.data() == nullptr);
  BOOST_TEST(c.size() == 24u);
}

BOOST_AUTO_TEST_CASE(timer_measures_and_is_reusable) {
  const std::size_t n = std::size_t(1) << 16;
  kronex::device_buffer<double> a(n), b(n);
  kronex::device::timer t;
  for (int r = 0; r < 2; ++r) {
    t.start();
    kronex::device::copy(b.data(), a.data(), n * sizeof(double));
    t.stop();
    const double s = t.seconds();
    BOOST_TEST(std::isfinite(s));
    BOOST_TEST(s >= 0.0);
  }
}
