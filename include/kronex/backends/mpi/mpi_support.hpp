#pragma once
// MPI helpers for the distributed backend: checked calls, collective error handling and the
// Cartesian communicator a distributed tensor lives on.
#include <cstddef>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <mpi.h>

#include "../../core/error.hpp"
#include "../../core/value_traits.hpp"
#include "block_layout.hpp"

namespace kronex::detail {

inline void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  throw mpi_error(message("kronex: ", call, " failed: ", std::string(text, std::size_t(len)), " (", code, ")"));
}

// v[0..k) = the sum over comm's ranks of their v[0..k), in place: one MPI_Allreduce (a complex
// value is two reals, summed as such).
template <class T>
void allreduce_sum(T* v, std::size_t k, MPI_Comm comm) {
  using R = real_t<T>;
  const int count = int(k * (value_traits<T>::is_complex ? 2 : 1));
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, reinterpret_cast<R*>(v), count, std::is_same_v<R, float> ? MPI_FLOAT : MPI_DOUBLE,
                          MPI_SUM, comm),
            "MPI_Allreduce");
}

// The first exception thrown on this rank by the work run through it, kept until the ranks
// agree: agree() is collective, and if any rank failed, every rank throws there: the failing
// rank its own exception, the others a kronex::error carrying the lowest failing rank's
// message. Costs one MPI_Allreduce of an int (and two broadcasts when something failed).
class deferred_failure {
public:
  // Runs f unless an earlier call failed; an exception is kept, not thrown.
  template <class F>
  void run(F&& f) {
    if (m_failure) return;
    try {
      f();
    } catch (const std::exception& e) {
      m_failure = std::current_exception();
      m_text = e.what();
    } catch (...) {
      m_failure = std::current_exception();
      m_text = "unknown exception";
    }
  }
  bool failed() const noexcept { return bool(m_failure); }

  void agree(MPI_Comm comm) {
    int rank = 0, size = 1;
    check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    const int mine = m_failure ? rank : size;
    int first = size;
    check_mpi(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (first == size) return;
    unsigned long length = m_text.size();
    check_mpi(MPI_Bcast(&length, 1, MPI_UNSIGNED_LONG, first, comm), "MPI_Bcast");
    m_text.resize(length);
    check_mpi(MPI_Bcast(m_text.data(), int(length), MPI_CHAR, first, comm), "MPI_Bcast");
    if (m_failure) std::rethrow_exception(m_failure);
    throw error(message("kronex: failed on rank ", first, ": ", m_text));
  }

private:
  std::exception_ptr m_failure;
  std::string m_text;
};

// Runs f on every rank of comm; if it throws on any rank, every rank throws (deferred_failure).
// So an error found on one rank never leaves the others waiting in a collective call.
template <class F>
void collective(MPI_Comm comm, F&& f) {
  deferred_failure failure;
  failure.run(std::forward<F>(f));
  failure.agree(comm);
}

// An owned MPI datatype (committed), freed with it unless MPI is finalized already.
class mpi_datatype {
public:
  mpi_datatype() = default;
  explicit mpi_datatype(MPI_Datatype t) noexcept : m_type(t) {}
  mpi_datatype(mpi_datatype&& o) noexcept : m_type(o.m_type) { o.m_type = MPI_DATATYPE_NULL; }
  mpi_datatype& operator=(mpi_datatype&& o) noexcept {
    if (this != &o) {
      release();
      m_type = o.m_type;
      o.m_type = MPI_DATATYPE_NULL;
    }
    return *this;
  }
  mpi_datatype(const mpi_datatype&) = delete;
  mpi_datatype& operator=(const mpi_datatype&) = delete;
  ~mpi_datatype() { release(); }
  MPI_Datatype get() const noexcept { return m_type; }

private:
  void release() noexcept {
    if (m_type == MPI_DATATYPE_NULL) return;
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Type_free(&m_type);
    m_type = MPI_DATATYPE_NULL;
  }
  MPI_Datatype m_type = MPI_DATATYPE_NULL;
};

// The values of `part` (global indices, not empty) within a block stored in C order with box
// `whole`, as one committed MPI datatype of T values (a subarray): MPI then reads or writes the
// part where it lies, with no copy into a contiguous buffer.
template <class T>
mpi_datatype subarray_type(const box& part, const box& whole) {
  const std::size_t D = part.extent.size();
  std::vector<int> sizes(D), subsizes(D), starts(D);
  for (std::size_t k = 0; k < D; ++k) {
    sizes[k] = int(whole.extent[k]);
    subsizes[k] = int(part.extent[k]);
    starts[k] = int(part.offset[k] - whole.offset[k]);
  }
  MPI_Datatype value = MPI_DATATYPE_NULL, type = MPI_DATATYPE_NULL;
  check_mpi(MPI_Type_contiguous(int(sizeof(T)), MPI_BYTE, &value), "MPI_Type_contiguous");
  const int made = MPI_Type_create_subarray(int(D), sizes.data(), subsizes.data(), starts.data(), MPI_ORDER_C, value, &type);
  MPI_Type_free(&value);  // the subarray keeps what it needs
  check_mpi(made, "MPI_Type_create_subarray");
  const int committed = MPI_Type_commit(&type);
  mpi_datatype owned(type);  // freed if the commit failed
  check_mpi(committed, "MPI_Type_commit");
  return owned;
}

// A Cartesian communicator (not periodic, ranks not reordered) and the sub-communicators of
// groups of its dimensions, created on demand (collectively) and freed with it.
class cart_comm {
public:
  cart_comm(MPI_Comm parent, const std::vector<int>& grid) : m_grid(grid) {
    int size = 0;
    check_mpi(MPI_Comm_size(parent, &size), "MPI_Comm_size");
    long product = 1;
    std::string text = "(";
    for (std::size_t k = 0; k < grid.size(); ++k) {
      product *= grid[k];
      text += (k ? "," : "") + std::to_string(grid[k]);
    }
    text += grid.size() == 1 ? ",)" : ")";
    bool positive = true;
    for (int g : grid) positive = positive && g >= 1;
    // The same on every rank (grid and communicator size are), so every rank throws.
    if (!positive || product != size) {
      throw dimension_mismatch(message("kronex: the process grid ", text, " has ", product,
                                       " ranks but the communicator has ", size,
                                       positive ? "" : " (every grid entry must be at least 1)"));
    }
    std::vector<int> periods(grid.size(), 0);
    check_mpi(MPI_Cart_create(parent, int(grid.size()), grid.data(), periods.data(), 0, &m_comm), "MPI_Cart_create");
    check_mpi(MPI_Comm_set_errhandler(m_comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
    int rank = 0;
    check_mpi(MPI_Comm_rank(m_comm, &rank), "MPI_Comm_rank");
    m_coords.resize(grid.size());
    check_mpi(MPI_Cart_coords(m_comm, rank, int(grid.size()), m_coords.data()), "MPI_Cart_coords");
    // The ranks sharing this rank's memory (one node), and every rank's node, named by its
    // lowest rank: exchanges within a node can copy directly (node_segments).
    check_mpi(MPI_Comm_split_type(m_comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &m_node), "MPI_Comm_split_type");
    int leader = rank;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, m_node), "MPI_Allreduce");
    m_node_of.resize(std::size_t(size));
    check_mpi(MPI_Allgather(&leader, 1, MPI_INT, m_node_of.data(), 1, MPI_INT, m_comm), "MPI_Allgather");
  }
  ~cart_comm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;  // too late to free: MPI_Finalize released them
    for (auto& s : m_subs) MPI_Comm_free(&s.second);
    MPI_Comm_free(&m_node);
    MPI_Comm_free(&m_comm);
  }
  cart_comm(const cart_comm&) = delete;
  cart_comm& operator=(const cart_comm&) = delete;

