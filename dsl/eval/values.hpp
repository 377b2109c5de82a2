#pragma once
// What DSL expressions evaluate to. Factors and tensors are loaded or built when their statement
// is evaluated (so a missing file is reported at its mtx(...)); operators and results only record
// what to do, like the C++ expressions they become in exec/ (nothing is factored or solved here).
#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <kronex/core/op.hpp>
#include <kronex/core/shape.hpp>
#include <kronex/expr/algebra.hpp>
#include <kronex/factors/any_factor.hpp>
#include <kronex/factors/boundary.hpp>
#include <kronex/krylov/options.hpp>
#include <kronex/operators/sparse_operator.hpp>

#include "core/diagnostics.hpp"
#include "core/dtype.hpp"
#include "io/npy.hpp"

namespace kronex::dsl {

// A 1D factor. An identity without a value type argument (identity(n)) is untyped: like
// kronex::identity(n) in C++, it takes the value type of the other factors or of the operand.
struct factor_value {
  std::variant<identity_factor, any_factor<float>, any_factor<double>, any_factor<std::complex<float>>,
               any_factor<std::complex<double>>> factor = identity_factor(1);
  std::string text;  // the source text, e.g. mass(128, 3)
  source_range where;

  std::optional<dtype> type() const;
  std::size_t size() const;
};

// The C++ methods the expression calls on kron(...), in order (replayed on the kron_expr).
enum class op_method { transpose, adjoint, inverse };

// How an operator is built: a Kronecker product, or (kronex's operator algebra, expr/algebra.hpp)
// a scalar multiple, a sum or a composition of operators, or an assembled operator (below) as a
// leaf of such a combination: what a kronex::sparse_operator<T> is in a C++ expression, a leaf
// that is applied (a csr_spmv step of the composite plan, on the host or the device), never solved.
enum class operator_form { kron, scaled, sum, product, assembled };

struct assembled_value;

// The kind of operator_tree node an operator becomes once normalised (plan/operator_tree.hpp),
// tracked while building so that limits are checked when the program is written.
enum class tree_shape { kron, sum, product, inverse_sum };

struct operator_value {
  std::vector<std::shared_ptr<const factor_value>> factors;
  std::vector<op_method> methods;
  std::optional<dtype> type;  // the factors' common value type; none if all are untyped identities
  std::string text;
  source_range where;

  // The above describe a Kronecker product (form == kron). Combinations (form != kron), as
  // kronex::composite_expr records them: the operands (one for scaled, two otherwise), their
  // coefficients (scaled: the scalar; sum: 1 and 1 or -1), the transposes and adjoints called
  // on the combination (composed into one op), and whether it is inverted or pseudo-inverted.
  // An assembled leaf (form == assembled) has no operands: `assembled` is its matrix, and its
  // transposes and adjoints are in `transform`, as on the one-term scalar multiple 1 * A.
  operator_form form = operator_form::kron;
  std::vector<std::shared_ptr<const operator_value>> operands;
  std::shared_ptr<const assembled_value> assembled;
  // Whether an assembled operator is among its leaves: then it is applied only (its .solve(b),
  // .inverse() and .pseudo_inverse(rtol) are refused, as kronex refuses them with not_separable),
  // or is the operator or preconditioner of a Krylov solve.
  bool has_assembled = false;
  std::array<std::complex<double>, 2> coefs{1.0, 1.0};
  kronex::op transform = kronex::op::none;
  kronex::detail::inversion inversion;
  shape_t combined_sizes;        // the operands' sizes
  std::size_t built = 1;         // Kronecker products and combinations in it, each use counted
  // Its normalised tree's kind and depth (an upper bound) before the inversion is applied.
  tree_shape normal = tree_shape::kron;
  std::size_t nesting = 1;

  // Releases deep combinations (L = L + K, many times) without recursing once per level.
  ~operator_value();

