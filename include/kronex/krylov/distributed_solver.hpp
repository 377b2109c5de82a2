#pragma once
// Krylov solves on distributed tensors (docs/krylov.md, "What runs where"; docs/distributed.md):
// kronex::cg, bicgstab, gmres, minres and compile_krylov take b and x as
// kronex::distributed_tensor<T, D>, x the initial guess in and the solution out. The methods are
// the host's, run by every rank on its block over a distributed_space (one MPI_Allreduce per
// batch of dot products, the scalars replicated). The operator and the preconditioner are:
//
//   a kronex expression   compiled into its distributed plan, as kronex::compile(expr, b) would
//                         (with its exchanges); the main case
//   matrix_free<T>        f(x, y) gets this rank's block of x and writes this rank's block of y
//                         (C order, the tensor's local_shape()); shape() is the global shape. A
//                         block-diagonal action (a pointwise scaling) needs nothing else; f may
//                         communicate itself, every rank calls it at the same time. An exception
//                         thrown by f on some ranks is raised on every rank.
//   sparse_operator<T>    the whole matrix on every rank (the one the program built, the same on
//                         every rank): each apply gathers the whole x on every rank (one
//                         MPI_Allgatherv, N values received per rank) and computes the rows of
//                         the rank's block. Simple and correct, not scalable: O(N) memory and
//                         communication per rank and apply. When no rank's rows refer to another
//                         rank's block (a diagonal, kronex::jacobi), nothing is gathered.
#include <array>
#include <climits>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../backends/mpi/distributed_operator.hpp"
#include "../backends/mpi/distributed_tensor.hpp"
#include "distributed_space.hpp"
#include "solver.hpp"

namespace kronex {

namespace detail {

template <std::size_t D>
std::string format_grid(const std::array<int, D>& g) {
  std::string s = "(";
  for (std::size_t k = 0; k < D; ++k) s += (k ? "," : "") + std::to_string(g[k]);
  return s + (D == 1 ? ",)" : ")");
}

// A sparse_operator's product on distributed blocks: x gathered whole on every rank, then the
// rows of this rank's block (their global C-order indices) computed from it; or, when every
// rank's rows only refer to its own block (the ranks agree on it when compiling), computed from
// the block alone, with no communication.
template <class T>
class distributed_sparse_product {
public:
  template <std::size_t D>
  distributed_sparse_product(const sparse_operator<T>& a, const distribution<D>& like)
      : m_a(a), m_cart(like.cart()) {
    const MPI_Comm comm = like.comm();
    int size = 1;
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    const block_layout layout = like.layout();
    const std::vector<int> grid(like.grid().begin(), like.grid().end());
    constexpr std::size_t parts = value_traits<T>::is_complex ? 2 : 1;  // reals per value
    std::size_t at = 0;
    for (int r = 0; r < size; ++r) {
      std::vector<int> coords(D);
      check_mpi(MPI_Cart_coords(comm, r, int(D), coords.data()), "MPI_Cart_coords");
      m_boxes.push_back(layout.block(grid, coords));
      m_counts.push_back(int(m_boxes.back().size() * parts));
      m_displs.push_back(int(at * parts));
      at += m_boxes.back().size();
    }
    m_global_box.offset.assign(D, 0);
    m_global_box.extent = m_a.shape();
    // The global C-order index of each element of this rank's block: its rows.
    box mine;
    mine.offset.assign(like.local_offset().begin(), like.local_offset().end());
    mine.extent.assign(like.local_shape().begin(), like.local_shape().end());
    m_rows.resize(mine.size());
    std::vector<std::size_t> index(m_a.size());
    for (std::size_t i = 0; i < index.size(); ++i) index[i] = i;
    copy_box(mine, m_global_box, index.data(), mine, m_rows.data());
    // Block-local when every column of this rank's rows is in its block, on every rank (the
    // gather is collective: all ranks must choose alike).
    m_local_index.assign(m_a.size(), npos);
    for (std::size_t l = 0; l < m_rows.size(); ++l) m_local_index[m_rows[l]] = l;
    int local = 1;
    for (std::size_t l = 0; l < m_rows.size() && local; ++l)
      for (std::size_t k = m_a.row_ptr()[m_rows[l]]; k < m_a.row_ptr()[m_rows[l] + 1]; ++k)
        if (m_local_index[m_a.col_idx()[k]] == npos) local = 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &local, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    m_block_local = local == 1;
    // The same N on every rank: every rank throws.
    if (!m_block_local && a.size() * parts > std::size_t(INT_MAX))
      throw error(message("kronex: a sparse_operator on distributed tensors gathers x whole on every rank; ", a.size(),
                          " values are more than one MPI_Allgatherv sends"));
    if (!m_block_local) {
      m_packed.resize(at);
      m_whole.resize(m_a.size());
    }
  }

