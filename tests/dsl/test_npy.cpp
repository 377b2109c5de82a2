// The npy reader and writer of the DSL (dsl/io/npy): the four value types in 0 to 4 dimensions,
// Fortran order, rejected dtypes, damaged and hand-made headers (each error with its message),
// conversions between value types, and atomic writes that never leave a partial file.
#define BOOST_TEST_MODULE npy
#include <boost/test/unit_test.hpp>

#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <csignal>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/mpl/list.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xnpy.hpp>

#include "core/diagnostics.hpp"
#include "io/atomic_file.hpp"
#include "io/npy.hpp"

#include "kronex_test_support.hpp"

namespace fs = std::filesystem;

namespace {

using kronex::dsl::dtype;
using kronex::dsl::file_error;
using namespace kronex::dsl::io;
using value_types = boost::mpl::list<float, double, std::complex<float>, std::complex<double>>;
using shape_t = std::vector<std::size_t>;

const std::string accepted = "accepted: '<f4' (float32), '<f8' (float64), '<c8' (complex64), '<c16' (complex128)";

std::string data(const std::string& file) {
  const char* dir = std::getenv("KRONEX_DSL_TEST_DATA");
  BOOST_REQUIRE_MESSAGE(dir, "KRONEX_DSL_TEST_DATA is not set (ctest sets it to tests/dsl/data)");
  return std::string(dir) + "/" + file;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh directory per test case, removed afterwards.
struct scratch {
  fs::path dir = fs::temp_directory_path() /
                 ("kronex_test_npy_" + std::to_string(::getpid()) + "_" +
                  boost::unit_test::framework::current_test_case().p_name.get());
  scratch() {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~scratch() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = (dir / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

// An npy file by hand: magic, version, header length, the dict padded to 64 bytes, the data.
std::string npy_bytes(const std::string& dict, const std::string& payload, unsigned major = 1, std::size_t align = 64) {
  const std::size_t len_bytes = major == 1 ? 2 : 4;
  std::string header = dict;
  while ((8 + len_bytes + header.size() + 1) % align != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY", 6) + char(major) + char(0);
  for (std::size_t k = 0; k < len_bytes; ++k) out += char((header.size() >> (8 * k)) & 0xff);
  return out + header + payload;
}

std::string doubles(std::initializer_list<double> v) {
  std::string s;
  for (double x : v) s.append(reinterpret_cast<const char*>(&x), sizeof x);
  return s;
}

void expect_npy_error(const std::string& path, const std::string& reason) {
  try {
    read_npy(path);
  } catch (const file_error& e) {
    BOOST_TEST(e.line() == 0u);
    BOOST_TEST(std::string(e.what()) == "\"" + path + "\": " + reason);
    return;
  } catch (const std::exception& e) {
    BOOST_ERROR("wrong exception type " << typeid(e).name() << ": " << e.what());
    return;
  }
  BOOST_ERROR("no error for " << path);
}

template <class T>
const xt::xarray<T>& values(const npy_array& a) {
  BOOST_REQUIRE(std::holds_alternative<xt::xarray<T>>(a.data));
  return std::get<xt::xarray<T>>(a.data);
}

} // namespace

// ---------------------------------------------------------------------------------------------
// Fixtures written by numpy.save (tests/dsl/data/make_fixtures.py).

template <class T>
void check_fixture(const std::string& file, dtype type, const shape_t& shape) {
  BOOST_TEST_CONTEXT(file) {
    const npy_array a = read_npy(data(file));
    BOOST_TEST((a.type == type));
    BOOST_TEST(a.shape == shape, boost::test_tools::per_element());
    const auto& v = values<T>(a);
    BOOST_TEST(shape_t(v.shape().begin(), v.shape().end()) == shape, boost::test_tools::per_element());
    // xtensor's own reader agrees on these (C order, header shorter than 128 bytes).
    const xt::xarray<T> ref = xt::load_npy<T>(data(file));
    BOOST_TEST((v == ref));
  }
}

BOOST_AUTO_TEST_CASE(four_dtypes_in_one_to_four_dimensions) {
  check_fixture<float>("f32_1d.npy", dtype::float32, {5});
  check_fixture<double>("f64_2d.npy", dtype::float64, {3, 4});
  check_fixture<std::complex<float>>("c64_3d.npy", dtype::complex64, {2, 3, 4});
  check_fixture<std::complex<double>>("c128_4d.npy", dtype::complex128, {2, 3, 2, 2});
}

BOOST_AUTO_TEST_CASE(fortran_order_is_read_as_row_major) {
  const npy_array c = read_npy(data("f64_2d.npy"));
  const npy_array f = read_npy(data("f64_2d_fortran.npy"));  // the same values, column-major on disk
  BOOST_TEST(f.shape == shape_t({3, 4}), boost::test_tools::per_element());
  const auto& v = values<double>(f);
  BOOST_TEST((v.layout() == xt::layout_type::row_major));
  BOOST_TEST((v == values<double>(c)));
  // Row-major memory: element (0, 1) is next to (0, 0).
  BOOST_TEST(v.data()[1] == v(0, 1));
}

BOOST_AUTO_TEST_CASE(zero_dimensional_array_holds_one_value) {
  const npy_array a = read_npy(data("f64_0d.npy"));
  BOOST_TEST(a.shape.empty());
  const auto& v = values<double>(a);
  BOOST_TEST(v.dimension() == 0u);
  BOOST_TEST(v.size() == 1u);
  BOOST_TEST(v() == 0.1);
}

BOOST_AUTO_TEST_CASE(other_dtypes_are_rejected_with_the_accepted_list) {
  expect_npy_error(data("int64.npy"), "unsupported dtype '<i8'; " + accepted);
  expect_npy_error(data("f64_big_endian.npy"), "unsupported dtype '>f8' (big-endian data; this machine is little-endian); " + accepted);
  scratch s;
  expect_npy_error(s.write("b.npy", npy_bytes("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", "\1")),
                   "unsupported dtype '|b1'; " + accepted);
  expect_npy_error(s.write("f2.npy", npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }", "\0\0")),
                   "unsupported dtype '<f2'; " + accepted);
  expect_npy_error(s.write("o.npy", npy_bytes("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "")),
                   "unsupported dtype '|O'; " + accepted);
  expect_npy_error(s.write("r.npy", npy_bytes("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }", "")),
                   "unsupported dtype: a structured (record) dtype; " + accepted);
}

// ---------------------------------------------------------------------------------------------
// Damaged and hand-made files.

BOOST_AUTO_TEST_CASE(missing_unreadable_and_foreign_files) {
  expect_npy_error(data("no_such_file.npy"), "no such file");
  expect_npy_error(data(""), "is a directory, not an npy file");
  expect_npy_error(data("diagonal.mtx"), "not an npy file (it does not start with \\x93NUMPY)");
  scratch s;
  expect_npy_error(s.write("empty.npy", ""), "not an npy file (it does not start with \\x93NUMPY)");
}

BOOST_AUTO_TEST_CASE(truncated_files) {
  const std::string good = slurp(data("f64_2d.npy"));  // 128 bytes of header, 96 of data
  BOOST_REQUIRE(good.size() == 128 + 96);
  scratch s;
  expect_npy_error(s.write("a.npy", good.substr(0, good.size() - 8)),
                   "truncated data: shape (3, 4) of float64 needs 96 bytes, the file has 88 after the header");
  expect_npy_error(s.write("b.npy", good.substr(0, 128)),
                   "truncated data: shape (3, 4) of float64 needs 96 bytes, the file has 0 after the header");
  expect_npy_error(s.write("c.npy", good.substr(0, 30)),
                   "truncated npy file: the header is announced as 118 bytes, the file has only 20 after it starts");
  expect_npy_error(s.write("d.npy", good.substr(0, 9)), "truncated npy file: it ends inside the header length");
  // Too large to exist: refused from the file size, before anything is allocated.
  expect_npy_error(s.write("e.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000, 1000000), }", "")),
                   "truncated data: shape (1000000, 1000000) of float64 needs 8000000000000 bytes, the file has 0 "
                   "after the header");
  expect_npy_error(s.write("f.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", "")),
                   "the shape (4611686018427387904, 4) is too large");
}

// A zero dimension makes the array empty, but xtensor still multiplies the others out for the
// strides (a signed overflow, found by the npy fuzz target): numpy refuses these shapes, so do we.
BOOST_AUTO_TEST_CASE(empty_arrays_with_huge_dimensions) {
  scratch s;
  expect_npy_error(s.write("a.npy", npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (10, 0, 2, 6213041935573965934), }", "")),
                   "the shape (10, 0, 2, 6213041935573965934) is too large");
  expect_npy_error(s.write("b.npy", npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1152921504606846976, 16, 0), }", "")),
                   "the shape (1152921504606846976, 16, 0) is too large");
  // Within the bound, an empty array with a large dimension is read.
  const npy_array e = read_npy(s.write("c.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (0, 1099511627776), }", "")));
  BOOST_TEST(e.shape == shape_t({0, 1099511627776}), boost::test_tools::per_element());
  BOOST_TEST(values<double>(e).size() == 0u);
}

BOOST_AUTO_TEST_CASE(malformed_headers) {
  scratch s;
  const std::string bad = "malformed npy header: ";
  const auto check = [&](const std::string& dict, const std::string& reason) {
    expect_npy_error(s.write("h.npy", npy_bytes(dict, doubles({1, 2}))), bad + reason);
  };
  check("", "it does not start with '{'");
  check("{'descr': '<f8', 'fortran_order': False}", "missing key 'shape'");
  check("{'descr': '<f8', 'shape': (2,)}", "missing key 'fortran_order'");
  check("{'fortran_order': False, 'shape': (2,)}", "missing key 'descr'");
  check("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}", "'fortran_order' is not True or False");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (-1,)}", "'shape' holds something other than non-negative integers");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (2, x)}", "'shape' holds something other than non-negative integers");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': [2]}", "'shape' is not a tuple");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (2 3)}", "'shape' is not a tuple of integers");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,)}", "a dimension in 'shape' is too large");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'extra': 1}", "unexpected key 'extra'");
  check("{'descr': '<f8', 'descr': '<f8', 'fortran_order': False, 'shape': (2,)}", "the key 'descr' appears twice");
  check("{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x", "text after the closing '}'");
  check("{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}' after the value of 'descr'");
  check("{'descr' '<f8'}", "expected ':' after 'descr'");
  check("{descr: '<f8'}", "expected a quoted key");
  check("{'descr': 8, 'fortran_order': False, 'shape': (2,)}", "'descr' is not a string");
  check("{'descr': '<f8, 'fortran_order': False, 'shape': (2,)}", "expected ',' or '}' after the value of 'descr'");
  expect_npy_error(s.write("v.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", doubles({1, 2}), 4)),
                   "unsupported npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
}

BOOST_AUTO_TEST_CASE(hand_made_headers_numpy_accepts) {
  scratch s;
  const auto read = [&](const std::string& bytes) { return read_npy(s.write("h.npy", bytes)); };
  // Native ('=') and "not applicable" ('|') byte orders, keys in any order, double quotes, no
  // trailing comma, versions 2.0 and 3.0, Python 2 long integers.
  for (const std::string dict : {"{'descr': '=f8', 'fortran_order': False, 'shape': (2,), }",
                                 "{'descr': '|f8', 'fortran_order': False, 'shape': (2,), }",
                                 "{\"shape\": (2,), \"fortran_order\": False, \"descr\": \"<f8\"}",
                                 "{'descr':'<f8','fortran_order':False,'shape':(2L,)}"}) {
    BOOST_TEST_CONTEXT(dict) {
      const npy_array a = read(npy_bytes(dict, doubles({1, 2})));
      BOOST_TEST((values<double>(a) == xt::xarray<double>{1, 2}));
    }
  }
  for (unsigned major : {2u, 3u}) {
    const npy_array a = read(npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", doubles({3, 4}), major));
    BOOST_TEST((values<double>(a) == xt::xarray<double>{3, 4}));
  }
  // A header of 182 bytes (a length byte >= 0x80, which xtensor's own reader sign-extends).
  const npy_array a = read(npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1), }", doubles({5, 6}), 1, 192));
  const auto& v = values<double>(a);
  BOOST_TEST(shape_t(v.shape().begin(), v.shape().end()) == shape_t({2, 1}), boost::test_tools::per_element());
  BOOST_TEST((v(0, 0) == 5 && v(1, 0) == 6));
  // Empty arrays and extra bytes after the data (numpy ignores them too).
  const npy_array e = read(npy_bytes("{'descr': '<c16', 'fortran_order': False, 'shape': (0, 3), }", "trailing"));
  BOOST_TEST(e.shape == shape_t({0, 3}), boost::test_tools::per_element());
  BOOST_TEST(values<std::complex<double>>(e).size() == 0u);
}

// ---------------------------------------------------------------------------------------------
// Conversions.

BOOST_AUTO_TEST_CASE(conversions_between_value_types) {
  const npy_array f = read_npy(data("f32_1d.npy"));
  const auto& v = values<float>(f);
  const xt::xarray<double> d = convert<double>(f, "f32_1d.npy");
  const xt::xarray<std::complex<float>> c = convert<std::complex<float>>(f, "f32_1d.npy");
  for (std::size_t i = 0; i < v.size(); ++i) {
    BOOST_TEST(d(i) == double(v(i)));
    BOOST_TEST((c(i) == std::complex<float>(v(i), 0)));
  }
  BOOST_TEST((convert<float>(f, "f32_1d.npy") == v));

  const npy_array g = read_npy(data("f64_2d.npy"));
  const xt::xarray<float> narrowed = convert<float>(g, "f64_2d.npy");
  BOOST_TEST(narrowed(2, 3) == float(values<double>(g)(2, 3)));

  const npy_array z = read_npy(data("c64_3d.npy"));
  const xt::xarray<std::complex<double>> widened = convert<std::complex<double>>(z, "c64_3d.npy");
  BOOST_TEST((widened(1, 2, 3) == std::complex<double>(values<std::complex<float>>(z)(1, 2, 3))));
  kronex_test::expect_error<file_error>([&] { convert<double>(z, "c64_3d.npy"); },
                                        {"\"c64_3d.npy\": has complex values (complex64); ask for complex64 or complex128"});
  kronex_test::expect_error<file_error>([&] { convert<float>(read_npy(data("c128_4d.npy")), "b.npy"); },
                                        {"\"b.npy\": has complex values (complex128); ask for complex64 or complex128"});
}

// ---------------------------------------------------------------------------------------------
// Atomic writes.

template <class T>
xt::xarray<T> sample(const shape_t& shape) {
  xt::xarray<T> x = xt::xarray<T>::from_shape(shape);
  for (auto& v : x) v = kronex_test::random_value<T>();
  return x;
}

BOOST_AUTO_TEST_CASE_TEMPLATE(write_then_read_round_trips, T, value_types) {
  scratch s;
  const std::string path = (s.dir / "x.npy").string();
  for (const shape_t& shape : {shape_t{}, shape_t{0, 3}, shape_t{4}, shape_t{2, 3, 4}, shape_t{2, 1, 3, 2}}) {
    BOOST_TEST_CONTEXT("shape of rank " << shape.size()) {
      const xt::xarray<T> x = sample<T>(shape);
      write_npy_atomic(path, x);  // the second time on, over the previous file
      const npy_array a = read_npy(path);
      BOOST_TEST((a.type == kronex::dsl::dtype_of<T>()));
      BOOST_TEST(a.shape == shape, boost::test_tools::per_element());
      BOOST_TEST((values<T>(a) == x));
      BOOST_TEST(s.listing() == std::vector<std::string>{"x.npy"}, boost::test_tools::per_element());
    }
  }
}

BOOST_AUTO_TEST_CASE(write_into_a_missing_directory_leaves_nothing) {
  scratch s;
  const fs::path missing = s.dir / "no_such_dir";
  const std::string path = (missing / "x.npy").string();
  kronex_test::expect_error<file_error>(
      [&] { write_npy_atomic(path, sample<double>({3})); },
      {"\"" + path + "\": cannot write: the temporary file \"" + path + ".tmp-" + std::to_string(::getpid()) +
       "\" cannot be created (No such file or directory)"});
  BOOST_TEST(!fs::exists(missing));
  BOOST_TEST(s.listing().empty());
}

BOOST_AUTO_TEST_CASE(failed_rename_removes_the_temporary_and_keeps_the_target) {
  scratch s;
  // The target is a non-empty directory: rename fails after the temporary was written.
  fs::create_directories(s.dir / "target" / "inside");
  const std::string path = (s.dir / "target").string();
  kronex_test::expect_error<file_error>([&] { write_npy_atomic(path, sample<float>({2, 2})); },
                                        {"\"" + path + "\": cannot move the temporary file", "onto it ("});
  BOOST_TEST(s.listing() == std::vector<std::string>{"target"}, boost::test_tools::per_element());
  BOOST_TEST(fs::is_directory(s.dir / "target" / "inside"));

  // An existing file is replaced whole, never truncated in place.
  const std::string file = (s.dir / "y.npy").string();
  write_npy_atomic(file, sample<double>({5}));
  const std::string before = slurp(file);
  fs::permissions(s.dir, fs::perms::owner_read | fs::perms::owner_exec);  // no new files in the directory
  if (::geteuid() != 0) {  // root ignores permissions
    kronex_test::expect_error<file_error>([&] { write_npy_atomic(file, sample<double>({7})); }, {"cannot be created"});
    BOOST_TEST(slurp(file) == before);
  }
  fs::permissions(s.dir, fs::perms::owner_all);
}

// ---------------------------------------------------------------------------------------------
// Values and files the reader refuses, and reading in the file's order or with a conversion.

// A nan or an infinity in a file is an input error naming the file, the index and the value: on
// the straight read, on a converted read (float64 to float32) and on a Fortran-order one, whose
// index is the same (row, column) as in C order.
BOOST_AUTO_TEST_CASE(non_finite_values_are_refused_with_their_index) {
  scratch s;
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::string c = s.write("c.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }",
                                                   doubles({1, 2, 3, 4, nan, 6})));
  expect_npy_error(c, "the value at index (1, 1) is nan: values must be finite (nan and inf are refused)");
  kronex_test::expect_error<file_error>([&] { read_npy(c, dtype::float32); }, {"index (1, 1) is nan"});
  // Column-major on disk: the 3rd stored value is (0, 1).
  const std::string f = s.write("f.npy", npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                                   doubles({1, 2, -inf, 4, 5, 6})));
  expect_npy_error(f, "the value at index (0, 1) is -inf: values must be finite (nan and inf are refused)");
  const std::string one = s.write("v.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
                                                     doubles({1, inf, 3})));
  expect_npy_error(one, "the value at index (1,) is inf: values must be finite (nan and inf are refused)");
  // Finite in float64, infinite in float32.
  const std::string big = s.write("big.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
                                                       doubles({1, 1e300})));
  kronex_test::expect_error<file_error>([&] { read_npy(big, dtype::float32); }, {"index (1,) is 1e+300: it does not fit in float32"});
}