  MPI_Comm get() const noexcept { return m_comm; }
  const std::vector<int>& grid() const noexcept { return m_grid; }
  const std::vector<int>& coords() const noexcept { return m_coords; }

  // The ranks that differ from this one only in the grid dimensions `dims` (collective).
  MPI_Comm sub(const std::vector<int>& dims) {
    for (const auto& s : m_subs)
      if (s.first == dims) return s.second;
    std::vector<int> remain(m_grid.size(), 0);
    for (int g : dims) remain[std::size_t(g)] = 1;
    MPI_Comm c;
    check_mpi(MPI_Cart_sub(m_comm, remain.data(), &c), "MPI_Cart_sub");
    m_subs.emplace_back(dims, c);
    return c;
  }

  // The ranks on this rank's node (shared memory), in the order of their ranks here.
  MPI_Comm node() const noexcept { return m_node; }

  // Whether every group of ranks that differ only in the grid dimensions `dims` lies within one
  // node (the same answer on every rank; no communication).
  bool within_nodes(const std::vector<int>& dims) const {
    std::vector<int> c(m_grid.size());
    for (std::size_t p = 0; p < m_node_of.size(); ++p) {
      check_mpi(MPI_Cart_coords(m_comm, int(p), int(c.size()), c.data()), "MPI_Cart_coords");
      for (int g : dims) c[std::size_t(g)] = 0;
      int first = 0;  // the group's first rank
      check_mpi(MPI_Cart_rank(m_comm, c.data(), &first), "MPI_Cart_rank");
      if (m_node_of[p] != m_node_of[std::size_t(first)]) return false;
    }
    return true;
  }

private:
  std::vector<int> m_grid, m_coords;
  MPI_Comm m_comm = MPI_COMM_NULL;
  MPI_Comm m_node = MPI_COMM_NULL;
  std::vector<int> m_node_of;  // per rank: its node's lowest rank
  std::vector<std::pair<std::vector<int>, MPI_Comm>> m_subs;
};

} // namespace kronex::detail
