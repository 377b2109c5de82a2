#pragma once
// node_segments: memory that every rank of a node reads and writes directly. Each rank of the
// node communicator owns one segment (POSIX shared memory, allocated by its owner, so that its
// pages lie near the owner), and maps every other rank's. Creating them is collective; destroying
// them is not (each rank unmaps its own view), so an object holding them is destroyed as freely
// as any other. The names are unlinked once every rank has mapped them: nothing is left in
// /dev/shm, even when a rank dies later.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "mpi_support.hpp"

namespace kronex::detail {

class node_segments {
public:
  node_segments() = default;

  // Collective over `all` (every rank of the plan; errors are raised on each of them): each rank
  // asks for `bytes` of its own, shared with the ranks of `node` (its node, a part of `all`).
  node_segments(MPI_Comm node, MPI_Comm all, std::size_t bytes) {
    int size = 1;
    check_mpi(MPI_Comm_size(node, &size), "MPI_Comm_size");
    m_maps.assign(std::size_t(size), mapping{});
    m_bytes.assign(std::size_t(size), 0);
    deferred_failure failure;
    char name[name_length] = {};
    int fd = -1;
    failure.run([&] { fd = create(name, bytes); });
    std::vector<char> names(std::size_t(size) * name_length);
    const unsigned long mine = bytes;
    std::vector<unsigned long> sizes(static_cast<std::size_t>(size));
    check_mpi(MPI_Allgather(name, name_length, MPI_CHAR, names.data(), name_length, MPI_CHAR, node), "MPI_Allgather");
    check_mpi(MPI_Allgather(&mine, 1, MPI_UNSIGNED_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG, node), "MPI_Allgather");
    int me = 0;
    check_mpi(MPI_Comm_rank(node, &me), "MPI_Comm_rank");
    for (std::size_t r = 0; r < std::size_t(size); ++r) {
      m_bytes[r] = sizes[r];
      const char* other = names.data() + r * name_length;
      failure.run([&] {
        if (other[0] == '\0') throw error("kronex: another rank of this node could not create its shared memory");
        if (int(r) == me) {
          m_maps[r] = map(fd, sizes[r]);
          return;
        }
        const int theirs = open_existing(other);
        try {
          m_maps[r] = map(theirs, sizes[r]);
        } catch (...) {
          close(theirs);
          throw;
        }
        close(theirs);
      });
    }
    if (fd >= 0) close(fd);
    // Every rank has mapped every segment (or failed) once all agree: the names can go.
    try {
      failure.agree(all);
    } catch (...) {
      if (name[0] != '\0') shm_unlink(name);
      throw;
    }
    if (name[0] != '\0') shm_unlink(name);
  }

  node_segments(node_segments&& o) noexcept : m_maps(std::move(o.m_maps)), m_bytes(std::move(o.m_bytes)) { o.m_maps.clear(); }
  node_segments& operator=(node_segments&& o) noexcept {
    if (this != &o) {
      release();
      m_maps = std::move(o.m_maps);
      m_bytes = std::move(o.m_bytes);
      o.m_maps.clear();
    }
    return *this;
  }
  node_segments(const node_segments&) = delete;
  node_segments& operator=(const node_segments&) = delete;
  ~node_segments() { release(); }

  bool empty() const noexcept { return m_maps.empty(); }
  // Rank r's segment (r: its rank in the node communicator) and its size in bytes.
  void* of(int r) const noexcept { return m_maps[std::size_t(r)].base; }
  std::size_t bytes_of(int r) const noexcept { return m_bytes[std::size_t(r)]; }

private:
  struct mapping {
    void* base = nullptr;
    std::size_t length = 0;
  };
  static constexpr int name_length = 64;

  // This rank's segment, created and allocated (posix_fallocate: a full /dev/shm is an error
  // here, not a SIGBUS when the memory is first touched); its name written to `name`.
  static int create(char* name, std::size_t bytes) {
    static std::atomic<unsigned long> counter{0};
    std::string text;
    int fd = -1;
    for (int attempt = 0; fd < 0 && attempt < 64; ++attempt) {  // a name left by a process that died skips on
      text = "/kronex." + std::to_string(long(getpid())) + "." + std::to_string(counter++);
      fd = shm_open(text.c_str(), O_CREAT | O_EXCL | O_RDWR, S_IRUSR | S_IWUSR);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) fail("shm_open", text, bytes, errno);
    const int err = posix_fallocate(fd, 0, off_t(std::max<std::size_t>(bytes, 1)));
    if (err != 0) {
      close(fd);
      shm_unlink(text.c_str());
      fail("posix_fallocate", text, bytes, err);
    }
    std::strncpy(name, text.c_str(), name_length - 1);
    return fd;
  }

  static int open_existing(const char* name) {
    const int fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) fail("shm_open", name, 0, errno);
    return fd;
  }

  static mapping map(int fd, std::size_t bytes) {
    mapping m;
    m.length = std::max<std::size_t>(bytes, 1);
    void* p = mmap(nullptr, m.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) fail("mmap", "", bytes, errno);
    m.base = p;
    return m;
  }

  [[noreturn]] static void fail(const char* call, const std::string& name, std::size_t bytes, int err) {
    throw error(message("kronex: shared memory for exchanges within a node (", bytes, " bytes", name.empty() ? "" : " at ",
                        name, "): ", call, " failed: ", std::strerror(err),
                        "; exchange_transport::subarray exchanges through MPI messages instead"));
  }

  void release() noexcept {
    for (mapping& m : m_maps)
      if (m.base) munmap(m.base, m.length);
    m_maps.clear();
  }

  std::vector<mapping> m_maps;
  std::vector<std::size_t> m_bytes;
};

} // namespace kronex::detail
