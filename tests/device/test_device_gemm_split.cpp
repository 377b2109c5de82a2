// Device GEMMs too large for one BLAS call (cuBLAS takes int sizes) are split into calls that
// each stay in range (backends/device/gemm_split.hpp). Tested here with a small artificial limit
// on small tensors, against the dense reference:
//  - every way a mode splits: the lines of the last mode, the slabs of a middle mode, and packed
//    blocks of the first mode and of a middle mode whose lines after it exceed the limit, each
//    with an uneven last call; N, T and H solves and applies; out of place and in place; all
//    make no host<->device transfer;
//  - the plan prints the calls ("gemm x9 packed") and counts the packing's scratch;
//  - a factor larger than one call is refused in the check phase;
//  - at the real limit (INT_MAX), explained only: a 2^32-value tensor splits exactly where the
//    int range ends, and 2048^3 in double needs one tensor-sized buffer beside its operand.
// Built against the CPU device and against CUDA.
#define BOOST_TEST_MODULE test_device_gemm_split
#include <boost/test/unit_test.hpp>

#include <array>
#include <climits>
#include <complex>
#include <cstddef>
#include <string>
#include <tuple>
#include <vector>

#include <kronex/backends/reference/reference.hpp>

#include "kronex_device_test_support.hpp"

namespace {

using kronex::boundary;
using kronex_test::band;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::rel_error;
using value_types = std::tuple<double, std::complex<double>>;

// The test's BLAS limit: every size argument of every call at most 7. With the shape
// (3, 4, 3, 5) the four modes split as
//   mode 0: L=1,  n=3, R=60  packed: 7 columns per call, 9 calls (the last of 4)
//   mode 1: L=3,  n=4, R=15  packed: 3 slabs x 3 blocks (7, 7, 1)
//   mode 2: L=12, n=3, R=5   strided-batched: 2 calls (7 slabs, then 5)
//   mode 3: L=36, n=5, R=1   lines: 6 calls (7 lines x 5, then 1)
constexpr std::size_t limit = 7;
const kronex::shape_t shape{3, 4, 3, 5};
const std::vector<std::string> methods{"gemm x9 packed", "gemm x9 packed", "gemm_strided_batched x2", "gemm x6"};

template <class T>
auto operator_of_four() {
  return kronex::kron(random_dense_matrix<T>(3, true), band<T>(4, 1, 1, boundary::periodic),
                      band<T>(3, 1, 1, boundary::clamped), random_dense_matrix<T>(5, true));
}

// Solve and apply with K, split, against the reference: out of place and in place, no transfer.
template <class T, class K>
void check_split(const K& K0, const xt::xtensor<T, 4>& b, const std::string& name) {
  kronex::device_tensor<T, 4> bd(b);
  for (const bool inverse : {true, false}) {
    const auto d = inverse ? K0.inverse().template describe<T>() : K0.template describe<T>();
    const xt::xtensor<T, 4> ref = inverse ? kronex::reference::solve(K0, b) : kronex::reference::apply(K0, b);
    const std::string what = name + (inverse ? " solve" : " apply");

    kronex::detail::device_plan<T> plan(d, kronex::detail::plan_device(d, shape, limit));
    const auto& steps = plan.description().steps;
    BOOST_TEST_REQUIRE(steps.size() == methods.size());
    for (std::size_t s = 0; s < steps.size(); ++s)
      BOOST_TEST(kronex::step_method(steps[s]) == methods[s], what << " step " << s);

    kronex::device_tensor<T, 4> xd(bd.shape());
    kronex::device_tensor<T, 4> inplace(b);
    {
      kronex::no_transfer_guard guard;
      plan.run(bd.data(), xd.data());
      plan.run(inplace.data(), inplace.data());
    }
    BOOST_TEST(rel_error(xd.to_host(), ref) <= 1e-12, what << " out of place");
    BOOST_TEST(rel_error(inplace.to_host(), ref) <= 1e-12, what << " in place");
    BOOST_TEST(rel_error(bd.to_host(), b) == 0.0, what << ": the input changed");
  }
}

} // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(split_gemms_match_the_reference, T, value_types) {
  const auto K = operator_of_four<T>();
  const xt::xtensor<T, 4> b = random_tensor<T, 4>({3, 4, 3, 5});
  check_split<T>(K, b, "N");
  check_split<T>(K.transpose(), b, "T");
  check_split<T>(K.adjoint(), b, "H");
}

