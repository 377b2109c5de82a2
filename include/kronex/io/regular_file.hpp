#pragma once
// The files kronex reads must be regular files: a FIFO or a device would block the open or never
// end (/dev/zero), and a directory is not a file. Every reader checks this before it opens.
#include <cerrno>
#include <string>
#include <system_error>

#include <sys/stat.h>

#include "../core/error.hpp"

namespace kronex::io {

// file_error (line 0) for a missing path, a directory ("is a directory, not <what>") or any other
// non-regular file (a FIFO, a device, a socket); `what` is e.g. "a Matrix Market file".
inline void check_regular_file(const std::string& path, const std::string& what) {
  struct stat st {};
  // stat follows links, so a link to a regular file is fine; it never opens the file (opening a
  // FIFO blocks until a writer comes).
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw file_error(path, 0, err == ENOENT ? std::string("no such file")
                                            : "cannot be read (" + std::error_code(err, std::generic_category()).message() + ")");
  }
  if (S_ISDIR(st.st_mode)) throw file_error(path, 0, "is a directory, not " + what);
  if (!S_ISREG(st.st_mode)) {
    const char* kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISSOCK(st.st_mode) ? "a socket" : "a special file";
    throw file_error(path, 0, std::string("is ") + kind + ", not " + what + " (kronex reads regular files only)");
  }
}

} // namespace kronex::io
