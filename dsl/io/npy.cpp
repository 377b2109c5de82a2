#include "io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

#include <xtl/xplatform.hpp>

#include <kronex/core/value_traits.hpp>

#include "core/diagnostics.hpp"
#include "core/format.hpp"
#include "io/atomic_file.hpp"

namespace kronex::dsl::io {

namespace {

constexpr const char* accepted_dtypes = "accepted: '<f4' (float32), '<f8' (float64), '<c8' (complex64), '<c16' (complex128)";

struct npy_header {
  std::string descr;
  bool fortran_order = false;
  std::vector<std::size_t> shape;
};

// A cursor over the header, a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
// Only the forms np.save writes are accepted (keys in any order, as the format allows).
class header_parser {
public:
  header_parser(std::string_view text, const std::string& path) : m_s(text), m_path(path) {}

  npy_header parse() {
    npy_header h;
    bool descr = false, fortran = false, shape = false;
    skip_space();
    if (!eat('{')) fail("it does not start with '{'");
    for (;;) {
      skip_space();
      if (eat('}')) break;
      std::string key;
      if (!quoted(key)) fail("expected a quoted key");
      skip_space();
      if (!eat(':')) fail("expected ':' after '" + key + "'");
      skip_space();
      bool* seen = nullptr;
      if (key == "descr") {
        seen = &descr;
        if (peek() == '[') {
          throw file_error(m_path, 0, std::string("unsupported dtype: a structured (record) dtype; ") + accepted_dtypes);
        }
        if (!quoted(h.descr)) fail("'descr' is not a string");
      } else if (key == "fortran_order") {
        seen = &fortran;
        if (word("True")) h.fortran_order = true;
        else if (word("False")) h.fortran_order = false;
        else fail("'fortran_order' is not True or False");
      } else if (key == "shape") {
        seen = &shape;
        read_shape(h.shape);
      } else {
        fail("unexpected key '" + key + "'");
      }
      if (std::exchange(*seen, true)) fail("the key '" + key + "' appears twice");
      skip_space();
      if (eat(',')) continue;
      if (eat('}')) break;
      fail("expected ',' or '}' after the value of '" + key + "'");
    }
    skip_space();
    if (m_p != m_s.size()) fail("text after the closing '}'");
    if (!descr) fail("missing key 'descr'");
    if (!fortran) fail("missing key 'fortran_order'");
    if (!shape) fail("missing key 'shape'");
    return h;
  }

private:
  [[noreturn]] void fail(const std::string& what) const { throw file_error(m_path, 0, "malformed npy header: " + what); }

  char peek() const { return m_p < m_s.size() ? m_s[m_p] : '\0'; }
  bool eat(char c) {
    if (peek() != c || m_p >= m_s.size()) return false;
    ++m_p;
    return true;
  }
  bool word(std::string_view w) {
    if (m_s.substr(m_p, w.size()) != w) return false;
    m_p += w.size();
    return true;
  }
  void skip_space() {
    while (m_p < m_s.size() && (m_s[m_p] == ' ' || m_s[m_p] == '\t' || m_s[m_p] == '\n' || m_s[m_p] == '\r')) ++m_p;
  }
  // 'text' or "text", without escapes (no dtype string or key needs one).
  bool quoted(std::string& out) {
    const char q = peek();
    if (q != '\'' && q != '"') return false;
    const std::size_t end = m_s.find(q, m_p + 1);
    if (end == std::string_view::npos) return false;
    out = std::string(m_s.substr(m_p + 1, end - m_p - 1));
    if (out.find('\\') != std::string::npos) return false;
    m_p = end + 1;
    return true;
  }
  // (), (3,), (3, 4) and also (3L, 4L) from Python 2.
  void read_shape(std::vector<std::size_t>& shape) {
    if (!eat('(')) fail("'shape' is not a tuple");
    for (;;) {
      skip_space();
      if (eat(')')) return;
      std::size_t v = 0;
      const char* first = m_s.data() + m_p;
      const auto [p, ec] = std::from_chars(first, m_s.data() + m_s.size(), v);
      if (ec == std::errc::result_out_of_range) fail("a dimension in 'shape' is too large");
      if (ec != std::errc()) fail("'shape' holds something other than non-negative integers");
      m_p += std::size_t(p - first);
      eat('L');
      shape.push_back(v);
      // NumPy allows 32 (1.x) or 64 (2.x) dimensions.
      if (shape.size() > 64) fail("'shape' has more than 64 dimensions");
      skip_space();
      if (eat(',')) continue;
      if (eat(')')) return;
      fail("'shape' is not a tuple of integers");
    }
  }

