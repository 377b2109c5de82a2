#pragma once
// Writing a file so that a failure never leaves a partial one: the content goes to
// `path + ".tmp-<pid>"` in the same directory, which is renamed onto `path` once complete, so
// `path` is either the old file or the whole new one. On failure the temporary is removed and a
// file_error naming `path` and the reason is thrown. Used for every file the command writes.
//
// While the temporary exists, SIGINT and SIGTERM remove it before the process dies of the signal
// (handlers installed on the first write, unless the signal is ignored). SIGKILL cannot be caught:
// after it, `path + ".tmp-<pid>"` remains, and `path` is still the old file or absent.
#include <functional>
#include <ostream>
#include <string>

namespace kronex::dsl::io {

void write_file_atomic(const std::string& path, const std::function<void(std::ostream&)>& write);

} // namespace kronex::dsl::io
