// Host<->device transfers of the device backend, and its errors:
//  - counting: the device_tensor upload constructor, to_host(), copy_from_host/copy_to_host are
//    exactly one counted copy each of size*sizeof(T) bytes; device copies and solves make none;
//    compile() uploads exactly one matrix per banded/dense factor and one vector per diagonal
//    factor, and the plan's setup_transfers/setup_transfer_bytes are what the counter measured;
//    operators compiled with one factor_store upload each (factor, op) matrix once;
//  - the guard: inside a kronex::no_transfer_guard scope every explicit copy throws
//    kronex::transfer_error naming its direction, copies nothing and counts nothing; guards
//    nest; they are per thread;
//  - stage_through_host: a function_solver factor (no entries to densify) runs on the host,
//    with exactly one download and one upload of the tensor per run, as the plan says, and the
//    guard refuses it (the proof that the guard fires when a plan must transfer);
//  - errors: type and the numbers in the message (shapes, mode, info, strides);
//  - the printed device plan (golden text, on the omp device system only);
//  - runs: a compiled operator's runs make no transfer, for N, T, C and R solves and applies of
//    every factor kind, all four value types; lazy forms, nested lazy results, non-owning views,
//    raw pointers, in place, the allocating form, one-step plans in place (against the host
//    result); the user story of the device backend, with its exact transfer counts and plan.
// Results against the dense reference for every factor kind, operator and value type are in the
// conformance suite (tests/conformance), built for the device too.
// Only the public API is used: this file is built against the CPU device and against CUDA.
#define BOOST_TEST_MODULE test_device_transfers
#include <boost/test/unit_test.hpp>

#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <typeinfo>
#include <vector>

#include <xtensor/xarray.hpp>

#include "kronex_device_test_support.hpp"

namespace {

using kronex::boundary;
using kronex_test::random_band_matrix;
using kronex_test::random_dense_matrix;
using kronex_test::random_tensor;
using kronex_test::rel_error;
using kronex_test::to_banded;
using value_types = std::tuple<double, std::complex<double>>;

using kronex_test::expect_error;

// The counter's movement while f runs.
template <class F>
kronex::transfer_counts measure(F&& f) {
  const auto before = kronex::transfers();
  f();
  return kronex::transfers() - before;
}

void check_counts(const kronex::transfer_counts& c, std::size_t uploads, std::size_t upload_bytes,
                  std::size_t downloads, std::size_t download_bytes) {
  BOOST_TEST(c.uploads == uploads);
  BOOST_TEST(c.upload_bytes == upload_bytes);
  BOOST_TEST(c.downloads == downloads);
  BOOST_TEST(c.download_bytes == download_bytes);
}

using kronex_test::band;

using kronex_test::random_diagonal;

// A function_solver whose function solves with a known banded matrix B, by a compiled 1D host
// solve run line by line. `calls` counts the function's calls and `lines` the vectors it solved.
template <class T>
struct wrapped_solver {
  std::shared_ptr<std::size_t> calls = std::make_shared<std::size_t>(0);
  std::shared_ptr<std::size_t> lines = std::make_shared<std::size_t>(0);
  kronex::function_solver<T> solver;

  explicit wrapped_solver(const kronex::banded<T>& B)
      : solver(B.size(), [n = B.size(), calls = calls, lines = lines,
                          one = std::make_shared<kronex::host_operator<T, 1>>(kronex::compile(
                              kronex::kron(B).inverse(), std::array<std::size_t, 1>{B.size()}))](T* x, std::size_t count) {
          ++*calls;
          *lines += count;
          for (std::size_t c = 0; c < count; ++c) one->run(x + c * n, x + c * n);
        }) {}
};

using kronex_test::singular_tridiagonal;

} // namespace

// ---------------------------------------------------------------------------------------------
// Counting.

BOOST_AUTO_TEST_CASE_TEMPLATE(explicit_copies_are_counted_exactly, T, value_types) {
  const std::array<std::size_t, 3> shape{4, 5, 3};
  const std::size_t bytes = 60 * sizeof(T);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>(shape);

  std::unique_ptr<kronex::device_tensor<T, 3>> bd;
  check_counts(measure([&] { bd = std::make_unique<kronex::device_tensor<T, 3>>(b); }), 1, bytes, 0, 0);

  xt::xtensor<T, 3> back;
  check_counts(measure([&] { back = bd->to_host(); }), 0, 0, 1, bytes);
  BOOST_TEST(rel_error(back, b) == 0.0);
  BOOST_TEST((back.shape() == b.shape()));

  // Copies, moves and assignments stay on the device.
  std::unique_ptr<kronex::device_tensor<T, 3>> copy, moved;
  check_counts(measure([&] {
                 copy = std::make_unique<kronex::device_tensor<T, 3>>(*bd);
                 kronex::device_tensor<T, 3> other(shape);
                 other = *bd;
                 moved = std::make_unique<kronex::device_tensor<T, 3>>(std::move(other));
               }),
               0, 0, 0, 0);
  BOOST_TEST(rel_error(copy->to_host(), b) == 0.0);
  BOOST_TEST(rel_error(moved->to_host(), b) == 0.0);

  // The raw forms.
  std::vector<T> host(60, T(7));
  check_counts(measure([&] { bd->copy_to_host(host.data()); }), 0, 0, 1, bytes);
  BOOST_TEST(rel_error(host, b) == 0.0);
  const xt::xtensor<T, 3> c = random_tensor<T, 3>(shape);
  check_counts(measure([&] { bd->copy_from_host(c.data()); }), 1, bytes, 0, 0);
  BOOST_TEST(rel_error(bd->to_host(), c) == 0.0);
  // The copy made earlier is its own storage.
  BOOST_TEST(rel_error(copy->to_host(), b) == 0.0);

  // A device solve (compiled, lazy, in place) makes no transfer.
  const auto A = band<T>(4, 1, 2, boundary::clamped, true);
  const auto P = band<T>(5, 1, 1, boundary::periodic);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(3, true);
  auto solver = kronex::compile(kronex::kron(A, P, D).inverse(), *bd);
  kronex::device_tensor<T, 3> xd(shape);
  check_counts(measure([&] {
                 solver(*bd, xd);
                 solver(xd, xd);
                 kronex::device_tensor<T, 3> alloc = solver(*copy);
               }),
               0, 0, 0, 0);
  BOOST_TEST(solver.plan().run_transfers() == 0u);
  BOOST_TEST(solver.plan().run_transfer_bytes() == 0.0);
}

