#include "io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <system_error>

#include <unistd.h>

#include "core/diagnostics.hpp"

namespace kronex::dsl::io {

namespace {
std::string errno_text(int err) { return std::error_code(err, std::generic_category()).message(); }
} // namespace

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write) {
  const std::string tmp = path + ".tmp-" + std::to_string(::getpid());
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
