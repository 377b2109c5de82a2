#pragma once
// The distributed backend's hooks for composite plans (operator sums, compositions, fast
// diagonalisation; backends/composite/composite_plan.hpp), host ranks: each Kronecker product in
// the expression runs as a distributed plan (local plans between exchanges, ending in the input
// layout), and the whole-tensor kernels run on this rank's block with the host's kernels, at the
// block's global offset (the eigenvalue scaling reads the eigenvalues of its global indices).
// The pseudo-inverse's dot products are summed over the ranks with one MPI_Allreduce.
// Fast diagonalisation's forward transform ends in its last phase's layout, where the scaling
// and the eigenbasis projections run (they need only the block's global offset and extent), and
// the backward transform starts there: 2m exchanges for m split modes needing locality, not
// 2(m + 1).
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../host/host_composite.hpp"
#include "distributed_plan.hpp"

namespace kronex::detail {

template <class T>
struct distributed_composite_ops : host_composite_ops<T> {
  using leaf_plan = distributed_plan<T, host_ranks<T>>;
  using base = host_composite_ops<T>;

  // block: this rank's block of the global shape, in the input layout.
  distributed_composite_ops(std::shared_ptr<cart_comm> comm, const shape_t& global, const box& block)
      : base(global, block.extent, block.offset), m_comm(std::move(comm)) {}

  std::string name() const { return leaf_plan::backend_name(*m_comm); }
  std::unique_ptr<leaf_plan> make_leaf(const operator_desc<T>& d) const {
    return std::make_unique<leaf_plan>(d, m_comm, this->shape());
  }
  plan_description explain_leaf(const operator_desc<T>& d) const { return leaf_plan::explain(d, m_comm, this->shape()); }

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
      r.forward = std::make_unique<leaf_plan>(forward, m_comm, this->shape(), to_middle);
      r.backward = std::make_unique<leaf_plan>(backward, m_comm, this->shape(), from_middle);
      r.forward_desc = r.forward->description();
      r.backward_desc = r.backward->description();
    } else {
      r.forward_desc = leaf_plan::explain(forward, m_comm, this->shape(), to_middle);
      r.backward_desc = leaf_plan::explain(backward, m_comm, this->shape(), from_middle);
    }
    if (middle.split_by != input_layout(this->shape(), m_comm->grid()).split_by)  // else: in x, as on the host
      r.middle.emplace(m_comm, this->shape(), middle.block(m_comm->grid(), m_comm->coords()));
    return r;
  }

  void rank_one_dots(const std::vector<typename base::rank_one_type>& r, const T* x, T* out) const {
    base::rank_one_dots(r, x, out);
    using R = real_t<T>;
    const int count = int(r.size() * (value_traits<T>::is_complex ? 2 : 1));
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<R*>(out), count,
                            std::is_same_v<R, float> ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM, m_comm->get()),
              "MPI_Allreduce");
  }

private:
  std::shared_ptr<cart_comm> m_comm;
};

template <class T>
using distributed_composite_plan = composite_plan<T, distributed_composite_ops<T>>;

} // namespace kronex::detail