  void operator()(const T* x, T* y) {
    if (m_block_local) return product(x, m_local_index.data(), y);
    gather(x);
    return product(m_whole.data(), nullptr, y);
  }

private:
  static constexpr std::size_t npos = std::size_t(-1);

  // y = this rank's rows times x: x indexed by global column, or through `at` (global column to
  // position in x).
  void product(const T* x, const std::size_t* at, T* y) const {
    const std::size_t* rp = m_a.row_ptr().data();
    const std::size_t* ci = m_a.col_idx().data();
    const T* v = m_a.values().data();
    for (std::size_t l = 0; l < m_rows.size(); ++l) {
      const std::size_t i = m_rows[l];
      T s{};
      for (std::size_t k = rp[i]; k < rp[i + 1]; ++k) s += v[k] * x[at ? at[ci[k]] : ci[k]];
      y[l] = s;
    }
  }

  // m_whole = the whole x, from every rank's block.
  void gather(const T* x) {
    using R = real_t<T>;
    const int rank_count = int(m_boxes.size());
    int me = 0;
    check_mpi(MPI_Comm_rank(m_cart->get(), &me), "MPI_Comm_rank");
    const MPI_Datatype type = std::is_same_v<R, float> ? MPI_FLOAT : MPI_DOUBLE;
    check_mpi(MPI_Allgatherv(reinterpret_cast<const R*>(x), m_counts[std::size_t(me)], type,
                             reinterpret_cast<R*>(m_packed.data()), m_counts.data(), m_displs.data(), type, m_cart->get()),
              "MPI_Allgatherv");
    constexpr std::size_t parts = value_traits<T>::is_complex ? 2 : 1;
    for (int r = 0; r < rank_count; ++r) {
      const box& b = m_boxes[std::size_t(r)];
      copy_box(b, b, m_packed.data() + std::size_t(m_displs[std::size_t(r)]) / parts, m_global_box, m_whole.data());
    }
  }

  sparse_operator<T> m_a;  // shares the arrays
  std::shared_ptr<cart_comm> m_cart;
  std::vector<box> m_boxes;  // every rank's block, by rank
  std::vector<int> m_counts, m_displs;
  box m_global_box;
  std::vector<std::size_t> m_rows;         // the global index of each block element
  std::vector<std::size_t> m_local_index;  // a global index's position in the block, or npos
  bool m_block_local = false;
  std::vector<T> m_packed, m_whole;        // gathering only
};

// The operator (or preconditioner) as a linear map on this rank's blocks of tensors like `like`.
template <class T, class O, std::size_t D>
typename krylov::distributed_space<T>::map distributed_krylov_map(const O& o, const distributed_tensor<T, D>& like,
                                                                  const char* method, const char* role) {
  // Global shapes, the same on every rank: every rank throws.
  check_krylov_operator<T>(o, shape_t(like.global_shape().begin(), like.global_shape().end()), method, role,
                           "global shape");
  if constexpr (std::is_same_v<O, sparse_operator<T>>) {
    auto product = std::make_shared<distributed_sparse_product<T>>(o, like);
    return [product](const T* x, T* y) { (*product)(x, y); };
  } else if constexpr (std::is_same_v<O, matrix_free<T>>) {
    // Collective, so that f throwing on some ranks only raises on every rank (one MPI_Allreduce
    // of an int) instead of leaving the others in the next reduction.
    return [o, cart = like.cart()](const T* x, T* y) { collective(cart->get(), [&] { o.run(x, y); }); };
  } else {
    // Collective (compile raises on every rank); shared, as on the host (plans are move-only).
    auto op = std::make_shared<decltype(kronex::compile(o, like))>(kronex::compile(o, like));
    return [op](const T* x, T* y) { op->run(x, y); };
  }
}

} // namespace detail

// A compiled Krylov solve for distributed tensors of one global shape and process grid (what
// compile_krylov returns for a distributed b_like): the operator and the preconditioner compiled
// into their distributed plans, each rank's workspace (its blocks of the method's vectors)
// allocated. solver(b, x) is collective: every rank of the grid calls it, and every rank returns
// the same krylov_result. It allocates no vector (a copy of b's block when b is x). Move-only.
template <class T, std::size_t D>
class distributed_krylov_solver : public detail::krylov_solver_base<krylov::distributed_space<T>> {
  using space = krylov::distributed_space<T>;
  using base = detail::krylov_solver_base<space>;

public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = distributed_tensor<T, D>;

