#pragma once
// The distributed backend's hooks for composite plans (operator sums, compositions, fast
// diagonalisation; backends/composite/composite_plan.hpp), on host or device ranks: each
// Kronecker product in the expression runs as a distributed plan (local plans between exchanges,
// ending in the input layout), and the whole-tensor kernels run on this rank's block with the
// host's or the device's kernels, at the block's global offset (the eigenvalue scaling reads the
// eigenvalues of its global indices). The pseudo-inverse's dot products are summed over the
// ranks with one MPI_Allreduce; on device ranks MPI reads the device's dot products directly
// when it can take device memory (as exchanges do), else they are staged through the host (two
// transfers of k values, shown on the plan's projection step).
// Fast diagonalisation's forward transform ends in its last phase's layout, where the scaling
// and the eigenbasis projections run (they need only the block's global offset and extent), and
// the backward transform starts there: 2m exchanges for m split modes needing locality, not
// 2(m + 1).
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../host/host_composite.hpp"
#include "distributed_plan.hpp"

namespace kronex::detail {

// The block kernels of a rank kind: the host's, or the device's (specialised in
// distributed_device_tensor.hpp, which knows device ranks).
template <class Ranks>
struct block_kernels;
template <class T>
struct block_kernels<host_ranks<T>> {
  using type = host_composite_ops<T>;
};

template <class T, class Ranks = host_ranks<T>>
struct distributed_composite_ops : block_kernels<Ranks>::type {
  using leaf_plan = distributed_plan<T, Ranks>;
  using base = typename block_kernels<Ranks>::type;

  // block: this rank's block of the global shape, in the input layout.
  distributed_composite_ops(std::shared_ptr<cart_comm> comm, const shape_t& global, const box& block, Ranks ranks = Ranks())
      : base(global, block.extent, block.offset), m_comm(std::move(comm)), m_ranks(std::move(ranks)) {
    m_ranks.decide();
  }

  std::string name() const { return leaf_plan::backend_name(*m_comm); }
  std::unique_ptr<leaf_plan> make_leaf(const operator_desc<T>& d) const {
    return std::make_unique<leaf_plan>(d, m_comm, this->shape(), m_ranks);
  }
  plan_description explain_leaf(const operator_desc<T>& d) const {
    return leaf_plan::explain(d, m_comm, this->shape(), m_ranks);
  }

  // The forward transform ends in its last layout; the middle hooks work on this rank's block
  // there (which may be larger than its input block when splits are uneven).
  fd_transforms<leaf_plan, distributed_composite_ops> make_fd_transforms(const operator_desc<T>& forward,
                                                                         const operator_desc<T>& backward,
                                                                         bool instantiate) const {
    fd_transforms<leaf_plan, distributed_composite_ops> r;
    exchange_options to_middle;
    to_middle.end_in_last = true;
    const block_layout middle = leaf_plan::end_layout(forward, m_comm, this->shape(), to_middle);
    exchange_options from_middle;
    from_middle.start = middle.split_by;
    if (instantiate) {
      r.forward = std::make_unique<leaf_plan>(forward, m_comm, this->shape(), to_middle, m_ranks);
      r.backward = std::make_unique<leaf_plan>(backward, m_comm, this->shape(), from_middle, m_ranks);
      r.forward_desc = r.forward->description();
      r.backward_desc = r.backward->description();
    } else {
      r.forward_desc = leaf_plan::explain(forward, m_comm, this->shape(), to_middle, m_ranks);
      r.backward_desc = leaf_plan::explain(backward, m_comm, this->shape(), from_middle, m_ranks);
    }
    if (middle.split_by != input_layout(this->shape(), m_comm->grid()).split_by)  // else: in x, as on the host
      r.middle.emplace(m_comm, this->shape(), middle.block(m_comm->grid(), m_comm->coords()), m_ranks);
    return r;
  }

  // Staged device ranks copy the k dot products to the host and back for the MPI_Allreduce.
  std::pair<std::size_t, std::size_t> reduction_transfers(std::size_t k) const {
    return m_ranks.staged ? std::pair<std::size_t, std::size_t>{2, 2 * k * sizeof(T)} : std::pair<std::size_t, std::size_t>{0, 0};
  }

  // c = G^{-1} [r_j^H x]_j: the block's dot products summed over the ranks.
  void projection_coefs(typename base::rank_ones_type& r, const T* x, typename base::coefs_type& c) const {
    base::block_dots(r, x);
    T* dots = r.dots.data();
    const std::size_t k = r.dots.size();
    if (m_ranks.staged) {
      m_host_dots.resize(k);
      m_ranks.download(m_host_dots.data(), dots, k * sizeof(T));
      allreduce(m_host_dots.data(), k);
      m_ranks.upload(dots, m_host_dots.data(), k * sizeof(T));
    } else {
      base::finish();  // the dot products are complete before MPI reads them
      allreduce(dots, k);
    }
    base::apply_gram_inverse(r, c);
  }

private:
  void allreduce(T* v, std::size_t k) const { allreduce_sum(v, k, m_comm->get()); }

  std::shared_ptr<cart_comm> m_comm;
  mutable Ranks m_ranks;               // what the leaves get; download and upload are not const
  mutable std::vector<T> m_host_dots;  // staged reductions only
};

template <class T, class Ranks = host_ranks<T>>
using distributed_composite_plan = composite_plan<T, distributed_composite_ops<T, Ranks>>;

} // namespace kronex::detail