BOOST_AUTO_TEST_CASE_TEMPLATE(compile_uploads_one_array_per_factor, T, value_types) {
  const auto A = band<T>(6, 2, 1, boundary::clamped, true);
  const auto P = band<T>(7, 1, 1, boundary::periodic);
  const auto Dg = random_diagonal<T>(5);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(3, true);
  const std::array<std::size_t, 5> shape{6, 4, 5, 3, 7};
  const kronex::device_tensor<T, 5> bd(random_tensor<T, 5>(shape));
  const auto K = kronex::kron(A, kronex::identity(4), Dg, D, P);
  // Matrices 6x6, 3x3, 7x7 and the 5 diagonal values; the identity uploads nothing.
  const std::size_t expected_bytes = (36 + 9 + 49 + 5) * sizeof(T);
  for (bool inverse : {true, false}) {
    BOOST_TEST_CONTEXT((inverse ? "solve" : "apply")) {
      std::unique_ptr<kronex::device_operator<T, 5>> op;
      const auto c = measure([&] {
        if (inverse) op = std::make_unique<kronex::device_operator<T, 5>>(kronex::compile(K.inverse(), bd));
        else op = std::make_unique<kronex::device_operator<T, 5>>(kronex::compile(K, bd));
      });
      check_counts(c, 4, expected_bytes, 0, 0);
      BOOST_TEST(op->plan().setup_transfers == c.calls());
      BOOST_TEST(op->plan().setup_transfer_bytes == c.bytes());
      BOOST_TEST(op->plan().factor_bytes == expected_bytes);
      BOOST_TEST(op->plan().run_transfers() == 0u);
    }
  }
  // Identities only: a copy step, nothing uploaded.
  std::unique_ptr<kronex::device_operator<T, 2>> id;
  const kronex::device_tensor<T, 2> b2(random_tensor<T, 2>({4, 5}));
  const auto c = measure([&] {
    id = std::make_unique<kronex::device_operator<T, 2>>(
        kronex::compile(kronex::kron(kronex::identity(4), kronex::identity(5)).inverse(), b2));
  });
  check_counts(c, 0, 0, 0, 0);
  BOOST_TEST(id->plan().setup_transfers == 0u);
  BOOST_TEST(id->plan().setup_transfer_bytes == 0u);
  // A function solver uploads nothing at compile time: only the other two factors are uploaded.
  const auto B = band<T>(4, 1, 1, boundary::clamped);
  wrapped_solver<T> F(B);
  const std::array<std::size_t, 3> s3{6, 4, 5};
  const kronex::device_tensor<T, 3> b3(random_tensor<T, 3>(s3));
  std::unique_ptr<kronex::device_operator<T, 3>> staged;
  const auto cs = measure([&] {
    staged = std::make_unique<kronex::device_operator<T, 3>>(kronex::compile(kronex::kron(A, F.solver, Dg).inverse(), b3));
  });
  check_counts(cs, 2, (36 + 5) * sizeof(T), 0, 0);
  BOOST_TEST(staged->plan().setup_transfers == 2u);
  BOOST_TEST(staged->plan().setup_transfer_bytes == (36 + 5) * sizeof(T));
  BOOST_TEST(*F.calls == 0u);  // compiling does not call the function
}

// Operators compiled with one factor_store share each (factor, op, solve or apply) matrix: the
// second compile of the same solve uploads nothing but the diagonal's values, its plan counts
// no setup transfer for the shared matrices and says "shared"; a transposed solve shares the
// host LU but needs its own matrix (op(A)^{-1} differs). Results equal the unshared operator's.
BOOST_AUTO_TEST_CASE_TEMPLATE(operators_compiled_with_one_store_upload_once, T, value_types) {
  const auto A = band<T>(6, 2, 1, boundary::clamped, true);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(3, true);
  const auto Dg = random_diagonal<T>(4);
  const std::array<std::size_t, 3> shape{6, 3, 4};
  const kronex::device_tensor<T, 3> bd(random_tensor<T, 3>(shape));
  const auto K = kronex::kron(A, D, Dg);
  kronex::compile_options o;
  o.store = std::make_shared<kronex::factor_store>();
  std::unique_ptr<kronex::device_operator<T, 3>> first, second, transposed;
  const auto c1 = measure([&] { first = std::make_unique<kronex::device_operator<T, 3>>(kronex::compile(K.inverse(), bd, o)); });
  check_counts(c1, 3, (36 + 9 + 4) * sizeof(T), 0, 0);
  const auto c2 = measure([&] { second = std::make_unique<kronex::device_operator<T, 3>>(kronex::compile(K.inverse(), bd, o)); });
  check_counts(c2, 1, 4 * sizeof(T), 0, 0);
  BOOST_TEST(second->plan().setup_transfers == 1u);
  BOOST_TEST(second->plan().setup_transfer_bytes == 4 * sizeof(T));
  BOOST_TEST(second->plan().setup[0].result.find("shared") != std::string::npos);
  BOOST_TEST(second->plan().setup[1].result.find("shared") != std::string::npos);
  BOOST_TEST(first->plan().setup[0].result.find("shared") == std::string::npos);
  BOOST_TEST(second->plan().setup[0].rcond == first->plan().setup[0].rcond);
  const auto c3 = measure([&] {
    transposed = std::make_unique<kronex::device_operator<T, 3>>(kronex::compile(K.transpose().inverse(), bd, o));
  });
  check_counts(c3, 3, (36 + 9 + 4) * sizeof(T), 0, 0);
  o.store.reset();
  const auto x = kronex::compile(K.inverse(), bd)(bd).to_host();
  const auto xt_ = kronex::compile(K.transpose().inverse(), bd)(bd).to_host();
  const auto x2 = (*second)(bd).to_host(), t2 = (*transposed)(bd).to_host();
  for (std::size_t i = 0; i < x.size(); ++i) {
    BOOST_TEST(std::abs(x2.data()[i] - x.data()[i]) == 0.0);
    BOOST_TEST(std::abs(t2.data()[i] - xt_.data()[i]) == 0.0);
  }
}

