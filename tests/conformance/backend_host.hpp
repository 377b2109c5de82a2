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
// Built with KRONEX_CONFORMANCE_HOST_THREADS = N (> 0), the host adaptor compiles every plan for N
// threads, which then run at every size (the default runs small tensors on one thread). Built
// with KRONEX_CONFORMANCE_HOST_DENSE_INVERSE, every banded and dense solve runs as GEMMs with the
// dense inverse (compile_options::solves), which the cost model picks only for larger tensors.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <kronex/kronex.hpp>

#include "single_layout.hpp"

namespace kronex_conformance {

#ifndef KRONEX_CONFORMANCE_HOST_THREADS
#define KRONEX_CONFORMANCE_HOST_THREADS 0
#endif
#ifdef KRONEX_CONFORMANCE_HOST_DENSE_INVERSE
inline constexpr bool dense_inverse_solves = true;
#else
inline constexpr bool dense_inverse_solves = false;
#endif

struct backend : single_layout {
  static constexpr const char* name = dense_inverse_solves                ? "host (dense inverse)"
                                      : KRONEX_CONFORMANCE_HOST_THREADS > 0 ? "host (threads)"
                                                                            : "host";
  static kronex::compile_options options() {
    kronex::compile_options o;
    o.threads = KRONEX_CONFORMANCE_HOST_THREADS;
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
