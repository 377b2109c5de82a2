#pragma once
// The conformance suite's adaptor for the distributed backend on host ranks (operands are
// kronex::distributed_tensor), run under mpiexec with 1 to 4 ranks: every process grid whose
// size is the number of ranks is a layout. Every rank builds the same global data (the seed is
// broadcast) and checks the whole gathered result. See backend_host.hpp for what an adaptor
// provides.
#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "kronex_mpi_test_support.hpp"

namespace kronex_conformance {

struct backend {
  static constexpr const char* name = "mpi";
  static kronex::compile_options options() { return {}; }
  // Each case costs communicator setups on every rank (slow on oversubscribed ranks): 3D kind
  // tuples are sampled; every local step is a host plan, which the host suite sweeps in full.
  static constexpr bool every_kind_tuple = false;
  static constexpr std::size_t max_rank = 4;
  template <class T, std::size_t D>
  using tensor = kronex::distributed_tensor<T, D>;

  template <std::size_t D>
  static std::vector<std::array<int, D>> layouts() { return kronex_test::grids_for<D>(kronex_test::world_size()); }
  template <std::size_t D>
  static std::string layout_text(const std::array<int, D>& grid) { return "mpi " + kronex_test::grid_text(grid); }

  template <class T, std::size_t D>
  static tensor<T, D> upload(const xt::xtensor<T, D>& b, const std::array<int, D>& grid) {
    return kronex_test::distribute(b, grid);
  }
  template <class T, std::size_t D>
  static tensor<T, D> like(const tensor<T, D>& t) { return tensor<T, D>::like(t); }
  template <class T, std::size_t D>
  static xt::xtensor<T, D> download(const tensor<T, D>& t) { return kronex_test::gather(t); }
};

} // namespace kronex_conformance