  // Collective over like's communicator.
  template <class A, class P, class R>
  distributed_krylov_solver(const krylov::method_entry<space>& m, const A& a, const P* p, const tensor_type& like,
                            const krylov_options<R>& opt)
      : base(m, detail::resolve_options(opt, m.name, m.default_max_factor, detail::product(global_of(like))),
             detail::distributed_krylov_map<T>(a, like, m.name, "operator"),
             p ? detail::distributed_krylov_map<T>(*p, like, m.name, "preconditioner") : typename base::map(),
             [&like](std::size_t vectors, std::size_t slots) {
               return space(like.comm(), detail::product(shape_t(like.local_shape().begin(), like.local_shape().end())),
                            vectors, slots);
             }),
        m_shape(global_of(like)),
        m_grid(like.grid()),
        m_cart(like.cart()) {}

  // Solves A x = b from the initial guess in x (collective); returns what happened, the same on
  // every rank.
  krylov_result operator()(const tensor_type& b, tensor_type& x) {
    check(b, "right-hand side");
    check(x, "solution x");
    if (b.local().data() != x.local().data()) return this->run(b.local().data(), x.local().data());
    const xt::xtensor<T, D> copy = b.local();
    return this->run(copy.data(), x.local().data());
  }

  // The global shape and the process grid.
  const shape_t& shape() const noexcept { return m_shape; }
  const typename tensor_type::grid_type& grid() const noexcept { return m_grid; }

  // The one-shot functions' check: b and x of the same global shape and grid (both named).
  template <class B>
  static void check_operands(const char* method, const B& b, const tensor_type& x) {
    static_assert(std::is_same_v<B, tensor_type>,
                  "kronex: with a distributed x, b must be a kronex::distributed_tensor of the same value type and rank");
    detail::check_krylov_operands(method, global_of(b), global_of(x), "global shape");
    if (b.grid() != x.grid())
      throw dimension_mismatch(detail::message("kronex::", method, ": x is on the process grid ",
                                               detail::format_grid(x.grid()), " but b on ", detail::format_grid(b.grid())));
  }

private:
  static shape_t global_of(const tensor_type& t) { return shape_t(t.global_shape().begin(), t.global_shape().end()); }

  // The same global shape and grid on every rank, so a mismatch throws on every rank.
  void check(const tensor_type& t, const char* what) const {
    detail::check_shape(global_of(t), m_shape, what, detail::shape_source::compiled);
    if (t.grid() != m_grid)
      throw dimension_mismatch(detail::message("kronex::", this->method(), ": the ", what, "'s process grid ",
                                               detail::format_grid(t.grid()), " differs from the compiled one ",
                                               detail::format_grid(m_grid)));
  }

  shape_t m_shape;
  typename tensor_type::grid_type m_grid;
  std::shared_ptr<detail::cart_comm> m_cart;  // the communicator the space reduces over
};

namespace detail {
template <class T, std::size_t D>
struct krylov_target<distributed_tensor<T, D>> : std::true_type {
  using solver = distributed_krylov_solver<T, D>;
};
} // namespace detail

} // namespace kronex