// A converted or reordered read places every value where a plain read and convert<T> put it.
BOOST_AUTO_TEST_CASE(converted_and_fortran_reads_match_convert) {
  const npy_array c = read_npy(data("f64_2d.npy"));
  const npy_array f32 = read_npy(data("f64_2d_fortran.npy"), dtype::float32);
  BOOST_TEST((f32.type == dtype::float32));
  BOOST_TEST(values<float>(f32) == convert<float>(c, "c"), boost::test_tools::per_element());
  const npy_array z = read_npy(data("f64_2d_fortran.npy"), dtype::complex128);
  BOOST_TEST(values<std::complex<double>>(z) == convert<std::complex<double>>(c, "c"), boost::test_tools::per_element());
  kronex_test::expect_error<file_error>([&] { read_npy(data("c64_3d.npy"), dtype::float64); },
                           {"has complex values (complex64); ask for complex64 or complex128"});
}

// The header alone: a file whose data would take gigabytes is described without reading it.
BOOST_AUTO_TEST_CASE(header_is_read_without_the_data) {
  scratch s;
  const std::string p = s.write("big.npy", npy_bytes("{'descr': '<f8', 'fortran_order': False, 'shape': (1024, 1048576), }", ""));
  fs::resize_file(p, fs::file_size(p) + (std::uintmax_t(8) << 30));  // sparse: 8 GiB of zeros, never written
  const npy_info h = read_npy_info(p);
  BOOST_TEST(h.shape == shape_t({1024, 1048576}), boost::test_tools::per_element());
  BOOST_TEST(h.data_bytes == std::uint64_t(8) << 30);
  BOOST_TEST((h.type == dtype::float64));
}

