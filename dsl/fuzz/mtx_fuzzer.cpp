// libFuzzer target: the Matrix Market reader and the storage choice on arbitrary bytes. Any
// input must either give a matrix (turned into a factor when square) or raise kronex::error.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "io/matrix_market.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    const auto m = kronex::dsl::io::parse_matrix_market(in, "fuzz.mtx");
    if (m.rows == m.cols && m.rows <= 4096) {
      if (m.is_complex) (void)kronex::dsl::io::to_factor<std::complex<double>>(m, "fuzz.mtx");
      else (void)kronex::dsl::io::to_factor<double>(m, "fuzz.mtx");
    }
  } catch (const kronex::error&) {
  }
  return 0;
}
