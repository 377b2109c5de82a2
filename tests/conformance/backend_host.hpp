#pragma once
// The conformance suite's adaptor for the host backend (operands are xt::xtensor).
//
// An adaptor is a struct kronex_conformance::backend that tells the suite how to move a test's
// global tensor to the backend and back, and nothing else: the suite itself compiles and runs
// the expressions through the public API. It provides
//   name                    the backend's name, for messages;
//   max_rank                the largest number of factors the suite tries (4, or 6);
//   every_kind_tuple        true: all 5^3 kind tuples in 3D; false: a random sample (where
//                           each case is costly);
//   tensor<T, D>            the operand type whose type picks the backend;
//   layouts<D>()            the data layouts to run on, as process grids (one entry, all 1s,
//                           where the backend has no layouts);
//   upload(b, layout)       the global host tensor b as a backend operand;
//   like(t)                 an output operand of t's shape and layout;
//   download(t)             t as a global host tensor;
//   options()               the compile_options the suite compiles with.
// The environment picks one of three variants at run time (one executable runs all three, so the
// suite is compiled once for the host):
//   KRONEX_CONFORMANCE_HOST_THREADS=N (N > 0): every plan is compiled for N threads, which then
//     run at every size (the default runs small tensors on one thread);
//   KRONEX_CONFORMANCE_HOST_SOLVES=dense_inverse: every banded and dense solve runs as GEMMs with
//     the dense inverse (compile_options::solves), which the cost model picks only for larger
//     tensors.
// Any other value of either is an error, so that a typo cannot run the default variant instead.
#include <array>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>

#include "single_layout.hpp"

namespace kronex_conformance {

namespace detail {

inline std::size_t host_threads_from_environment() {
  const char* text = std::getenv("KRONEX_CONFORMANCE_HOST_THREADS");
  if (text == nullptr) return 0;
  char* end = nullptr;
  const unsigned long threads = std::strtoul(text, &end, 10);
  if (*text == '\0' || *end != '\0' || threads == 0 || threads > 64)
    throw std::invalid_argument(std::string("KRONEX_CONFORMANCE_HOST_THREADS is '") + text +
                                "'; expected a number of threads from 1 to 64");
  return threads;
}

inline bool dense_inverse_from_environment() {
  const char* text = std::getenv("KRONEX_CONFORMANCE_HOST_SOLVES");
  if (text == nullptr) return false;
  if (std::string(text) != "dense_inverse")
    throw std::invalid_argument(std::string("KRONEX_CONFORMANCE_HOST_SOLVES is '") + text +
                                "'; expected dense_inverse (or unset)");
  return true;
}

} // namespace detail

struct backend : single_layout {
  static inline const std::size_t threads = detail::host_threads_from_environment();
  static inline const bool dense_inverse_solves = detail::dense_inverse_from_environment();
  static inline const std::string name = dense_inverse_solves ? "host (dense inverse)"
                                         : threads > 0        ? "host (threads)"
                                                              : "host";
  static kronex::compile_options options() {
    kronex::compile_options o;
    o.threads = threads;
    if (dense_inverse_solves) o.solves = kronex::solve_method::dense_inverse;
    return o;
  }
  static constexpr std::size_t max_rank = 6;
  static constexpr bool every_kind_tuple = true;
  template <class T, std::size_t D>
  using tensor = xt::xtensor<T, D>;

  template <std::size_t D>
  static std::string layout_text(const std::array<int, D>&) { return name; }

  template <class T, std::size_t D>
  static tensor<T, D> upload(const xt::xtensor<T, D>& b, const std::array<int, D>&) { return b; }
  template <class T, std::size_t D>
  static tensor<T, D> like(const tensor<T, D>& t) { return tensor<T, D>::from_shape(t.shape()); }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> download(const tensor<T, D>& t) { return t; }
};

} // namespace kronex_conformance
