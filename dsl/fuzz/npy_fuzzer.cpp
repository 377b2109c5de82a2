// libFuzzer target: the npy reader (header, dtype, shape and data checks) and the conversions to
// the four value types on arbitrary bytes. Any input must either give an array whose data holds
// exactly the values its shape counts, or raise kronex::error. read_npy takes a path, so each
// input is written to a scratch file of this process first.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <system_error>
#include <variant>

#include <unistd.h>

#include <kronex/core/error.hpp>

#include "io/npy.hpp"

namespace {

// In memory (/dev/shm) where there is one: on a disk the file writes, not the reader, set the
// pace (about 30 times fewer inputs per second here). Removed when the fuzzer exits normally.
struct scratch_file {
  std::string path;
  scratch_file() {
    std::error_code ec;
    const std::filesystem::path dir =
        std::filesystem::is_directory("/dev/shm", ec) ? std::filesystem::path("/dev/shm") : std::filesystem::temp_directory_path();
    path = (dir / ("kronex-npy-fuzz-" + std::to_string(::getpid()) + ".npy")).string();
  }
  ~scratch_file() { std::remove(path.c_str()); }
};

const std::string& scratch() {
  static const scratch_file file;
  return file.path;
}

template <class T>
void convert_to(const kronex::dsl::io::npy_array& a) {
  try {
    const auto x = kronex::dsl::io::convert<T>(a, "fuzz.npy");
    if (x.size() != std::visit([](const auto& d) { return d.size(); }, a.data)) __builtin_trap();
  } catch (const kronex::error&) {  // complex to real
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  {
    std::ofstream out(scratch(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
    if (!out.flush()) __builtin_trap();  // the harness, not the reader, failed
  }
  try {
    const kronex::dsl::io::npy_array a = kronex::dsl::io::read_npy(scratch());
    std::size_t count = 1;
    for (std::size_t d : a.shape) count *= d;
    const std::size_t held = std::visit([](const auto& d) { return d.size(); }, a.data);
    if (held != count || std::visit([](const auto& d) { return d.dimension(); }, a.data) != a.shape.size())
      __builtin_trap();
    convert_to<float>(a);
    convert_to<std::complex<double>>(a);
  } catch (const kronex::error&) {
  }
  return 0;
}