  std::string_view m_s;
  std::size_t m_p = 0;
  const std::string& m_path;
};

// '<f8' etc. on this machine; big-endian data or any other kind/size is rejected by the caller.
std::optional<dtype> accepted_dtype(std::string_view d, bool& wrong_byte_order) {
  wrong_byte_order = false;
  if (d.size() < 3) return std::nullopt;
  const char native = xtl::endianness() == xtl::endian::little_endian ? '<' : '>';
  const std::string_view kind = d.substr(1);
  std::optional<dtype> t;
  if (kind == "f4") t = dtype::float32;
  else if (kind == "f8") t = dtype::float64;
  else if (kind == "c8") t = dtype::complex64;
  else if (kind == "c16") t = dtype::complex128;
  if (!t) return std::nullopt;
  if (d[0] == native || d[0] == '=' || d[0] == '|') return t;
  wrong_byte_order = d[0] == '<' || d[0] == '>';
  return std::nullopt;
}

std::size_t word_size(dtype t) {
  switch (t) {
    case dtype::float32: return 4;
    case dtype::float64:
    case dtype::complex64: return 8;
    case dtype::complex128: break;
  }
  return 16;
}

template <class T>
inline constexpr bool is_complex_v = !std::is_floating_point_v<T>;

template <class T, class S>
T value_as(const S& v) {
  using R = kronex::real_t<T>;
  if constexpr (is_complex_v<T> && is_complex_v<S>) return T(R(v.real()), R(v.imag()));
  else return T(R(v));
}

} // namespace

npy_array read_npy(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw file_error(path, 0, "is a directory, not an npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, 0, std::filesystem::exists(path, ec) ? "cannot be opened for reading" : "no such file");
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  in.seekg(0, std::ios::beg);
  // The size bounds every length in the file before anything is allocated from it.
  if (end < 0 || !in) throw file_error(path, 0, "cannot determine the file's size (not a regular file?)");
  const auto file_size = static_cast<std::uint64_t>(end);

  // Magic "\x93NUMPY", version major.minor, header length (2 bytes in 1.0, 4 in 2.0 and 3.0), little endian.
  unsigned char pre[12] = {};
  in.read(reinterpret_cast<char*>(pre), 8);
  if (in.gcount() != 8 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    throw file_error(path, 0, "not an npy file (it does not start with \\x93NUMPY)");
  const unsigned major = pre[6], minor = pre[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0) {
    throw file_error(path, 0, "unsupported npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                                  " (expected 1.0, 2.0 or 3.0)");
  }
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char*>(pre + 8), std::streamsize(len_bytes));
  if (std::size_t(in.gcount()) != len_bytes) throw file_error(path, 0, "truncated npy file: it ends inside the header length");
  std::uint64_t header_len = 0;
  for (std::size_t k = len_bytes; k-- > 0;) header_len = (header_len << 8) | pre[8 + k];
  const std::uint64_t header_start = 8 + len_bytes;
  if (header_len > file_size - header_start) {
    throw file_error(path, 0, "truncated npy file: the header is announced as " + std::to_string(header_len) +
                                  " bytes, the file has only " + std::to_string(file_size - header_start) + " after it starts");
  }
  std::string text(static_cast<std::size_t>(header_len), '\0');
  in.read(text.data(), std::streamsize(header_len));
  if (std::uint64_t(in.gcount()) != header_len) throw file_error(path, 0, "cannot read the npy header (I/O error)");

  const npy_header h = header_parser(text, path).parse();
  bool wrong_byte_order = false;
  const std::optional<dtype> type = accepted_dtype(h.descr, wrong_byte_order);
  if (!type) {
    const bool big = xtl::endianness() == xtl::endian::big_endian;
    const std::string order = std::string(" (") + (big ? "little" : "big") + "-endian data; this machine is " +
                              (big ? "big" : "little") + "-endian)";
    throw file_error(path, 0, "unsupported dtype '" + h.descr + "'" + (wrong_byte_order ? order : "") + "; " +
                                  accepted_dtypes);
  }

  // The data must all be there before xtensor allocates for it. The nonzero dimensions are bounded
  // even when a zero one makes the array empty: xtensor multiplies them out for the strides (as
  // numpy, which refuses such shapes too).
  std::uint64_t count = 1, extent = 1;
  for (std::size_t d : h.shape) {
    if (d != 0 && extent > std::numeric_limits<std::uint64_t>::max() / 16 / d)
      throw file_error(path, 0, "the shape " + format_shape(h.shape) + " is too large");
    if (d != 0) extent *= d;
    count *= d;
  }
  const std::uint64_t bytes = count * word_size(*type);
  const std::uint64_t data_start = header_start + header_len;
  if (bytes > file_size - data_start) {
    throw file_error(path, 0, "truncated data: shape " + format_shape(h.shape) + " of " + to_string(*type) + " needs " +
                                  std::to_string(bytes) + " bytes, the file has " +
                                  std::to_string(file_size - data_start) + " after the header");
  }

  npy_array result;
  result.type = *type;
  result.shape = h.shape;
  try {
    with_dtype(*type, [&](auto zero) {
      using T = decltype(zero);
      // The data is read straight into an array of the file's order (native byte order, checked
      // above); assigning a Fortran-order one to a row-major xarray reorders it.
      auto read_into = [&](auto& a) {
        in.read(reinterpret_cast<char*>(a.data()), std::streamsize(bytes));
        if (std::uint64_t(in.gcount()) != bytes) throw file_error(path, 0, "cannot read the data (I/O error)");
      };
      if (h.fortran_order) {
        auto f = xt::xarray<T, xt::layout_type::column_major>::from_shape(h.shape);
        read_into(f);
        result.data = xt::xarray<T>(f);
      } else {
        auto c = xt::xarray<T>::from_shape(h.shape);
        read_into(c);
        result.data = std::move(c);
      }
    });
  } catch (const file_error&) {
    throw;
  } catch (const std::exception& e) {
    throw file_error(path, 0, std::string("cannot load the data: ") + e.what());
  }
  return result;
}

template <class T>
xt::xarray<T> convert(const npy_array& a, const std::string& name) {
  return std::visit([&](const auto& src) -> xt::xarray<T> {
    using S = typename std::decay_t<decltype(src)>::value_type;
    if constexpr (is_complex_v<S> && !is_complex_v<T>) {
      throw file_error(name, 0, std::string("has complex values (") + to_string(a.type) +
                                    "); ask for complex64 or complex128");
    } else {
      xt::xarray<T> out = xt::xarray<T>::from_shape(src.shape());
      std::transform(src.begin(), src.end(), out.begin(), [](const S& v) { return value_as<T>(v); });
      return out;
    }
  }, a.data);
}

namespace {

// An npy 1.0 file as np.save writes it: magic, version, header length, the header dict padded
// with spaces to a multiple of 64 bytes and ended by '\n', then the values in C order.
template <class T>
void write_npy(std::ostream& out, const xt::xarray<T>& x) {
  const char native = xtl::endianness() == xtl::endian::little_endian ? '<' : '>';
  std::string dict = std::string("{'descr': '") + native + (is_complex_v<T> ? 'c' : 'f') + std::to_string(sizeof(T)) +
                     "', 'fortran_order': False, 'shape': (";
  for (std::size_t k = 0; k < x.dimension(); ++k) dict += (k ? ", " : "") + std::to_string(x.shape()[k]);
  dict += x.dimension() == 1 ? ",), }" : "), }";
  const std::size_t prefix = 10;  // magic (6), version (2), header length (2)
  dict.append(63 - (prefix + dict.size()) % 64, ' ');
  dict += '\n';
  const unsigned char pre[prefix] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<unsigned char>(dict.size() & 0xff),
                                     static_cast<unsigned char>(dict.size() >> 8)};
  out.write(reinterpret_cast<const char*>(pre), prefix);
  out << dict;
  out.write(reinterpret_cast<const char*>(x.data()), std::streamsize(x.size() * sizeof(T)));
}

} // namespace

template <class T>
void write_npy_atomic(const std::string& path, const xt::xarray<T>& x) {
  // Our own stream rather than xt::dump_npy(path, x), which never checks that the writes or the
  // close succeeded.
  write_file_atomic(path, [&](std::ostream& out) { write_npy(out, x); });
}

#define KRONEX_DSL_NPY_INSTANTIATE(T)                                        \
  template xt::xarray<T> convert<T>(const npy_array&, const std::string&);  \
  template void write_npy_atomic<T>(const std::string&, const xt::xarray<T>&);
KRONEX_DSL_NPY_INSTANTIATE(float)
KRONEX_DSL_NPY_INSTANTIATE(double)
KRONEX_DSL_NPY_INSTANTIATE(std::complex<float>)
KRONEX_DSL_NPY_INSTANTIATE(std::complex<double>)
#undef KRONEX_DSL_NPY_INSTANTIATE

} // namespace kronex::dsl::io
