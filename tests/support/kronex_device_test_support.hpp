#pragma once
// Device tests: the same sources run against the CPU device (CI) and CUDA (a GPU machine). A
// CUDA build on a machine without a GPU exits 77 before any test runs, which ctest reports as
// skipped (SKIP_RETURN_CODE 77), never as passed.
#include <cstdlib>
#include <iostream>

#include <boost/test/unit_test.hpp>

#include <kronex/device.hpp>

#include "kronex_test_support.hpp"

namespace kronex_test {

struct require_device {
  require_device() {
    if (!kronex::device::available()) {
      std::cout << "kronex device tests: no " << kronex::device::system_name()
                << " device visible to this process: skipped (exit 77)" << std::endl;
      std::exit(77);
    }
    std::cout << "kronex device tests on the " << kronex::device::system_name() << " device system"
              << std::endl;
  }
};

} // namespace kronex_test

using kronex_test::require_device;
BOOST_TEST_GLOBAL_FIXTURE(require_device);
