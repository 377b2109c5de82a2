#pragma once
// The files kronex reads (npy, Matrix Market, the program with -f) must be regular files: a FIFO
// or a device would block the open or never end (/dev/zero), and a directory is not a file.
#include <string>

namespace kronex::dsl::io {

// file_error (line 0) for a missing path, a directory ("is a directory, not <what>") or any other
// non-regular file (a FIFO, a device, a socket); `what` is e.g. "an npy file".
void check_regular_file(const std::string& path, const std::string& what);

} // namespace kronex::dsl::io
