#pragma once
// distributed_tensor<T, D>: a tensor of global shape `global` split in blocks over a process grid
// (an MPI Cartesian communicator built from `comm`). Axis k is split over grid[k] ranks (1: not
// split); uneven splits give the first ranks one more point. Each rank holds its block as an
// xt::xtensor (local()), whose first element is the global index local_offset().
//
// Constructing one is collective over `comm`. Destroy distributed tensors (and compiled
// operators) before MPI_Finalize: they own communicators.
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "block_layout.hpp"
#include "mpi_support.hpp"

namespace kronex {

template <class T, std::size_t D>
class distributed_tensor {
public:
  using value_type = T;
  using shape_type = std::array<std::size_t, D>;
  using grid_type = std::array<int, D>;
  static constexpr std::size_t rank = D;

  distributed_tensor(MPI_Comm comm, const shape_type& global, const grid_type& grid)
      : m_global(global), m_grid(grid) {
    detail::collective(comm, [&] {
      m_comm = std::make_shared<detail::cart_comm>(comm, std::vector<int>(grid.begin(), grid.end()));
    });
    const detail::box b = layout().block(m_comm->grid(), m_comm->coords());
    for (std::size_t k = 0; k < D; ++k) m_offset[k] = b.offset[k];
    m_local = xt::xtensor<T, D>::from_shape(b.extent);
  }

  // A tensor with the same global shape, grid and communicator (collective-free: it shares the
  // communicator); its local block is uninitialised.
  static distributed_tensor like(const distributed_tensor& other) {
    distributed_tensor t(other);
    t.m_local = xt::xtensor<T, D>::from_shape(other.m_local.shape());
    return t;
  }

  xt::xtensor<T, D>& local() noexcept { return m_local; }
  const xt::xtensor<T, D>& local() const noexcept { return m_local; }
  const shape_type& local_offset() const noexcept { return m_offset; }
  const shape_type& global_shape() const noexcept { return m_global; }
  const grid_type& grid() const noexcept { return m_grid; }
  // The Cartesian communicator (owned by the tensor and its copies).
  MPI_Comm comm() const noexcept { return m_comm->get(); }
  const std::shared_ptr<detail::cart_comm>& cart() const noexcept { return m_comm; }

  // The input layout: axis k split over grid dimension k when grid[k] > 1.
  detail::block_layout layout() const {
    detail::block_layout l{shape_t(m_global.begin(), m_global.end()), std::vector<int>(D, -1)};
    for (std::size_t k = 0; k < D; ++k)
      if (m_grid[k] > 1) l.split_by[k] = int(k);
    return l;
  }

private:
  shape_type m_global;
  grid_type m_grid;
  shape_type m_offset{};
  std::shared_ptr<detail::cart_comm> m_comm;
  xt::xtensor<T, D> m_local;
};

} // namespace kronex