  bool combined() const { return form != operator_form::kron; }
  shape_t sizes() const;
};

// A tensor operand whose shape and values are known only once it meets an operator:
// random(seed) (uniform in [-1, 1), real and imaginary parts alike) and ones().
struct generated_tensor {
  enum class kind { random, ones } what = kind::ones;
  std::uint64_t seed = 0;
  std::string text;
  source_range where;
};

// An array read from a .npy file: a tensor operand, or (when 2D and square) a dense factor.
// npy(...) reads only the header; the values are read once, on first use, which the evaluator
// makes after the use has checked the shape and type: a file meant for another operator is
// refused before its data is read.
struct array_value {
  dtype type = dtype::float64;      // the values' type: the file's, or the one npy(...) asked for
  std::vector<std::size_t> shape;
  std::string path, text;
  source_range where;
  // Set on first use (by array(), or directly for an array that is not read from a file).
  mutable std::shared_ptr<const io::npy_array> values;
  // The dense factor it makes, set on first use as a factor: every kron(...) that takes this
  // array takes the same factor_value (so a program factors it once). Its values are read into
  // the factor alone, not kept in `values` as well: a dense factor is held once.
  mutable std::shared_ptr<const factor_value> factor;

  // The values, read now if they were not (io::read_npy: file_error on a bad value).
  const io::npy_array& array() const;
};

struct result_value;

// The operand of a solve or apply.
using operand_value = std::variant<std::shared_ptr<const array_value>, std::shared_ptr<const generated_tensor>,
                                   std::shared_ptr<const result_value>>;

// K.solve(x) or K.apply(x): not computed, only described.
struct result_value {
  enum class kind { solve, apply } what = kind::solve;
  std::shared_ptr<const operator_value> op;
  operand_value operand;
  std::optional<dtype> type;  // the operator's, else the operand's
  std::size_t stages = 1;     // this result and the results nested in its operand
  std::string text;
  source_range where;

  result_value() = default;
  result_value(const result_value&) = delete;
  result_value& operator=(const result_value&) = delete;
  // Releases a chain of nested results (y = K.apply(y), many times) one link at a time: the
  // default destructor would recurse once per link.
  ~result_value();

  shape_t shape() const { return op->sizes(); }
};

// An assembled operator: mtx_operator("A.mtx", n1, ..., nd [, type]) (a sparse matrix read from
// a Matrix Market file, acting on tensors of shape (n1, ..., nd)), or jacobi(A) of one (the
// diagonal matrix diag(A)^-1). It has no Kronecker structure: it is the operator or the
// preconditioner of a Krylov solve as it is, and a leaf of operator arithmetic (A + K, 2 * A,
// A * K, A.transpose(), A.apply(x): operator_algebra.hpp's assembled_leaf) that is applied, never
// solved.
struct assembled_value {
  std::variant<std::monostate, sparse_operator<float>, sparse_operator<double>, sparse_operator<std::complex<float>>,
               sparse_operator<std::complex<double>>> op;
  dtype type = dtype::float64;
  shape_t shape;
  std::size_t nnz = 0;
  bool jacobi = false;
  std::string text;
  source_range where;
};

// The operator or the preconditioner of a Krylov solve: a DSL operator (Kronecker products and
// their combinations) or an assembled one.
struct krylov_operand {
  std::shared_ptr<const operator_value> op;
  std::shared_ptr<const assembled_value> assembled;
  std::string text;
  source_range where;

  explicit operator bool() const { return op || assembled; }
  shape_t sizes() const { return op ? op->sizes() : assembled->shape; }
  std::optional<dtype> type() const { return op ? op->type : std::optional<dtype>(assembled->type); }
};

// cg(A, b [, P], options...), bicgstab, gmres, minres: x solving A x = b from x = 0 (not computed
// here, only described).
struct krylov_value {
  kronex::krylov_method method = kronex::krylov_method::cg;
  krylov_operand A, P;  // P empty: no preconditioner
  krylov_options<double> options;
  std::variant<std::shared_ptr<const array_value>, std::shared_ptr<const generated_tensor>> operand;
  std::optional<dtype> type;  // A's, else P's, else the operand's
  std::string text;
  source_range where;
};

// Bare words that are only meaningful as arguments: periodic, clamped, float32, ...
struct keyword_value {
  std::optional<kronex::boundary> bc;
  std::optional<dtype> type;
  std::string text;
};

// (double: a number literal, a coefficient.)
using value = std::variant<std::uint64_t, std::string, keyword_value, std::shared_ptr<const factor_value>,
                           std::shared_ptr<const operator_value>, std::shared_ptr<const array_value>,
                           std::shared_ptr<const generated_tensor>, std::shared_ptr<const result_value>, double,
                           std::shared_ptr<const assembled_value>, std::shared_ptr<const krylov_value>>;

// "an integer", "an operator", ... for messages.
const char* kind_name(const value& v);

} // namespace kronex::dsl