// A FIFO would block the open until a writer comes; a device may never end.
BOOST_AUTO_TEST_CASE(non_regular_files_are_refused) {
  scratch s;
  const std::string fifo = (s.dir / "f.npy").string();
  BOOST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_npy_error(fifo, "is a FIFO, not an npy file (kronex reads regular files only)");
  expect_npy_error("/dev/zero", "is a device, not an npy file (kronex reads regular files only)");
}

// A write interrupted by SIGTERM or SIGINT leaves no temporary behind, and the process still dies
// of the signal (its parent sees it killed, not exiting). Run in a child that signals itself in
// the middle of the write.
BOOST_AUTO_TEST_CASE(interrupted_write_removes_its_temporary) {
  for (const int sig : {SIGTERM, SIGINT}) {
    scratch s;
    const std::string target = (s.dir / "x.npy").string();
    s.write("x.npy", "old");
    const pid_t child = ::fork();
    BOOST_REQUIRE(child >= 0);
    if (child == 0) {
      write_file_atomic(target, [&](std::ostream& out) {
        out << "partial" << std::flush;
        ::raise(sig);
      });
      ::_exit(0);  // not reached when the handler works
    }
    int status = 0;
    BOOST_REQUIRE(::waitpid(child, &status, 0) == child);
    BOOST_TEST(WIFSIGNALED(status));
    BOOST_TEST(WTERMSIG(status) == sig);
    BOOST_TEST(s.listing() == std::vector<std::string>{"x.npy"}, boost::test_tools::per_element());
    BOOST_TEST(slurp(target) == "old");
  }
}
