#include "io/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
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
#include "io/regular_file.hpp"

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

npy_info read_npy_info(const std::string& path, std::optional<dtype> as) {
  check_regular_file(path, "an npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw file_error(path, 0, "cannot be opened for reading");
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  in.seekg(0, std::ios::beg);
  // The size bounds every length in the file before anything is allocated from it.
  if (end < 0 || !in) throw file_error(path, 0, "cannot determine the file's size");
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
  if (as && is_complex(*type) && !is_complex(*as)) {
    throw file_error(path, 0, std::string("has complex values (") + to_string(*type) + "); ask for complex64 or complex128");
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
  npy_info info;
  info.type = *type;
  info.shape = h.shape;
  info.fortran_order = h.fortran_order;
  info.data_bytes = count * word_size(*type);
  info.data_offset = header_start + header_len;
  if (info.data_bytes > file_size - info.data_offset) {
    throw file_error(path, 0, "truncated data: shape " + format_shape(h.shape) + " of " + to_string(*type) + " needs " +
                                  std::to_string(info.data_bytes) + " bytes, the file has " +
                                  std::to_string(file_size - info.data_offset) + " after the header");
  }
  return info;
}

namespace {

template <class T>
bool finite_value(const T& v) {
  if constexpr (is_complex_v<T>) return std::isfinite(v.real()) && std::isfinite(v.imag());
  else return std::isfinite(v);
}

// The shortest text that reads back as v (nan, inf, -inf as such).
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

template <class S>
[[noreturn]] void refuse_value(const std::string& path, const std::vector<std::size_t>& index, const S& v,
                               const std::string& why) {
  std::string text = "the value at index (";
  for (std::size_t k = 0; k < index.size(); ++k) text += (k ? ", " : "") + std::to_string(index[k]);
  text += index.size() == 1 ? ",)" : ")";
  if constexpr (is_complex_v<S>) text += " is (" + shortest(v.real()) + ", " + shortest(v.imag()) + ")";
  else text += " is " + shortest(v);
  throw file_error(path, 0, text + ": " + why);
}

constexpr const char* not_finite = "values must be finite (nan and inf are refused)";

// The values of a file of S into a row-major array of T. Straight into the array when nothing
// changes; else in blocks, each value converted and put at its row-major place (a Fortran-order
// file walks the first index fastest), so the data is held once either way.
template <class T, class S>
xt::xarray<T> read_values(std::istream& in, const npy_info& h, const std::string& path) {
  auto out = xt::xarray<T>::from_shape(h.shape);
  const std::size_t n = out.size(), rank = h.shape.size();
  const auto read_exactly = [&](void* to, std::uint64_t bytes) {
    in.read(static_cast<char*>(to), std::streamsize(bytes));
    if (std::uint64_t(in.gcount()) != bytes) throw file_error(path, 0, "cannot read the data (I/O error)");
  };
  if constexpr (std::is_same_v<T, S>) {
    if (!h.fortran_order) {
      read_exactly(out.data(), h.data_bytes);
      for (std::size_t k = 0; k < n; ++k) {
        if (finite_value(out.data()[k])) continue;
        std::vector<std::size_t> index(rank);
        for (std::size_t d = rank, rest = k; d-- > 0; rest /= h.shape[d]) index[d] = rest % h.shape[d];
        refuse_value(path, index, out.data()[k], not_finite);
      }
      return out;
    }
  }
  std::vector<std::size_t> index(rank, 0), stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;) stride[d - 1] = stride[d] * h.shape[d];
  std::size_t at = 0;  // row-major offset of `index`
  std::vector<S> block(std::min<std::size_t>(n, std::size_t(1) << 16));
  for (std::size_t done = 0; done < n;) {
    const std::size_t m = std::min(block.size(), n - done);
    read_exactly(block.data(), m * sizeof(S));
    for (std::size_t j = 0; j < m; ++j, ++done) {
      const S& v = block[j];
      if (!finite_value(v)) refuse_value(path, index, v, not_finite);
      const T t = value_as<T>(v);
      if (!finite_value(t)) refuse_value(path, index, v, std::string("it does not fit in ") + to_string(dtype_of<T>()));
      out.data()[at] = t;
      // The next index in file order: the last one fastest in C order, the first in Fortran.
      for (std::size_t step = 0; step < rank; ++step) {
        const std::size_t d = h.fortran_order ? step : rank - 1 - step;
        at += stride[d];
        if (++index[d] < h.shape[d]) break;
        at -= stride[d] * h.shape[d];
        index[d] = 0;
      }
    }
  }
  return out;
}

} // namespace

npy_array read_npy(const std::string& path, std::optional<dtype> as) {
  const npy_info h = read_npy_info(path, as);
  std::ifstream in(path, std::ios::binary);
  in.seekg(std::streamoff(h.data_offset));
  if (!in) throw file_error(path, 0, "cannot be opened for reading");
  npy_array result;
  result.type = as.value_or(h.type);
  result.shape = h.shape;
  try {
    with_dtype(h.type, [&](auto file_zero) {
      using S = decltype(file_zero);
      with_dtype(result.type, [&](auto zero) {
        using T = decltype(zero);
        if constexpr (is_complex_v<S> && !is_complex_v<T>) {
          throw file_error(path, 0, "internal error: complex values read as real");  // refused by read_npy_info
        } else {
          result.data = read_values<T, S>(in, h, path);
        }
      });
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
