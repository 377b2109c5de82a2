#pragma once
// The distributed backend's hooks for composite plans (operator sums, compositions, fast
// diagonalisation; backends/composite/composite_plan.hpp), host ranks: each Kronecker product in
// the expression runs as a distributed plan (local plans between exchanges, ending in the input
// layout), and the whole-tensor kernels run on this rank's block with the host's kernels, at the
// block's global offset (the eigenvalue scaling reads the eigenvalues of its global indices).
// The pseudo-inverse's dot products are summed over the ranks with one MPI_Allreduce.
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
