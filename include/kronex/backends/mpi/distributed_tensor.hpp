#pragma once
// Distributed tensors: a tensor of global shape `global` split in blocks over a process grid (an
// MPI Cartesian communicator built from `comm`). Axis k is split over grid[k] ranks (1: not
// split); uneven splits give the first ranks one more point. Each rank holds its block in C
// order, whose first element is the global index local_offset():
//   distributed_tensor<T, D>         the block is an xt::xtensor<T, D> (host ranks);
//   distributed_device_tensor<T, D>  the block is a device_tensor<T, D> (device ranks;
//                                    distributed_device_tensor.hpp).
//
// Constructing one is collective over `comm`. Destroy distributed tensors (and compiled
// operators) before MPI_Finalize: they own communicators.
#include <array>
#include <cstddef>
#include <memory>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "block_layout.hpp"
#include "distributed_plan.hpp"
#include "mpi_support.hpp"

namespace kronex {

namespace detail {
// What every distributed tensor has besides its block: the grid, the communicator, the layout.
template <std::size_t D>
class distribution {
public:
  using shape_type = std::array<std::size_t, D>;
  using grid_type = std::array<int, D>;

  distribution(MPI_Comm comm, const shape_type& global, const grid_type& grid) : m_global(global), m_grid(grid) {
    collective(comm, [&] { m_comm = std::make_shared<cart_comm>(comm, std::vector<int>(grid.begin(), grid.end())); });
    const box b = layout().block(m_comm->grid(), m_comm->coords());
    for (std::size_t k = 0; k < D; ++k) {
      m_offset[k] = b.offset[k];
      m_local_shape[k] = b.extent[k];
    }
  }

  const shape_type& local_offset() const noexcept { return m_offset; }
  const shape_type& local_shape() const noexcept { return m_local_shape; }
  const shape_type& global_shape() const noexcept { return m_global; }
  const grid_type& grid() const noexcept { return m_grid; }
  // The Cartesian communicator (owned by the tensor and its copies).
  MPI_Comm comm() const noexcept { return m_comm->get(); }
  const std::shared_ptr<cart_comm>& cart() const noexcept { return m_comm; }

  // The input layout: axis k split over grid dimension k when grid[k] > 1.
  block_layout layout() const {
    block_layout l{shape_t(m_global.begin(), m_global.end()), std::vector<int>(D, -1)};
    for (std::size_t k = 0; k < D; ++k)
      if (m_grid[k] > 1) l.split_by[k] = int(k);
    return l;
  }

private:
  shape_type m_global;
  grid_type m_grid;
  shape_type m_offset{}, m_local_shape{};
  std::shared_ptr<cart_comm> m_comm;
};
} // namespace detail

template <class T, std::size_t D>
class distributed_tensor : public detail::distribution<D> {
public:
  using value_type = T;
  using typename detail::distribution<D>::shape_type;
  using typename detail::distribution<D>::grid_type;
  using ranks_type = detail::host_ranks<T>;
  static constexpr std::size_t rank = D;

  // The block is allocated inside the collective part: a rank that cannot allocate its block
  // makes every rank throw (that rank std::bad_alloc, the others kronex::error).
  distributed_tensor(MPI_Comm comm, const shape_type& global, const grid_type& grid)
      : detail::distribution<D>(comm, global, grid) {
    detail::collective(this->comm(), [&] { m_local = xt::xtensor<T, D>::from_shape(this->local_shape()); });
  }

  // A tensor with the same global shape, grid and communicator (not collective: it shares the
  // communicator); its block is uninitialised.
  static distributed_tensor like(const distributed_tensor& other) {
    return distributed_tensor(static_cast<const detail::distribution<D>&>(other));
  }

  xt::xtensor<T, D>& local() noexcept { return m_local; }
  const xt::xtensor<T, D>& local() const noexcept { return m_local; }
  ranks_type ranks() const { return {}; }

private:
  explicit distributed_tensor(const detail::distribution<D>& d)
      : detail::distribution<D>(d), m_local(xt::xtensor<T, D>::from_shape(this->local_shape())) {}

  xt::xtensor<T, D> m_local;
};

} // namespace kronex
