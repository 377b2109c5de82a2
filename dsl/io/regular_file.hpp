#pragma once
// The files kronex reads (npy, Matrix Market, the program with -f) must be regular files: the
// library's check (kronex/io/regular_file.hpp), which its Matrix Market reader makes too.
#include <kronex/io/regular_file.hpp>

namespace kronex::dsl::io {

// file_error (line 0) for a missing path, a directory ("is a directory, not <what>") or any other
// non-regular file (a FIFO, a device, a socket); `what` is e.g. "an npy file".
using kronex::io::check_regular_file;

} // namespace kronex::dsl::io