// explain() runs the check and plan phases only: no upload, no allocation, no device needed, and
// the plan it prints is the compiled one (a device plan has no factorization-dependent numbers),
// except that it is not instantiated. Sizes past the device limits are refused by the check
// phase, by explain() and compile() alike, before anything is allocated.
BOOST_AUTO_TEST_CASE(explain_uploads_nothing_and_checks_limits) {
  using T = double;
  const auto A = band<T>(6, 2, 1, boundary::clamped, true);
  const auto Dg = random_diagonal<T>(5);
  const std::array<std::size_t, 3> shape{6, 4, 5};
  const kronex::device_tensor<T, 3> bd(random_tensor<T, 3>(shape));
  const auto K = kronex::kron(A, kronex::identity(4), Dg);
  kronex::plan_description explained;
  {
    kronex::no_transfer_guard guard;  // an upload would throw
    explained = kronex::explain_plan(K.inverse(), kronex::device_shape<T, 3>{shape});
  }
  const auto compiled = kronex::compile(K.inverse(), bd);
  BOOST_TEST(!explained.instantiated);
  BOOST_TEST(compiled.plan().instantiated);
  // The same text, but for the condition estimates, known only once factored.
  BOOST_TEST(kronex::to_string(explained) == kronex_test::without_rcond(kronex::to_string(compiled.plan())));
  BOOST_TEST(kronex::explain(K.inverse(), bd) == kronex_test::without_rcond(kronex::to_string(compiled.plan())));
  BOOST_TEST(compiled.plan().setup[0].rcond > 0.0);
  BOOST_TEST(explained.setup[0].rcond == -1.0);

  // A 2^36-value problem (512 GiB in double) is explained without allocating it.
  const std::size_t big = 4096;
  const auto M = kronex::gallery::bspline_mass<T>(big, 3);
  const auto huge = kronex::kron(M, M, M);
  kronex::plan_description p;
  {
    kronex::no_transfer_guard guard;
    p = kronex::explain_plan(huge.inverse(), kronex::device_shape<T, 3>{{big, big, big}});
  }
  BOOST_TEST(p.steps.size() == 3u);
  BOOST_TEST(p.workspace_bytes == big * big * big * sizeof(T));  // one buffer: planned, never allocated
  BOOST_TEST(kronex::to_string(p).find("uploaded 4096x4096 (134.218MB)") != std::string::npos, kronex::to_string(p));

  // A densified factor past device_limits::max_factor_size: refused by the check phase.
  const std::size_t n = kronex::device_limits::max_factor_size + 1;
  const auto L = kronex::gallery::laplacian<T>(n);
  for (bool compile : {false, true}) {
    const auto c = measure([&] {
      expect_error<kronex::size_limit_exceeded>(
          [&] {
            if (compile) kronex::compile(kronex::kron(L).inverse(), kronex::device_shape<T, 1>{{n}});
            else kronex::explain(kronex::kron(L).inverse(), kronex::device_shape<T, 1>{{n}});
          },
          {"mode 0", std::to_string(n), "max_factor_size", "host backend"});
    });
    check_counts(c, 0, 0, 0, 0);
  }
}

// ---------------------------------------------------------------------------------------------
// The guard.

BOOST_AUTO_TEST_CASE(guard_refuses_every_explicit_copy) {
  using T = double;
  const std::array<std::size_t, 2> shape{3, 4};
  const xt::xtensor<T, 2> b = random_tensor<T, 2>(shape);
  kronex::device_tensor<T, 2> bd(b);
  std::vector<T> host(12, T(-5));
  const xt::xtensor<T, 2> other = random_tensor<T, 2>(shape);
  const auto c = measure([&] {
    kronex::no_transfer_guard guard;
    expect_error<kronex::transfer_error>([&] { auto h = bd.to_host(); },
                                         {"device-to-host", "96 bytes", "no_transfer_guard"});
    expect_error<kronex::transfer_error>([&] { kronex::device_tensor<T, 2> up(b); },
                                         {"host-to-device", "96 bytes", "device_tensor upload"});
    expect_error<kronex::transfer_error>([&] { bd.copy_to_host(host.data()); },
                                         {"device-to-host", "device_tensor download"});
    expect_error<kronex::transfer_error>([&] { bd.copy_from_host(other.data()); },
                                         {"host-to-device", "device_tensor upload"});
    // What is not a transfer is still allowed.
    kronex::device_tensor<T, 2> copy(bd);
    kronex::device_tensor<T, 2> fresh(shape);
    fresh = copy;
  });
  check_counts(c, 0, 0, 0, 0);
  // Nothing was copied: the host buffer and the device tensor are unchanged.
  for (T v : host) BOOST_TEST(v == T(-5));
  BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  // transfer_error is a kronex::error.
  {
    kronex::no_transfer_guard guard;
    BOOST_CHECK_THROW(bd.to_host(), kronex::error);
  }
}

BOOST_AUTO_TEST_CASE(guards_nest) {
  using T = double;
  const xt::xtensor<T, 1> b = random_tensor<T, 1>({5});
  kronex::device_tensor<T, 1> bd(b);
  auto upload = [&] { kronex::device_tensor<T, 1> up(b); };
  {
    kronex::no_transfer_guard outer;
    {
      kronex::no_transfer_guard inner;
      BOOST_CHECK_THROW(bd.to_host(), kronex::transfer_error);
    }
    // The inner guard is gone, the outer one still holds.
    BOOST_CHECK_THROW(bd.to_host(), kronex::transfer_error);
    {
      kronex::no_transfer_guard inner2;
      BOOST_CHECK_THROW(upload(), kronex::transfer_error);
    }
    BOOST_CHECK_THROW(upload(), kronex::transfer_error);
  }
  // Both gone: copies work again, and are counted.
  xt::xtensor<T, 1> h;
  check_counts(measure([&] { h = bd.to_host(); }), 0, 0, 1, 5 * sizeof(T));
  BOOST_TEST(rel_error(h, b) == 0.0);
  // A guard whose scope was left by an exception is released too.
  try {
    kronex::no_transfer_guard guard;
    auto never = bd.to_host();
  } catch (const kronex::transfer_error&) {
  }
  BOOST_CHECK_NO_THROW(bd.to_host());
}

BOOST_AUTO_TEST_CASE(guard_is_per_thread) {
  using T = std::complex<double>;
  const xt::xtensor<T, 2> b = random_tensor<T, 2>({6, 7});
  kronex::device_tensor<T, 2> bd(b);
  xt::xtensor<T, 2> from_thread;
  bool thread_failed = false;
  kronex::transfer_counts c;
  {
    kronex::no_transfer_guard guard;
    c = measure([&] {
      std::thread t([&] {
        try {
          from_thread = bd.to_host();
          kronex::device_tensor<T, 2> up(b);  // an upload too
        } catch (...) {
          thread_failed = true;
        }
      });
      t.join();
    });
    // This thread is still guarded.
    BOOST_CHECK_THROW(bd.to_host(), kronex::transfer_error);
  }
  BOOST_TEST(!thread_failed);
  BOOST_TEST(rel_error(from_thread, b) == 0.0);
  // The counter is global: the other thread's copies are counted.
  check_counts(c, 1, 42 * sizeof(T), 1, 42 * sizeof(T));
  // A guard held by another thread does not affect this one.
  bool other_guarded_threw = false;
  std::thread t([&] {
    kronex::no_transfer_guard guard;
    try {
      auto h = bd.to_host();
    } catch (const kronex::transfer_error&) {
      other_guarded_threw = true;
    }
  });
  t.join();
  BOOST_TEST(other_guarded_threw);
  BOOST_CHECK_NO_THROW(bd.to_host());
}

// ---------------------------------------------------------------------------------------------
// stage_through_host: function_solver factors.