BOOST_AUTO_TEST_CASE(split_plan_counts_its_scratch_and_bytes) {
  using T = double;
  const auto K = operator_of_four<T>();  // the description views its factors: K must outlive it
  const auto d = K.inverse().template describe<T>();
  const auto split = kronex::detail::plan_device(d, shape, limit).desc;
  const auto whole = kronex::detail::plan_device(d, shape).desc;
  const std::size_t size = 3 * 4 * 3 * 5;
  // One ping-pong buffer, and the largest packed block with its product: 2 x 4 x 7 values.
  BOOST_TEST(whole.workspace_bytes == size * sizeof(T));
  BOOST_TEST(split.workspace_bytes == (size + 2 * 4 * 7) * sizeof(T));
  // Packing reads and writes the tensor once more each way; the other splits move nothing more.
  BOOST_TEST(split.steps.size() == whole.steps.size());
  for (std::size_t s = 0; s < split.steps.size(); ++s) {
    const double extra = s < 2 ? 4.0 * size * sizeof(T) : 0.0;
    BOOST_TEST(kronex::step_info(split.steps[s]).bytes == kronex::step_info(whole.steps[s]).bytes + extra);
    BOOST_TEST(kronex::step_info(split.steps[s]).flops == kronex::step_info(whole.steps[s]).flops);
  }
  // Unsplit, each mode is one call.
  for (std::size_t s = 0; s < whole.steps.size(); ++s)
    BOOST_TEST(kronex::step_method(whole.steps[s]) == (s == 1 || s == 2 ? "gemm_strided_batched" : "gemm"));
}

BOOST_AUTO_TEST_CASE(factor_larger_than_one_call_is_refused) {
  using T = double;
  const auto K = kronex::kron(random_dense_matrix<T>(8, true), random_dense_matrix<T>(3, true));
  const auto d = K.inverse().template describe<T>();
  const std::string msg = kronex_test::expect_error<kronex::size_limit_exceeded>(
      [&] { kronex::detail::plan_device(d, kronex::shape_t{8, 3}, limit); },
      {"mode 0", "n = 8", "more than one BLAS call takes (7)"});
  BOOST_TEST_MESSAGE(msg);
}

BOOST_AUTO_TEST_CASE(real_limit_splits_where_the_int_range_ends) {
  using T = double;
  // (2, 32768, 32768, 2): 2^32 values (32 GiB). Mode 0 has 2^31 lines after it (one more than
  // INT_MAX): packed blocks of 2^26 columns (2^27 values), 32 calls. Mode 3 has 2^31 lines:
  // INT_MAX lines, then 1. Explained only: nothing is allocated.
  const auto M = kronex::gallery::bspline_mass<T>(32768, 3);
  const auto K = kronex::kron(random_dense_matrix<T>(2, false), M, M, random_dense_matrix<T>(2, false));
  const kronex::device_shape<T, 4> big{{2, 32768, 32768, 2}};
  const kronex::plan_description p = kronex::explain_plan(K.inverse(), big);
  BOOST_TEST_REQUIRE(p.steps.size() == 4u);
  BOOST_TEST(kronex::step_method(p.steps[0]) == "gemm x32 packed");
  BOOST_TEST(kronex::step_method(p.steps[1]) == "gemm_strided_batched");
  BOOST_TEST(kronex::step_method(p.steps[2]) == "gemm_strided_batched");
  BOOST_TEST(kronex::step_method(p.steps[3]) == "gemm x2");
  const auto& last = std::get<kronex::gemm_step>(p.steps[3]);
  BOOST_TEST(last.per_call == std::size_t(INT_MAX));
  const std::size_t size = std::size_t(1) << 32;
  BOOST_TEST(p.workspace_bytes == (size + 2 * 2 * (std::size_t(1) << 26)) * sizeof(T));

  // 2048^3 in double (64 GiB): one GEMM per mode, one tensor-sized buffer, so an in-place solve
  // needs 128 GiB with its operand (an H200 has 141 GB).
  const auto M2 = kronex::gallery::bspline_mass<T>(2048, 3);
  const kronex::device_shape<T, 3> cube{{2048, 2048, 2048}};
  const kronex::plan_description c = kronex::explain_plan(kronex::kron(M2, M2, M2).inverse(), cube);
  BOOST_TEST(c.workspace_bytes == (std::size_t(1) << 33) * sizeof(T));
  for (const auto& s : c.steps) BOOST_TEST(kronex::step_method(s).find(" x") == std::string::npos);
}
