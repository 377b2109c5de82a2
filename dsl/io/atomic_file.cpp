#include "io/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <mutex>
#include <system_error>

#include <signal.h>
#include <unistd.h>

#include "core/diagnostics.hpp"

namespace kronex::dsl::io {

namespace {

std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }

// The temporary files being written, for the SIGINT/SIGTERM handler to remove. Fixed storage and
// lock-free flags: a handler may only read memory and call async-signal-safe functions (unlink,
// sigaction, raise). A slot's path is written before its flag is set, and the flag cleared
// before the path is reused.
constexpr std::size_t pending_slots = 8;
constexpr std::size_t pending_path_bytes = 4096;
struct pending_temp {
  std::atomic<bool> used{false};
  char path[pending_path_bytes];
};
pending_temp pending[pending_slots];
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs lock-free flags");

extern "C" void remove_pending_and_reraise(int sig) {
  for (auto& p : pending) {
    if (p.used.load()) ::unlink(p.path);
  }
  // Then die of the same signal, as without the handler (the shell sees "killed by SIGTERM").
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

// Installed once, on the first write; a signal the process ignores (nohup) stays ignored.
void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (const int sig : {SIGINT, SIGTERM}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_handler = remove_pending_and_reraise;
      sigemptyset(&sa.sa_mask);
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// Registers `tmp` for removal on SIGINT/SIGTERM while it exists (none if no slot is free or the
// name is too long: the file is then only removed on errors, as before).
class pending_registration {
public:
  explicit pending_registration(const std::string& tmp) {
    if (tmp.size() >= pending_path_bytes) return;
    install_handlers();
    static std::mutex m;  // between threads; the handler reads the flags only
    std::lock_guard<std::mutex> lock(m);
    for (auto& p : pending) {
      if (p.used.load()) continue;
      std::memcpy(p.path, tmp.c_str(), tmp.size() + 1);
      p.used.store(true);
      m_slot = &p;
      return;
    }
  }
  ~pending_registration() {
    if (m_slot) m_slot->used.store(false);
  }
  pending_registration(const pending_registration&) = delete;
  pending_registration& operator=(const pending_registration&) = delete;

private:
  pending_temp* m_slot = nullptr;
};

} // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
  const pending_registration registered(tmp);
  try {
    // The stream's state is checked after the close: a full disk must not go unnoticed.
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      const int err = errno;
      throw file_error(path, 0, "cannot write: the temporary file \"" + tmp + "\" cannot be created (" +
                                    errno_text(err) + ")");
    }
    write(out);
    out.close();
    if (!out) {
      const int err = errno;
      throw file_error(path, 0, "cannot write the temporary file \"" + tmp + "\" (" + errno_text(err) + ")");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
      const int err = errno;
      throw file_error(path, 0, "cannot move the temporary file \"" + tmp + "\" onto it (" + errno_text(err) + ")");
    }
  } catch (const std::exception& e) {
    std::remove(tmp.c_str());  // harmless if it was never created
    if (dynamic_cast<const file_error*>(&e)) throw;
    throw file_error(path, 0, std::string("cannot write: ") + e.what());
  }
}

} // namespace kronex::dsl::io