BOOST_AUTO_TEST_CASE_TEMPLATE(stage_through_host_matches_host_and_counts, T, value_types) {
  const auto A = band<T>(6, 2, 1, boundary::clamped, true);
  const auto B = band<T>(7, 2, 2, boundary::clamped, true);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(5, true);
  wrapped_solver<T> F(B);
  const std::array<std::size_t, 3> shape{6, 7, 5};
  const std::size_t N = 6 * 7 * 5, bytes = N * sizeof(T);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>(shape);
  const xt::xtensor<T, 3> host = kronex::kron(A, B, D).solve(b);

  const kronex::device_tensor<T, 3> bd(b);
  auto solver = kronex::compile(kronex::kron(A, F.solver, D).inverse(), bd);
  BOOST_TEST_MESSAGE(solver);
  const auto& plan = solver.plan();
  BOOST_TEST(plan.run_transfers() == 2u);
  BOOST_TEST(plan.run_transfer_bytes() == double(2 * bytes));
  BOOST_TEST(plan.steps.size() == 3u);
  BOOST_TEST(kronex::step_method(plan.steps[1]) == "stage_through_host");
  BOOST_TEST(kronex::step_transfers(plan.steps[1]) == 2u);
  BOOST_TEST(kronex::step_transfers(plan.steps[0]) == 0u);
  BOOST_TEST(kronex::step_transfers(plan.steps[2]) == 0u);
  BOOST_TEST(plan.setup[1].method == "staged through host");
  BOOST_TEST(plan.setup[1].result == "host method function");
  BOOST_TEST(to_string(plan).find("stage_through_host") != std::string::npos);

  kronex::device_tensor<T, 3> xd(shape);
  // Each run: exactly one download and one upload of the whole tensor.
  for (int run = 0; run < 2; ++run) {
    const auto c = measure([&] { solver(bd, xd); });
    check_counts(c, 1, bytes, 1, bytes);
    BOOST_TEST(c.calls() == plan.run_transfers());
    BOOST_TEST(double(c.bytes()) == plan.run_transfer_bytes());
  }
  // The function saw every line of mode 1 once per run.
  BOOST_TEST(*F.lines == 2 * N / 7);
  BOOST_TEST(rel_error(xd.to_host(), host) <= 1e-12);

  // The lazy form runs the same plan.
  kronex::device_tensor<T, 3> lazy(shape);
  // (compiling uploads the 6x6 and 5x5 matrices, then the run transfers as above)
  check_counts(measure([&] { lazy = kronex::kron(A, F.solver, D).solve(bd); }), 3, (36 + 25) * sizeof(T) + bytes, 1,
               bytes);
  BOOST_TEST(rel_error(lazy.to_host(), host) <= 1e-12);

  // Under the guard the same solve throws: the guard fires when a plan must transfer. Nothing is
  // counted, the function is not called, the input is untouched and the plan stays usable.
  const std::size_t calls_before = *F.calls;
  kronex::device_tensor<T, 3> guarded(shape);
  const auto c = measure([&] {
    kronex::no_transfer_guard guard;
    expect_error<kronex::transfer_error>([&] { solver(bd, guarded); },
                                         {"device-to-host", "stage_through_host step 1", "no_transfer_guard"});
  });
  check_counts(c, 0, 0, 0, 0);
  BOOST_TEST(*F.calls == calls_before);
  BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  solver(bd, guarded);
  BOOST_TEST(rel_error(guarded.to_host(), host) <= 1e-12);
}

// The staged step first, last, and as the only step (in place, x == b).
BOOST_AUTO_TEST_CASE_TEMPLATE(stage_through_host_at_first_last_and_only_mode, T, value_types) {
  const auto A = band<T>(6, 1, 2, boundary::clamped, true);
  const auto B = band<T>(7, 2, 1, boundary::periodic);
  const xt::xtensor<T, 2> D = random_dense_matrix<T>(5, true);
  wrapped_solver<T> F(B);

  {  // mode 0: kron(F, A, D) on (7, 6, 5)
    const xt::xtensor<T, 3> b = random_tensor<T, 3>({7, 6, 5});
    const xt::xtensor<T, 3> host = kronex::kron(B, A, D).solve(b);
    kronex::device_tensor<T, 3> bd(b);
    auto solver = kronex::compile(kronex::kron(F.solver, A, D).inverse(), bd);
    BOOST_TEST(kronex::step_method(solver.plan().steps[0]) == "stage_through_host");
    BOOST_TEST(solver.plan().run_transfers() == 2u);
    kronex::device_tensor<T, 3> xd(bd.shape());
    check_counts(measure([&] { solver(bd, xd); }), 1, 210 * sizeof(T), 1, 210 * sizeof(T));
    BOOST_TEST(rel_error(xd.to_host(), host) <= 1e-12);
    // In place.
    check_counts(measure([&] { solver(bd, bd); }), 1, 210 * sizeof(T), 1, 210 * sizeof(T));
    BOOST_TEST(rel_error(bd.to_host(), host) <= 1e-12);
  }
  {  // last mode: kron(A, D, F) on (6, 5, 7)
    const xt::xtensor<T, 3> b = random_tensor<T, 3>({6, 5, 7});
    const xt::xtensor<T, 3> host = kronex::kron(A, D, B).solve(b);
    kronex::device_tensor<T, 3> bd(b);
    auto solver = kronex::compile(kronex::kron(A, D, F.solver).inverse(), bd);
    BOOST_TEST(kronex::step_method(solver.plan().steps[2]) == "stage_through_host");
    kronex::device_tensor<T, 3> xd(bd.shape());
    check_counts(measure([&] { solver(bd, xd); }), 1, 210 * sizeof(T), 1, 210 * sizeof(T));
    BOOST_TEST(rel_error(xd.to_host(), host) <= 1e-12);
    check_counts(measure([&] { solver(bd, bd); }), 1, 210 * sizeof(T), 1, 210 * sizeof(T));
    BOOST_TEST(rel_error(bd.to_host(), host) <= 1e-12);
  }
  {  // the only factor (1D), in place
    const xt::xtensor<T, 1> b = random_tensor<T, 1>({7});
    const xt::xtensor<T, 1> host = kronex::kron(B).solve(b);
    kronex::device_tensor<T, 1> bd(b);
    auto solver = kronex::compile(kronex::kron(F.solver).inverse(), bd);
    BOOST_TEST(solver.plan().steps.size() == 1u);
    BOOST_TEST(kronex::step_method(solver.plan().steps[0]) == "stage_through_host");
    BOOST_TEST(solver.plan().setup_transfers == 0u);
    BOOST_TEST(solver.plan().workspace_bytes == 7 * sizeof(T));  // the host staging copy, no buffer
    const std::size_t calls = *F.calls;
    check_counts(measure([&] { solver(bd, bd); }), 1, 7 * sizeof(T), 1, 7 * sizeof(T));
    BOOST_TEST(*F.calls == calls + 1);
    BOOST_TEST(rel_error(bd.to_host(), host) <= 1e-12);
    // Through a view, and the raw form.
    kronex::device_tensor<T, 1> again(b);
    kronex::device_view<T, 1> v = again.view();
    solver(v, v);
    BOOST_TEST(rel_error(again.to_host(), host) <= 1e-12);
    kronex::device_tensor<T, 1> raw(b);
    solver.run(raw.data(), raw.data());
    BOOST_TEST(rel_error(raw.to_host(), host) <= 1e-12);
  }
  {  // two staged modes and a diagonal: four transfers per run
    const auto Dg = random_diagonal<T>(6);
    const xt::xtensor<T, 3> b = random_tensor<T, 3>({7, 6, 7});
    const xt::xtensor<T, 3> host = kronex::kron(B, Dg, B).solve(b);
    kronex::device_tensor<T, 3> bd(b);
    auto solver = kronex::compile(kronex::kron(F.solver, Dg, F.solver).inverse(), bd);
    BOOST_TEST(solver.plan().run_transfers() == 4u);
    check_counts(measure([&] { solver(bd, bd); }), 2, 2 * 294 * sizeof(T), 2, 2 * 294 * sizeof(T));
    BOOST_TEST(rel_error(bd.to_host(), host) <= 1e-12);
  }
}

// An exception from the user's function propagates out of the device solve unchanged.
BOOST_AUTO_TEST_CASE(stage_through_host_propagates_user_exceptions) {
  using T = double;
  struct user_failure {
    int code;
  };
  bool fail = true;
  kronex::function_solver<T> F(4, [&fail](T*, std::size_t) {
    if (fail) throw user_failure{17};
  });
  const auto A = band<T>(3, 1, 1, boundary::clamped);
  const xt::xtensor<T, 2> b = random_tensor<T, 2>({3, 4});
  kronex::device_tensor<T, 2> bd(b);
  auto solver = kronex::compile(kronex::kron(A, F).inverse(), bd);
  int code = 0;
  try {
    solver(bd, bd);
  } catch (const user_failure& e) {
    code = e.code;
  }
  BOOST_TEST(code == 17);
  // One download happened before the function threw, no upload; the input is intact.
  kronex::device_tensor<T, 2> x(bd.shape());
  fail = true;
  check_counts(measure([&] { BOOST_CHECK_THROW(solver(bd, x), user_failure); }), 0, 0, 1, 12 * sizeof(T));
  BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  // Usable again; the function now leaves its lines alone (A y = x with A = I): the result is
  // that of kron(A, I), in place through a two-step plan whose last step is staged.
  fail = false;
  BOOST_CHECK_NO_THROW(solver(bd, bd));
  const xt::xtensor<T, 2> host = kronex::kron(A, kronex::identity(4)).solve(b);
  BOOST_TEST(rel_error(bd.to_host(), host) <= 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Errors.

BOOST_AUTO_TEST_CASE(shape_errors) {
  using T = double;
  const auto A4 = band<T>(4, 1, 1, boundary::clamped);
  const auto A5 = band<T>(5, 1, 1, boundary::clamped);
  const auto A6 = band<T>(6, 1, 1, boundary::clamped);
  const auto K = kronex::kron(A4, A5, A6);
  const kronex::device_tensor<T, 3> bd(random_tensor<T, 3>({4, 5, 6}));
  auto solver = kronex::compile(K.inverse(), bd);
  kronex::device_tensor<T, 3> wrong_x(std::array<std::size_t, 3>{4, 5, 7});
  expect_error<kronex::dimension_mismatch>([&] { solver(bd, wrong_x); },
                                           {"output", "(4,5,7)", "(4,5,6)", "mode 2", "7 != 6"});
  const kronex::device_tensor<T, 3> wrong_b(std::array<std::size_t, 3>{3, 5, 6});
  kronex::device_tensor<T, 3> x(bd.shape());
  expect_error<kronex::dimension_mismatch>([&] { solver(wrong_b, x); },
                                           {"input", "(3,5,6)", "(4,5,6)", "mode 0", "3 != 4"});
  expect_error<kronex::dimension_mismatch>([&] { auto y = solver(wrong_b); }, {"input", "(3,5,6)", "(4,5,6)"});
  // Compiling for a tensor whose shape does not match the factors.
  const kronex::device_tensor<T, 3> like(std::array<std::size_t, 3>{4, 9, 6});
  expect_error<kronex::dimension_mismatch>([&] { auto s = kronex::compile(K.inverse(), like); },
                                           {"right-hand side", "(4,9,6)", "(4,5,6)", "mode 1", "9 != 5"});
  expect_error<kronex::dimension_mismatch>([&] { auto s = kronex::compile(K, like); },
                                           {"operand", "(4,9,6)", "(4,5,6)", "mode 1", "9 != 5"});
  expect_error<kronex::dimension_mismatch>([&] { kronex::device_tensor<T, 3> y = K.solve(like); },
                                           {"(4,9,6)", "(4,5,6)", "mode 1"});
  // A host tensor of another rank (an xarray's rank is a run-time property).
  const xt::xarray<T> r3 = xt::zeros<T>({2, 3, 4});
  expect_error<kronex::dimension_mismatch>([&] { kronex::device_tensor<T, 2> d(r3); }, {"rank 3", "rank 2"});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(singular_factors_on_the_device_path, T, value_types) {
  const auto A = band<T>(4, 1, 1, boundary::clamped);
  const auto S = singular_tridiagonal<T>();
  const xt::xtensor<T, 2> Sd{{T(1), T(2), T(3)}, {T(2), T(4), T(6)}, {T(1), T(1), T(1)}};
  const auto Z = kronex::diagonal(std::vector<T>{T(1), T(2), T(0), T(4)});
  // The host path's mode and info, then the device path's: they must agree.
  auto check = [](auto&& expr, auto&& host_like, auto&& device_like, std::size_t mode, long info,
                  const std::vector<std::string>& needles) {
    std::size_t host_mode = 99, device_mode = 99;
    long host_info = -1, device_info = -1;
    try {
      kronex::compile(expr, host_like);
    } catch (const kronex::singular_factor& e) {
      host_mode = e.mode();
      host_info = e.info();
    }
    try {
      kronex::compile(expr, device_like);
      BOOST_ERROR("the device path did not throw");
    } catch (const kronex::singular_factor& e) {
      device_mode = e.mode();
      device_info = e.info();
      const std::string what = e.what();
      BOOST_TEST_MESSAGE("caught: " << what);
      for (const auto& s : needles)
        BOOST_CHECK_MESSAGE(what.find(s) != std::string::npos, "'" << s << "' not in message: " << what);
    }
    BOOST_TEST(host_mode == mode);
    BOOST_TEST(host_info == info);
    BOOST_TEST(device_mode == host_mode);
    BOOST_TEST(device_info == host_info);
  };
  const xt::xtensor<T, 3> b1 = xt::zeros<T>({4, 5, 4});
  const kronex::device_tensor<T, 3> d1(b1);
  check(kronex::kron(A, S, A).inverse(), b1, d1, 1, 3, {"mode 1", "banded n=5", "info=3", "singular"});
  check(kronex::kron(S, A, A).transpose().inverse(), xt::xtensor<T, 3>(xt::zeros<T>({5, 4, 4})),
        kronex::device_tensor<T, 3>(xt::xtensor<T, 3>(xt::zeros<T>({5, 4, 4}))), 0, 3, {"mode 0", "info=3"});
  const xt::xtensor<T, 3> b2 = xt::zeros<T>({4, 4, 3});
  check(kronex::kron(A, A, Sd).inverse(), b2, kronex::device_tensor<T, 3>(b2), 2, 3,
        {"mode 2", "dense n=3", "info=3"});
  const xt::xtensor<T, 3> b3 = xt::zeros<T>({4, 4, 4});
  check(kronex::kron(A, Z, A).inverse(), b3, kronex::device_tensor<T, 3>(b3), 1, 3,
        {"mode 1", "diagonal n=4", "d(2) is zero", "info=3"});
}

BOOST_AUTO_TEST_CASE_TEMPLATE(function_solver_is_solve_only_and_untransposed, T, value_types) {
  const auto A = band<T>(4, 1, 1, boundary::clamped);
  kronex::function_solver<T> F(5, [](T*, std::size_t) {});
  const kronex::device_tensor<T, 2> bd(random_tensor<T, 2>({4, 5}));
  const auto K = kronex::kron(A, F);
  expect_error<kronex::invalid_factor>([&] { auto s = kronex::compile(K, bd); },
                                       {"f1", "function n=5", "solver only", "apply()"});
  expect_error<kronex::invalid_factor>([&] { kronex::device_tensor<T, 2> y = K.apply(bd); },
                                       {"f1", "function n=5", "solver only"});
  expect_error<kronex::invalid_factor>([&] { auto s = kronex::compile(K.transpose().inverse(), bd); },
                                       {"f1", "function n=5", "transposed"});
  expect_error<kronex::invalid_factor>([&] { kronex::device_tensor<T, 2> y = K.transpose().solve(bd); },
                                       {"f1", "transposed"});
  expect_error<kronex::invalid_factor>([&] { auto s = kronex::compile(K.adjoint().inverse(), bd); },
                                       {"f1", "function n=5", "transposed"});
  expect_error<kronex::invalid_factor>([&] { auto s = kronex::compile(K.adjoint().transpose().inverse(), bd); },
                                       {"f1", "function n=5", "conjugated"});
  // A function solver needs a size and a function.
  expect_error<kronex::invalid_factor>([] { kronex::function_solver<T>(0, [](T*, std::size_t) {}); }, {"n must be"});
  expect_error<kronex::invalid_factor>([] { kronex::function_solver<T>(3, nullptr); }, {"empty"});
}

BOOST_AUTO_TEST_CASE(host_tensor_layout_and_empty_shapes) {
  using T = double;
  // A column-major host tensor is refused, before any copy.
  xt::xtensor<T, 2, xt::layout_type::column_major> cm = xt::xtensor<T, 2, xt::layout_type::column_major>::from_shape({3, 4});
  for (std::size_t i = 0; i < cm.size(); ++i) cm.data()[i] = T(i);
  const auto c = measure([&] {
    expect_error<kronex::error>([&] { kronex::device_tensor<T, 2> d(cm); },
                                {"device_tensor upload", "C (row-major)", "strides (1,3)", "expected (4,1)", "(3,4)"});
  });
  check_counts(c, 0, 0, 0, 0);
  // A column-major tensor with one extent > 1 is contiguous in C order too.
  xt::xtensor<T, 2, xt::layout_type::column_major> col = xt::xtensor<T, 2, xt::layout_type::column_major>::from_shape({1, 4});
  for (std::size_t i = 0; i < 4; ++i) col.data()[i] = T(i + 1);
  kronex::device_tensor<T, 2> dcol(col);
  const xt::xtensor<T, 2> hcol = dcol.to_host();
  for (std::size_t i = 0; i < 4; ++i) BOOST_TEST(hcol(0, i) == T(i + 1));

  // Zero-size tensors: construct, copy and download to empty tensors; nothing is counted.
  const auto z = measure([&] {
    kronex::device_tensor<T, 2> e(std::array<std::size_t, 2>{0, 3});
    BOOST_TEST(e.size() == 0u);
    const xt::xtensor<T, 2> h = e.to_host();
    BOOST_TEST(h.size() == 0u);
    BOOST_TEST(h.shape()[0] == 0u);
    BOOST_TEST(h.shape()[1] == 3u);
    kronex::device_tensor<T, 2> copy(e);
    BOOST_TEST(copy.size() == 0u);
    const xt::xtensor<T, 2> empty_host = xt::xtensor<T, 2>::from_shape({0, 3});
    kronex::device_tensor<T, 2> up(empty_host);
    BOOST_TEST((up.shape() == std::array<std::size_t, 2>{0, 3}));
    BOOST_TEST(up.to_host().size() == 0u);
    // A copy of nothing moves nothing: a guard does not refuse it either.
    kronex::no_transfer_guard guard;
    BOOST_TEST(e.to_host().size() == 0u);
  });
  check_counts(z, 0, 0, 0, 0);
}

// ---------------------------------------------------------------------------------------------
// The printed device plan (golden text). The setup lines name the host method that built each
// matrix, which is the host plan's own: only checked on the omp device system, where the GEMM
// stand-in and buffers are this file's expectation.
//
// kron(M8, P9, D5)^{-1} on (8,9,5), double: N = 360.
//  f0 = bspline_mass(8, 3) clamped: gbtrf kl=3 ku=3; uploaded 8x8 = 64 8 = 512 B.
//  f1 = bspline_mass(9, 2) periodic: the corners make LAPACK see kl = ku = n - 1 = 8
//       (i = 0, d = -2 wraps to column 7; i = 8, d = 2 to column 1; as in test_plans, where
//       periodic n=10 p=2 gives 9/9); uploaded 9x9 = 81 8 = 648 B.
//  f2 = 5x5 dense (4 on the diagonal, 1 elsewhere): getrf; uploaded 25 8 = 200 B.
//  steps: mode 0 has L = 1: one gemm (Y^c = X^c M^T); mode 1 has L = 8, R = 5:
//         gemm_strided_batched; mode 2 has R = 1: one gemm.
//  flops = 2 N n per mode: 2 360 8 = 5760, 2 360 9 = 6480, 2 360 5 = 3600; total 15840.
//  bytes = 2 N 8 + n n 8: 5760 + 512 = 6272, 5760 + 648 = 6408, 5760 + 200 = 5960; total 18640.
//  workspace: 3 steps ping-pong between 2 buffers of N 8 = 2880 B: 5760 B.
//  factors: 512 + 648 + 200 = 1360 B; setup transfers: 3 uploads, 1360 B; per run: none.
//
// kron(M8, F9, D5)^{-1}: the periodic factor replaced by a function solver of size 9.
//  step 1 is stage_through_host, flops=0 (the function's work is unknown), bytes = 2 N 8 = 5760,
//  transfers = 2 of N 8 = 2880 B each: 5760 B.
//  total flops 5760 + 0 + 3600 = 9360; bytes 6272 + 5760 + 5960 = 17992.
//  workspace: 2 buffers (5760) + the host staging copy N 8 = 2880: 8640 B.
//  factors: 512 + 200 = 712 B; setup transfers 2 (712 B); per run 2 (5760 B).
namespace {
std::string printed(const kronex::plan_description& p) {
  std::ostringstream os;
  os << p;
  return os.str();
}

void check_plan(const std::string& got, const std::string& expected) {
  std::istringstream g(got), e(expected);
  std::string lg, le;
  int line = 1;
  while (true) {
    const bool more_g = bool(std::getline(g, lg)), more_e = bool(std::getline(e, le));
    if (!more_g && !more_e) break;
    if (lg != le || more_g != more_e) {
      BOOST_ERROR("plan differs at line " << line << ":\n  got:      '" << lg << "'\n  expected: '" << le << "'\n"
                                          << "full plan:\n" << got);
      return;
    }
    ++line;
  }
  BOOST_TEST(got == expected);
}
} // namespace

BOOST_AUTO_TEST_CASE(printed_device_plan) {
  if (kronex::device::system_name() != std::string("omp")) {
    BOOST_TEST_MESSAGE("printed device plan golden test: only on the omp device system, this is "
                       << kronex::device::system_name());
    return;
  }
  const auto M8 = kronex::gallery::bspline_mass<double>(8, 3);
  const auto P9 = kronex::gallery::bspline_mass<double>(9, 2, boundary::periodic);
  const xt::xtensor<double, 2> D5{{4, 1, 1, 1, 1}, {1, 4, 1, 1, 1}, {1, 1, 4, 1, 1}, {1, 1, 1, 4, 1}, {1, 1, 1, 1, 4}};
  const xt::xtensor<double, 3> b = xt::ones<double>({8, 9, 5});
  const kronex::device_tensor<double, 3> bd(b);
  {
    const std::string expected =
        "plan inverse(kron(f0,f1,f2)) on (8,9,5):(45,5,1) [device omp, double]\n"
        "  setup\n"
        "    f0  banded n=8 kl=3 ku=3 clamped  inverse by host solve (gbtrf kl=3 ku=3)  uploaded 8x8 (512B)  rcond=0.027\n"
        "    f1  banded n=9 kl=2 ku=2 periodic  inverse by host solve (gbtrf kl=8 ku=8)  uploaded 9x9 (648B)  rcond=0.14\n"
        "    f2  dense n=5  inverse by host solve (getrf)  uploaded 5x5 (200B)  rcond=0.27\n"
        "  steps\n"
        "    0  solve  mode 0  f0 N  gemm  (1,8,45):(360,45,1)  flops=5.76k  bytes=6.272k\n"
        "    1  solve  mode 1  f1 N  gemm_strided_batched  (8,9,5):(45,5,1)  flops=6.48k  bytes=6.408k\n"
        "    2  solve  mode 2  f2 N  gemm  (72,5,1):(5,1,1)  flops=3.6k  bytes=5.96k\n"
        "  total  steps=3  flops=15.84k  bytes=18.64k  workspace=2.88kB  factors=1.36kB\n"
        "  transfers  setup=3 (1.36kB)  per run=0 (0B)\n";
    auto solver = kronex::compile(kronex::kron(M8, P9, D5).inverse(), bd);
    check_plan(printed(solver.plan()), expected);
    std::ostringstream os;
    os << solver;
    check_plan(os.str(), expected);
    check_plan(kronex::explain(kronex::kron(M8, P9, D5).inverse(), bd), kronex_test::without_rcond(expected));
    BOOST_TEST(solver.plan().flops() == 15840.0);
    BOOST_TEST(solver.plan().bytes() == 18640.0);
    BOOST_TEST(solver.plan().workspace_bytes == 2880u);  // one ping-pong buffer
    BOOST_TEST(solver.plan().factor_bytes == 1360u);
  }
  {
    kronex::function_solver<double> F9(9, [](double*, std::size_t) {});
    const std::string expected =
        "plan inverse(kron(f0,f1,f2)) on (8,9,5):(45,5,1) [device omp, double]\n"
        "  setup\n"
        "    f0  banded n=8 kl=3 ku=3 clamped  inverse by host solve (gbtrf kl=3 ku=3)  uploaded 8x8 (512B)  rcond=0.027\n"
        "    f1  function n=9  staged through host  host method function\n"
        "    f2  dense n=5  inverse by host solve (getrf)  uploaded 5x5 (200B)  rcond=0.27\n"
        "  steps\n"
        "    0  solve  mode 0  f0 N  gemm  (1,8,45):(360,45,1)  flops=5.76k  bytes=6.272k\n"
        "    1  solve  mode 1  f1 N  stage_through_host  (8,9,5):(45,5,1)  flops=0  bytes=5.76k  transfers=2 (5.76kB)\n"
        "    2  solve  mode 2  f2 N  gemm  (72,5,1):(5,1,1)  flops=3.6k  bytes=5.96k\n"
        "  total  steps=3  flops=9.36k  bytes=17.992k  workspace=5.76kB  factors=712B\n"
        "  transfers  setup=2 (712B)  per run=2 (5.76kB)\n";
    auto solver = kronex::compile(kronex::kron(M8, F9, D5).inverse(), bd);
    check_plan(printed(solver.plan()), expected);
    BOOST_TEST(solver.plan().workspace_bytes == 5760u);  // the buffer and the host staging copy
    BOOST_TEST(solver.plan().run_transfer_bytes() == 5760.0);
  }
}

// ---------------------------------------------------------------------------------------------
// Runs: no transfers, every entry point.

namespace {

using all_value_types = std::tuple<float, double, std::complex<float>, std::complex<double>>;

// Runs the compiled device operator twice under a transfer guard and checks that the counter
// did not move, that the plan says so, and that the input is unchanged.
template <class T, std::size_t D, class Expr>
void check_no_run_transfers(const Expr& expr, const std::array<std::size_t, D>& shape, const std::string& what) {
  BOOST_TEST_CONTEXT(what) {
    const xt::xtensor<T, D> b = random_tensor<T, D>(shape);
    kronex::device_tensor<T, D> bd(b);
    auto solver = kronex::compile(expr, bd);
    kronex::device_tensor<T, D> xd(bd.shape());
    const auto before = kronex::transfers();
    {
      kronex::no_transfer_guard guard;
      solver(bd, xd);
      solver(bd, xd);  // a second run: same buffers
    }
    const auto during = kronex::transfers() - before;
    BOOST_TEST(during.calls() == 0u);
    BOOST_TEST(during.bytes() == 0u);
    BOOST_TEST(solver.plan().run_transfers() == 0u);
    BOOST_TEST(rel_error(bd.to_host(), b) == 0.0);
  }
}

} // namespace

// Every factor kind (identity, diagonal, clamped and periodic band, dense) in one operator.
BOOST_AUTO_TEST_CASE_TEMPLATE(runs_make_no_transfers, T, all_value_types) {
  const auto c = band<T>(7, 2, 1, boundary::clamped, true);
  const auto p = band<T>(6, 1, 2, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(5, true);
  const auto diag = kronex_test::random_diagonal<T>(4);
  const auto I = kronex::identity(3);
  const auto K = kronex::kron(c, I, p, diag, d);
  const std::array<std::size_t, 5> shape{7, 3, 6, 4, 5};
  for (int o = 0; o < 4; ++o) {
    const auto Ko = o == 0 ? K : o == 1 ? K.transpose() : o == 2 ? K.adjoint() : K.adjoint().transpose();
    const std::string letter(1, "NTCR"[o]);
    check_no_run_transfers<T, 5>(Ko.inverse(), shape, letter + " solve");
    check_no_run_transfers<T, 5>(Ko, shape, letter + " apply");
  }
}

BOOST_AUTO_TEST_CASE(lazy_forms_views_and_in_place) {
  using T = double;
  const auto c = band<T>(8, 2, 2, boundary::clamped, true);
  const auto p = band<T>(9, 1, 1, boundary::periodic);
  const xt::xtensor<T, 2> d = random_dense_matrix<T>(7, false);
  const xt::xtensor<T, 3> b = random_tensor<T, 3>({8, 9, 7});
  const xt::xtensor<T, 3> host = kronex::kron(c, p, d).solve(b);

  kronex::device_tensor<T, 3> bd(b);
  // Lazy form: the backend follows the operand.
  kronex::device_tensor<T, 3> yd = kronex::kron(c, p, d).solve(bd);
  BOOST_TEST(rel_error(yd.to_host(), host) <= 1e-12);
  // Nested: apply(solve(b)) gives b back.
  kronex::device_tensor<T, 3> back = kronex::kron(c, p, d).apply(kronex::kron(c, p, d).solve(bd));
  BOOST_TEST(rel_error(back.to_host(), b) <= 1e-12);

  auto solver = kronex::compile(kronex::kron(c, p, d).inverse(), bd);
  // On an application's own device buffer, through a non-owning view.
  kronex::device_tensor<T, 3> app(b);
  kronex::device_view<T, 3> view(app.data(), app.shape());
  kronex::device_tensor<T, 3> out(bd.shape());
  solver(view, out.view());
  BOOST_TEST(rel_error(out.to_host(), host) <= 1e-12);
  // In place: x is b.
  {
    kronex::no_transfer_guard guard;
    solver(view, view);
  }
  BOOST_TEST(rel_error(app.to_host(), host) <= 1e-12);
  // Raw device pointers.
  kronex::device_tensor<T, 3> raw(bd.shape());
  solver.run(bd.data(), raw.data());
  BOOST_TEST(rel_error(raw.to_host(), host) <= 1e-12);
  // The allocating form.
  kronex::device_tensor<T, 3> alloc = solver(bd);
  BOOST_TEST(rel_error(alloc.to_host(), host) <= 1e-12);
  // One-step plans in place need the lone ping-pong buffer.
  auto one = kronex::compile(kronex::kron(kronex::identity(8), p, kronex::identity(7)).inverse(), bd);
  kronex::device_tensor<T, 3> inplace(b);
  one(inplace, inplace);
  const xt::xtensor<T, 3> one_host = kronex::kron(kronex::identity(8), p, kronex::identity(7)).solve(b);
  BOOST_TEST(rel_error(inplace.to_host(), one_host) <= 1e-12);
}

// The user story of the device backend, line for line.
BOOST_AUTO_TEST_CASE(issue_example) {
  const auto A1 = kronex::gallery::bspline_mass<double>(12, 3);
  const auto A2 = kronex::gallery::bspline_mass<double>(10, 3, boundary::periodic);
  const auto A3 = kronex::gallery::bspline_mass<double>(8, 2);
  const xt::xtensor<double, 3> b = random_tensor<double, 3>({12, 10, 8});
  const auto start = kronex::transfers();

  kronex::device_tensor<double, 3> bd(b);                    // upload: one counted transfer
  auto solver = kronex::compile(kronex::kron(A1, A2, A3).inverse(), bd);  // inverses uploaded once
  kronex::device_tensor<double, 3> xd(bd.shape());
  {
    kronex::no_transfer_guard guard;                         // any host<->device copy in scope throws
    solver(bd, xd);                                          // one GEMM per mode, on the device
  }
  kronex::device_tensor<double, 3> yd = kronex::kron(A1, A2, A3).solve(bd);  // lazy form works too
  xt::xtensor<double, 3> x = xd.to_host();                   // download: one counted transfer
  std::ostringstream printed;
  printed << solver;                                         // plan shows device steps

  const xt::xtensor<double, 3> host = kronex::kron(A1, A2, A3).solve(b);
  BOOST_TEST(rel_error(x, host) <= 1e-12);
  BOOST_TEST(rel_error(yd.to_host(), host) <= 1e-12);
  // 1 upload of b, 3 + 3 matrix uploads (compile, lazy solve), 2 downloads.
  const auto used = kronex::transfers() - start;
  BOOST_TEST(used.uploads == 7u);
  BOOST_TEST(used.downloads == 2u);
  BOOST_TEST(used.upload_bytes == (12 * 10 * 8 + 2 * (12 * 12 + 10 * 10 + 8 * 8)) * sizeof(double));
  const std::string plan = printed.str();
  BOOST_TEST(plan.find("[device ") != std::string::npos);
  BOOST_TEST(plan.find("gemm_strided_batched") != std::string::npos);
  BOOST_TEST(plan.find("transfers  setup=3") != std::string::npos);
  BOOST_TEST(plan.find("per run=0 (0B)") != std::string::npos);
}
