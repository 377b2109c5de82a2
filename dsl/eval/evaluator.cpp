#include "eval/evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include <kronex/factors/gallery.hpp>
#include <kronex/operators/jacobi.hpp>

#include "core/format.hpp"
#include "core/memory.hpp"
#include "eval/operator_algebra.hpp"
#include "io/matrix_market.hpp"
#include "language/parser.hpp"

namespace kronex::dsl {

std::optional<dtype> factor_value::type() const {
  return std::visit([](const auto& f) -> std::optional<dtype> {
    using F = std::decay_t<decltype(f)>;
    if constexpr (std::is_same_v<F, identity_factor>) return std::nullopt;
    else return dtype_of<typename F::value_type>();
  }, factor);
}

std::size_t factor_value::size() const {
  return std::visit([](const auto& f) -> std::size_t { return f.size(); }, factor);
}

const io::npy_array& array_value::array() const {
  if (!values) values = std::make_shared<const io::npy_array>(io::read_npy(path, type));
  return *values;
}

result_value::~result_value() {
  auto* inner = std::get_if<std::shared_ptr<const result_value>>(&operand);
  if (!inner) return;
  std::shared_ptr<const result_value> next = std::move(*inner);
  // While this chain holds the only reference to the next link, take that link's own operand
  // before letting it go, so its destructor finds nothing nested. Results are built only as
  // non-const objects (make_shared<result_value>), so the const_cast writes to a non-const one.
  while (next && next.use_count() == 1) {
    auto& link = const_cast<result_value&>(*next);
    auto* further = std::get_if<std::shared_ptr<const result_value>>(&link.operand);
    std::shared_ptr<const result_value> after = further ? std::move(*further) : nullptr;
    next = std::move(after);
  }
}

shape_t operator_value::sizes() const {
  if (combined()) return combined_sizes;
  shape_t s;
  for (const auto& f : factors) s.push_back(f->size());
  return s;
}

const char* kind_name(const value& v) {
  struct visitor {
    const char* operator()(std::uint64_t) const { return "an integer"; }
    const char* operator()(double) const { return "a number"; }
    const char* operator()(const std::string&) const { return "a string"; }
    const char* operator()(const keyword_value& k) const { return k.bc ? "a boundary keyword" : "a value type keyword"; }
    const char* operator()(const std::shared_ptr<const factor_value>&) const { return "a factor"; }
    const char* operator()(const std::shared_ptr<const operator_value>&) const { return "an operator"; }
    const char* operator()(const std::shared_ptr<const array_value>&) const { return "an array"; }
    const char* operator()(const std::shared_ptr<const generated_tensor>&) const { return "a tensor"; }
    const char* operator()(const std::shared_ptr<const result_value>&) const { return "a result"; }
    const char* operator()(const std::shared_ptr<const assembled_value>&) const { return "an assembled operator"; }
    const char* operator()(const std::shared_ptr<const krylov_value>&) const { return "a Krylov solve's result"; }
  };
  return std::visit(visitor{}, v);
}

namespace {

// Limits that turn absurd requests into clear errors instead of out-of-memory crashes.
constexpr std::uint64_t max_factor_size = std::uint64_t(1) << 20;
constexpr std::uint64_t max_degree = 31;
constexpr std::uint64_t max_tensor_elements = std::uint64_t(1) << 36;
constexpr std::size_t max_rank = 6;
// maxiter and check_every of a Krylov solve.
constexpr std::uint64_t max_krylov_iterations = std::uint64_t(1) << 32;

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  if (name.size() > max_suggested_name) return {};
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const auto& c : candidates) {
    // The distance is at least the difference in length: most candidates need no table.
    const std::size_t gap = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
    if (gap >= best_d || c.size() > max_suggested_name) continue;
    const std::size_t d = edit_distance(name, c);
    if (d < best_d) { best_d = d; best = c; }
  }
  return best.empty() ? std::string() : " (did you mean '" + best + "'?)";
}

const std::vector<std::string> function_names = {"mass", "stiffness", "laplacian", "identity", "mtx",
                                                  "npy", "random", "ones", "kron", "mtx_operator",
                                                  "jacobi", "cg", "bicgstab", "gmres", "minres"};
// The Krylov solvers' named options (restart: gmres only).
const std::vector<std::string> krylov_option_names = {"rtol", "atol", "maxiter", "check_every", "restart"};
const std::vector<std::string> keyword_names = {"periodic", "clamped", "float32", "float64", "complex64", "complex128"};
const std::vector<std::string> method_names = {"solve", "apply", "transpose", "adjoint", "inverse", "pseudo_inverse"};

std::optional<keyword_value> keyword(const std::string& name) {
  keyword_value k;
  k.text = name;
  if (name == "periodic") k.bc = kronex::boundary::periodic;
  else if (name == "clamped") k.bc = kronex::boundary::clamped;
  else if (auto t = dtype_from_name(name)) k.type = t;
  else return std::nullopt;
  return k;
}

class evaluator {
public:
  evaluator(const std::string& source, const parameters& params) : m_source(source), m_params(params) {}

  evaluated_program run(const program& p) {
    if (p.statements.empty()) {
      throw dsl_error(source_range{}, "the program is empty: write an expression such as kron(mass(64, 3), mass(64, 3)).solve(ones())");
    }
    value last;
    for (std::size_t s = 0; s < p.statements.size(); ++s) {
      const statement& st = p.statements[s];
      const bool is_last = s + 1 == p.statements.size();
      if (!st.assigned && !is_last) {
        throw dsl_error(st.value->where, "this expression's value is not used: only the last statement is the "
                                         "result; give it a name (NAME = ...) or remove it");
      }
      value v = eval(*st.value);
      if (st.assigned) bind(*st.assigned, st.assigned_where, v);
      if (is_last) last = std::move(v);
    }
    evaluated_program out = finish(last, *p.statements.back().value);
    out.used_parameters = m_used;
    return out;
  }

private:
  std::string text(const node& n) const { return source_text(m_source, n); }

  void bind(const std::string& name, const source_range& where, value v) {
    if (std::find(function_names.begin(), function_names.end(), name) != function_names.end()) {
      throw dsl_error(where, "cannot assign to '" + name + "': it is a built-in function");
    }
    if (keyword(name)) throw dsl_error(where, "cannot assign to '" + name + "': it is a keyword");
    m_names[name] = std::move(v);
  }

  value eval(const node& n) {
    switch (n.what) {
      case node::kind::integer: return n.value;
      case node::kind::number: return n.number;
      case node::kind::negate: return negate(n);
      case node::kind::arithmetic: return arithmetic(n);
      case node::kind::string: return n.text;
      case node::kind::parameter: {
        const auto it = m_params.find(n.text);
        m_used.insert(n.text);
        if (it == m_params.end()) {
          throw dsl_error(n.where, "parameter $" + n.text + " is not set: pass --set " + n.text +
                                       "=VALUE (or --sweep " + n.text + "=FROM:TO:xFACTOR with bench)");
        }
        return it->second;
      }
      case node::kind::name: {
        if (auto k = keyword(n.text)) return *k;
        const auto it = m_names.find(n.text);
        if (it != m_names.end()) return it->second;
        if (std::find(function_names.begin(), function_names.end(), n.text) != function_names.end()) {
          throw dsl_error(n.where, "'" + n.text + "' is a function: call it, as in " + n.text + "(...)");
        }
        std::vector<std::string> known;
        for (const auto& [k, v] : m_names) known.push_back(k);
        known.insert(known.end(), keyword_names.begin(), keyword_names.end());
        known.insert(known.end(), function_names.begin(), function_names.end());
        throw dsl_error(n.where, "unknown name '" + n.text + "'" + did_you_mean(n.text, known));
      }
      case node::kind::call: return call(n);
      case node::kind::method: return method(n);
      case node::kind::named:
        throw dsl_error(n.name_where, "named argument '" + n.text + "=' is not taken here: only the Krylov solvers "
                                      "(cg, bicgstab, gmres, minres) take options NAME=value");
    }
    throw dsl_error(n.where, "unsupported expression");
  }

  // ---- argument checking -------------------------------------------------------------------

  struct signature {
    const char* name;
    std::size_t min_args, max_args;
    const char* usage;
  };

  void check_count(const node& n, const signature& s) {
    for (const auto& a : n.args)
      if (a->what == node::kind::named) eval(*a);  // NAME=value is refused here, at the name
    const std::size_t k = n.args.size();
    if (k >= s.min_args && k <= s.max_args) return;
    std::ostringstream os;
    os << s.name << " takes ";
    if (s.min_args == s.max_args) os << s.min_args;
    else os << s.min_args << " to " << s.max_args;
    os << (s.max_args == 1 && s.min_args == 1 ? " argument" : " arguments") << ", got " << k << ": " << s.usage;
    // Point at the first extra argument, or at the call when arguments are missing.
    throw dsl_error(k > s.max_args ? n.args[s.max_args]->where : n.where, os.str());
  }

  [[noreturn]] void wrong_type(const node& arg, const value& v, const std::string& what, std::size_t index,
                               const char* function) {
    std::ostringstream os;
    os << "argument " << index + 1 << " of " << function << " must be " << what << ", got " << kind_name(v);
    if (auto* k = std::get_if<keyword_value>(&v)) os << " '" << k->text << "'";
    throw dsl_error(arg.where, os.str());
  }

  std::uint64_t integer_arg(const node& n, std::size_t i, const char* function, const char* what,
                            std::uint64_t lo, std::uint64_t hi) {
    const value v = eval(*n.args[i]);
    const auto* x = std::get_if<std::uint64_t>(&v);
    if (!x) wrong_type(*n.args[i], v, std::string("an integer (") + what + ")", i, function);
    if (*x < lo || *x > hi) {
      throw dsl_error(n.args[i]->where, std::string(what) + " must be between " + std::to_string(lo) + " and " +
                                            std::to_string(hi) + ", got " + std::to_string(*x));
    }
    return *x;
  }

  std::string string_arg(const node& n, std::size_t i, const char* function, const char* what) {
    const value v = eval(*n.args[i]);
    const auto* s = std::get_if<std::string>(&v);
    if (!s) wrong_type(*n.args[i], v, std::string("a string (") + what + ")", i, function);
    return *s;
  }

  // Trailing optional keywords: [boundary] then [dtype], in that order.
  struct options {
    kronex::boundary bc = kronex::boundary::clamped;
    std::optional<dtype> type;
  };
  options option_args(const node& n, std::size_t first, const char* function, bool allow_boundary) {
    options o;
    bool seen_type = false;
    for (std::size_t i = first; i < n.args.size(); ++i) {
      const value v = eval(*n.args[i]);
      const auto* k = std::get_if<keyword_value>(&v);
      const char* expected = allow_boundary ? "periodic, clamped or a value type (float32, float64, complex64, complex128)"
                                            : "a value type (float32, float64, complex64 or complex128)";
      if (!k || (k->bc && !allow_boundary)) wrong_type(*n.args[i], v, expected, i, function);
      if (seen_type) throw dsl_error(n.args[i]->where, std::string("the value type must be the last argument of ") + function);
      if (k->bc) {
        if (i != first) throw dsl_error(n.args[i]->where, std::string("the boundary is given twice in ") + function);
        o.bc = *k->bc;
      } else {
        o.type = k->type;
        seen_type = true;
      }
    }
    return o;
  }

  // ---- built-in functions ------------------------------------------------------------------

  value call(const node& n) {
    const std::string& f = n.text;
    if (f == "mass" || f == "stiffness") return gallery_spline(n, f == "mass");
    if (f == "laplacian") return gallery_laplacian(n);
    if (f == "identity") return gallery_identity(n);
    if (f == "mtx") return read_mtx(n);
    if (f == "npy") return read_npy(n);
    if (f == "random" || f == "ones") return generate(n, f == "random");
    if (f == "kron") return make_kron(n);
    if (f == "mtx_operator") return read_mtx_operator(n);
    if (f == "jacobi") return make_jacobi(n);
    if (f == "cg") return krylov_call(n, kronex::krylov_method::cg);
    if (f == "bicgstab") return krylov_call(n, kronex::krylov_method::bicgstab);
    if (f == "gmres") return krylov_call(n, kronex::krylov_method::gmres);
    if (f == "minres") return krylov_call(n, kronex::krylov_method::minres);
    if (m_names.count(f)) {
      throw dsl_error(n.name_where, "'" + f + "' is " + kind_name(m_names[f]) + ", not a function");
    }
    throw dsl_error(n.name_where, "unknown function '" + f + "'" + did_you_mean(f, function_names) +
                                      "; the functions are mass, stiffness, laplacian, identity, mtx, npy, random, ones, kron, "
                                      "mtx_operator, jacobi, cg, bicgstab, gmres and minres");
  }

  template <class Make>
  value make_factor(const node& n, std::optional<dtype> type, Make&& make) {
    auto f = std::make_shared<factor_value>();
    f->text = text(n);
    f->where = n.where;
    try {
      with_dtype(type.value_or(dtype::float64), [&](auto t) {
        using T = decltype(t);
        f->factor = any_factor<T>(make(T{}));
      });
    } catch (const file_error&) {
      throw;  // reported by the mtx/npy call with the file's name
    } catch (const kronex::error& e) {
      throw dsl_error(n.where, f->text + ": " + e.what());
    }
    return std::shared_ptr<const factor_value>(f);
  }

  value gallery_spline(const node& n, bool mass) {
    const signature s{mass ? "mass" : "stiffness", 2, 4,
                      mass ? "mass(n, degree [, periodic|clamped] [, value type])"
                           : "stiffness(n, degree [, periodic|clamped] [, value type])"};
    check_count(n, s);
    const std::uint64_t size = integer_arg(n, 0, s.name, "n", 1, max_factor_size);
    const std::uint64_t degree = integer_arg(n, 1, s.name, "the degree", mass ? 0 : 1, max_degree);
    const options o = option_args(n, 2, s.name, true);
    return make_factor(n, o.type, [&](auto t) {
      using T = decltype(t);
      return mass ? gallery::bspline_mass<T>(size, degree, o.bc) : gallery::bspline_stiffness<T>(size, degree, o.bc);
    });
  }

  value gallery_laplacian(const node& n) {
    const signature s{"laplacian", 1, 3, "laplacian(n [, periodic|clamped] [, value type])"};
    check_count(n, s);
    const std::uint64_t size = integer_arg(n, 0, s.name, "n", 1, max_factor_size);
    const options o = option_args(n, 1, s.name, true);
    return make_factor(n, o.type, [&](auto t) { return gallery::laplacian<decltype(t)>(size, o.bc); });
  }

  value gallery_identity(const node& n) {
    const signature s{"identity", 1, 2, "identity(n [, value type])"};
    check_count(n, s);
    const std::uint64_t size = integer_arg(n, 0, s.name, "n", 1, max_factor_size);
    const options o = option_args(n, 1, s.name, false);
    if (o.type) return make_factor(n, o.type, [&](auto) { return identity_factor(size); });
    auto f = std::make_shared<factor_value>();
    f->factor = identity_factor(size);
    f->text = text(n);
    f->where = n.where;
    return std::shared_ptr<const factor_value>(f);
  }

  value read_mtx(const node& n) {
    const signature s{"mtx", 1, 2, "mtx(\"file.mtx\" [, value type])"};
    check_count(n, s);
    const std::string path = string_arg(n, 0, s.name, "the file name");
    const options o = option_args(n, 1, s.name, false);
    try {
      const io::matrix_market m = io::read_matrix_market(path);
      if (m.rows > max_factor_size || m.cols > max_factor_size) {
        throw file_error(path, 0, "a factor has at most " + std::to_string(max_factor_size) + " rows, this one has " +
                                      std::to_string(m.rows) + " x " + std::to_string(m.cols));
      }
      const dtype t = o.type.value_or(m.is_complex ? dtype::complex128 : dtype::float64);
      return make_factor(n, t, [&](auto v) { return io::to_factor<decltype(v)>(m, path); });
    } catch (const file_error& e) {
      throw dsl_error(n.where, std::string("cannot use ") + e.what());
    }
  }

  value read_npy(const node& n) {
    const signature s{"npy", 1, 2, "npy(\"file.npy\" [, value type])"};
    check_count(n, s);
    const std::string path = string_arg(n, 0, s.name, "the file name");
    const options o = option_args(n, 1, s.name, false);
    auto a = std::make_shared<array_value>();
    a->path = path;
    a->text = text(n);
    a->where = n.where;
    try {
      const io::npy_info h = io::read_npy_info(path, o.type);
      a->type = o.type.value_or(h.type);
      a->shape = h.shape;
    } catch (const file_error& e) {
      throw dsl_error(n.where, std::string("cannot use ") + e.what());
    }
    return std::shared_ptr<const array_value>(a);
  }

  // Reads an array's values once its use has been checked; problems point at its npy(...).
  static const io::npy_array& values_of(const array_value& a) {
    try {
      return a.array();
    } catch (const file_error& e) {
      throw dsl_error(a.where, std::string("cannot use ") + e.what());
    }
  }
  // The same, for values that the caller keeps (not cached in the array_value).
  static io::npy_array read_values(const array_value& a) {
    try {
      return io::read_npy(a.path, a.type);
    } catch (const file_error& e) {
      throw dsl_error(a.where, std::string("cannot use ") + e.what());
    }
  }

  // ---- assembled operators and Krylov solves ----------------------------------------------

  // mtx_operator("A.mtx", n1, ..., nd [, value type]): the file's matrix acting on tensors of shape
  // (n1, ..., nd), read by the library (kronex::sparse_operator<T>::from_matrix_market).
  value read_mtx_operator(const node& n) {
    const char* usage = "mtx_operator(\"file.mtx\", n1, ..., nd [, value type]): the matrix and the shape (1 to 6 "
                        "sizes) of the tensors it acts on";
    std::size_t sizes_end = n.args.size();
    std::optional<dtype> type;
    if (n.args.size() >= 3) {
      const value last = eval(*n.args.back());
      if (const auto* k = std::get_if<keyword_value>(&last); k && k->type) {
        type = k->type;
        --sizes_end;
      }
    }
    if (sizes_end < 2 || sizes_end > 1 + max_rank) {
      throw dsl_error(sizes_end > 1 + max_rank ? n.args[1 + max_rank]->where : n.where,
                      "mtx_operator takes a file name and 1 to 6 sizes, got " +
                          std::to_string(sizes_end == 0 ? 0 : sizes_end - 1) + " sizes: " + usage);
    }
    const std::string path = string_arg(n, 0, "mtx_operator", "the file name");
    shape_t shape;
    for (std::size_t i = 1; i < sizes_end; ++i) shape.push_back(integer_arg(n, i, "mtx_operator", "a size", 1, max_factor_size));
    check_tensor_size(shape, n.where);
    auto a = std::make_shared<assembled_value>();
    a->shape = shape;
    a->text = text(n);
    a->where = n.where;
    try {
      const io::matrix_market m = io::read_matrix_market(path);
      a->type = type.value_or(m.is_complex ? dtype::complex128 : dtype::float64);
      with_dtype(a->type, [&](auto t) {
        using T = decltype(t);
        auto op = sparse_operator<T>::from_matrix_market(m, shape, path);
        a->nnz = op.nnz();
        a->op = std::move(op);
      });
    } catch (const file_error& e) {
      throw dsl_error(n.where, std::string("cannot use ") + e.what());
    } catch (const kronex::error& e) {
      throw dsl_error(n.where, "mtx_operator: " + std::string(e.what()));
    }
    return std::shared_ptr<const assembled_value>(a);
  }

  // jacobi(A): diag(A)^-1 of an assembled operator (kronex::jacobi).
  value make_jacobi(const node& n) {
    check_count(n, {"jacobi", 1, 1, "jacobi(A): the inverse diagonal of an assembled operator (mtx_operator(...))"});
    const value v = eval(*n.args[0]);
    const auto* a = std::get_if<std::shared_ptr<const assembled_value>>(&v);
    if (!a) {
      wrong_type(*n.args[0], v, "an assembled operator (mtx_operator(...): jacobi needs the matrix's diagonal)", 0,
                 "jacobi");
    }
    auto out = std::make_shared<assembled_value>(**a);
    out->jacobi = true;
    out->text = text(n);
    out->where = n.where;
    try {
      std::visit([&](const auto& op) {
        using O = std::decay_t<decltype(op)>;
        if constexpr (!std::is_same_v<O, std::monostate>) {
          auto j = kronex::jacobi(op);
          out->nnz = j.nnz();
          out->op = std::move(j);
        }
      }, (*a)->op);
    } catch (const kronex::error& e) {
      throw dsl_error(n.where, "jacobi(" + (*a)->text + "): " + e.what());
    }
    return std::shared_ptr<const assembled_value>(out);
  }

  // The operator or the preconditioner argument of a Krylov solve.
  krylov_operand krylov_operand_arg(const node& n, std::size_t i, const char* function, const char* role) {
    const value v = eval(*n.args[i]);
    krylov_operand o;
    o.text = text(*n.args[i]);
    o.where = n.args[i]->where;
    if (auto* op = std::get_if<std::shared_ptr<const operator_value>>(&v)) o.op = *op;
    else if (auto* a = std::get_if<std::shared_ptr<const assembled_value>>(&v)) o.assembled = *a;
    else {
      wrong_type(*n.args[i], v, std::string("an operator (") + role + ": kron(...), a combination of them, "
                                "mtx_operator(...) or jacobi(...))", i, function);
    }
    return o;
  }

  // A non-negative finite number, or an integer in [lo, hi], given as NAME=value.
  double option_number(const node& opt) {
    const value v = eval(*opt.args[0]);
    const auto x = as_number(v);
    if (!x || !(*x >= 0) || !std::isfinite(*x)) {
      throw dsl_error(opt.args[0]->where, opt.text + " must be a finite number >= 0, got " +
                                              (x ? text(*opt.args[0]) : std::string(kind_name(v))));
    }
    return *x;
  }
  std::uint64_t option_integer(const node& opt, std::uint64_t lo, std::uint64_t hi) {
    const value v = eval(*opt.args[0]);
    const auto* x = std::get_if<std::uint64_t>(&v);
    if (!x) {
      throw dsl_error(opt.args[0]->where, opt.text + " must be an integer, got " + std::string(kind_name(v)));
    }
    if (*x < lo || *x > hi) {
      throw dsl_error(opt.args[0]->where, opt.text + " must be between " + std::to_string(lo) + " and " +
                                              std::to_string(hi) + ", got " + std::to_string(*x));
    }
    return *x;
  }

  // cg(A, b [, P] [, rtol=..., atol=..., maxiter=..., check_every=..., restart=... (gmres)]).
  value krylov_call(const node& n, kronex::krylov_method method) {
    const std::string name = kronex::to_string(method);
    const bool gmres = method == kronex::krylov_method::gmres;
    const std::string usage = name + "(A, b [, P] [, rtol=R] [, atol=R] [, maxiter=N] [, check_every=N]" +
                              (gmres ? " [, restart=N]" : "") + ")";
    std::size_t positional = 0;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      if (n.args[i]->what != node::kind::named) {
        if (positional != i) {
          throw dsl_error(n.args[i]->where, "positional argument after the options of " + name +
                                                ": write the options (NAME=value) last: " + usage);
        }
        ++positional;
      }
    }
    if (positional < 2 || positional > 3) {
      throw dsl_error(positional > 3 ? n.args[3]->where : n.where,
                      name + " takes 2 or 3 arguments (the operator, the right-hand side and optionally the "
                             "preconditioner) and named options, got " + std::to_string(positional) + ": " + usage);
    }
    auto k = std::make_shared<krylov_value>();
    k->method = method;
    k->text = text(n);
    k->where = n.where;
    k->A = krylov_operand_arg(n, 0, name.c_str(), "the operator A");
    // The right-hand side: an array or a generated tensor.
    const node& barg = *n.args[1];
    const value b = eval(barg);
    std::optional<dtype> b_type;
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&b)) {
      k->operand = *a;
      b_type = (*a)->type;
      const shape_t bs((*a)->shape.begin(), (*a)->shape.end());
      if (bs != k->A.sizes()) {
        throw dsl_error(barg.where, "shape mismatch: " + k->A.text + " has sizes " + format_shape(k->A.sizes()) +
                                        " but " + text(barg) + " has shape " + format_shape(bs));
      }
    } else if (auto* g = std::get_if<std::shared_ptr<const generated_tensor>>(&b)) {
      k->operand = *g;
    } else {
      wrong_type(barg, b, "the right-hand side, an array or a tensor (npy(...), random(seed) or ones(); not "
                          "another stage's result)", 1, name.c_str());
    }
    if (positional == 3) {
      k->P = krylov_operand_arg(n, 2, name.c_str(), "the preconditioner P");
      if (k->P.sizes() != k->A.sizes()) {
        throw dsl_error(k->P.where, "shape mismatch: the preconditioner " + k->P.text + " has sizes " +
                                        format_shape(k->P.sizes()) + " but the operator " + k->A.text + " has sizes " +
                                        format_shape(k->A.sizes()));
      }
    }
    // One value type: A's, P's and b's, where they have one.
    const std::pair<std::optional<dtype>, const krylov_operand*> typed[] = {{k->A.type(), &k->A},
                                                                             {k->P ? k->P.type() : std::nullopt, &k->P}};
    const krylov_operand* first = nullptr;
    for (const auto& [t, o] : typed) {
      if (!t) continue;
      if (k->type && *k->type != *t) {
        throw dsl_error(o->where, "value type mismatch: " + first->text + " is " + to_string(*k->type) + " but " +
                                      o->text + " is " + to_string(*t));
      }
      if (!k->type) first = o;
      k->type = t;
    }
    if (b_type && k->type && *b_type != *k->type) {
      throw dsl_error(barg.where, "value type mismatch: " + first->text + " is " + to_string(*k->type) + " but " +
                                      text(barg) + " is " + to_string(*b_type) + "; convert the operand, e.g. "
                                      "npy(\"file.npy\", " + to_string(*k->type) + ")");
    }
    if (!k->type) k->type = b_type;
    // The options, each at most once.
    std::set<std::string> seen;
    for (std::size_t i = positional; i < n.args.size(); ++i) {
      const node& opt = *n.args[i];
      const bool known = std::find(krylov_option_names.begin(), krylov_option_names.end(), opt.text) !=
                         krylov_option_names.end();
      if (!known || (opt.text == "restart" && !gmres)) {
        std::vector<std::string> candidates = krylov_option_names;
        if (!gmres) candidates.pop_back();
        const std::string hint = opt.text == "restart" ? ": restart is an option of gmres only"
                                                       : did_you_mean(opt.text, candidates);
        throw dsl_error(opt.name_where, "unknown option '" + opt.text + "' of " + name + hint + "; the options are " +
                                            "rtol, atol, maxiter, check_every" + (gmres ? " and restart" : ""));
      }
      if (!seen.insert(opt.text).second) {
        throw dsl_error(opt.name_where, "the option " + opt.text + " is given twice in " + name);
      }
      if (opt.text == "rtol") k->options.rtol = option_number(opt);
      else if (opt.text == "atol") k->options.atol = option_number(opt);
      else if (opt.text == "maxiter") k->options.max_iterations = option_integer(opt, 0, max_krylov_iterations);
      else if (opt.text == "check_every") k->options.check_every = option_integer(opt, 1, max_krylov_iterations);
      else k->options.restart = option_integer(opt, 1, max_factor_size);
    }
    check_tensor_size(k->A.sizes(), n.where);
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&k->operand)) {  // checked: read it now
      double bytes = double(size_of((*a)->type));
      for (std::size_t s : k->A.sizes()) bytes *= double(s);
      if (!(*a)->values) check_memory(bytes, "the operand " + (*a)->text, (*a)->where);
      values_of(**a);
    }
    return std::shared_ptr<const krylov_value>(k);
  }

  value generate(const node& n, bool random) {
    const signature s{random ? "random" : "ones", random ? 1u : 0u, random ? 1u : 0u,
                      random ? "random(seed): uniform values in [-1, 1), shaped like the operator it meets"
                             : "ones(): all ones, shaped like the operator it meets"};
    check_count(n, s);
    auto g = std::make_shared<generated_tensor>();
    g->what = random ? generated_tensor::kind::random : generated_tensor::kind::ones;
    if (random) g->seed = integer_arg(n, 0, s.name, "the seed", 0, std::numeric_limits<std::uint64_t>::max());
    g->text = text(n);
    g->where = n.where;
    return std::shared_ptr<const generated_tensor>(g);
  }

  std::shared_ptr<const factor_value> as_factor(const node& arg, const value& v, std::size_t i) {
    if (auto* f = std::get_if<std::shared_ptr<const factor_value>>(&v)) return *f;
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&v)) {
      const auto& shape = (*a)->shape;
      if (shape.size() != 2 || shape[0] != shape[1] || shape[0] == 0 || shape[0] > max_factor_size) {
        throw dsl_error(arg.where, "a dense factor must be a square, non-empty 2D array; " + (*a)->path +
                                       " has shape " + format_shape(shape_t(shape.begin(), shape.end())));
      }
      if ((*a)->factor) return (*a)->factor;
      auto f = std::make_shared<factor_value>();
      f->text = (*a)->text;
      f->where = arg.where;
      // Values already read (the array is an operand too) are copied; else they are read here
      // and moved into the factor, never held twice.
      auto make = [&](auto&& x) {
        using T = typename std::decay_t<decltype(x)>::value_type;
        f->factor = any_factor<T>(xt::xtensor<T, 2>(std::forward<decltype(x)>(x)));
      };
      if ((*a)->values) {
        std::visit(make, (*a)->values->data);
      } else {
        check_memory(double(shape[0]) * double(shape[1]) * double(size_of((*a)->type)), "the dense factor " + (*a)->text,
                     arg.where);
        io::npy_array read = read_values(**a);
        std::visit([&](auto& x) { make(std::move(x)); }, read.data);
      }
      (*a)->factor = f;
      return f;
    }
    if (std::holds_alternative<std::shared_ptr<const operator_value>>(v)) {
      throw dsl_error(arg.where, "argument " + std::to_string(i + 1) + " of kron is an operator: kron takes 1D "
                                 "factors (nested Kronecker products are not supported)");
    }
    wrong_type(arg, v, "a factor (mass, stiffness, laplacian, identity, mtx or a 2D npy array)", i, "kron");
  }

  value make_kron(const node& n) {
    if (n.args.empty() || n.args.size() > max_rank) {
      throw dsl_error(n.args.size() > max_rank ? n.args[max_rank]->where : n.where,
                      "kron takes 1 to 6 factors, got " + std::to_string(n.args.size()));
    }
    auto op = std::make_shared<operator_value>();
    op->text = text(n);
    op->where = n.where;
    std::size_t typed_at = 0;
    for (std::size_t i = 0; i < n.args.size(); ++i) {
      auto f = as_factor(*n.args[i], eval(*n.args[i]), i);
      if (const auto t = f->type()) {
        if (op->type && *op->type != *t) {
          const auto& first = *op->factors[typed_at];
          throw dsl_error(n.args[i]->where,
                          "kron: all factors must have the same value type: factor " + std::to_string(typed_at + 1) +
                              " (" + first.text + ") is " + to_string(*op->type) + ", factor " + std::to_string(i + 1) +
                              " (" + f->text + ") is " + to_string(*t) + "; give them one value type, e.g. as the "
                              "last argument of a gallery factor, mtx or npy");
        }
        if (!op->type) typed_at = i;
        op->type = t;
      }
      op->factors.push_back(std::move(f));
    }
    return std::shared_ptr<const operator_value>(op);
  }

  // ---- methods -----------------------------------------------------------------------------

  value method(const node& n) {
    const value target = eval(*n.target);
    const std::string& m = n.text;
    if (std::find(method_names.begin(), method_names.end(), m) == method_names.end()) {
      std::vector<std::string> dotted;
      for (const auto& x : method_names) dotted.push_back("." + x);
      throw dsl_error(n.name_where, "unknown method '." + m + "'" + did_you_mean("." + m, dotted) +
                                        "; operators have .solve(x), .apply(x), .transpose(), .adjoint(), .inverse() "
                                        "and .pseudo_inverse(rtol)");
    }
    // An assembled operator as a leaf of operator arithmetic: A.apply(x) is the one-leaf
    // combination's apply, A.transpose() and A.adjoint() are combinations too.
    const value lifted = as_operator(target);
    const auto* opp = std::get_if<std::shared_ptr<const operator_value>>(&lifted);
    if (!opp) {
      throw dsl_error(n.target->where, "'." + m + "' needs an operator (kron(...)), but " + text(*n.target) + " is " +
                                           kind_name(target));
    }
    const auto& op = *opp;
    if (op->has_assembled && m != "apply" && m != "transpose" && m != "adjoint") {
      refuse_direct_solve(*op, m == "solve" ? "solve with" : m == "inverse" ? "invert" : "pseudo-invert", n.name_where);
    }
    if (m == "pseudo_inverse") {
      check_count(n, {".pseudo_inverse", 1, 1, "K.pseudo_inverse(rtol): rtol >= 0, eigenvalue sums below rtol times the largest are dropped"});
      const double rtol = coefficient_arg(n, 0, ".pseudo_inverse", "rtol");
      if (!(rtol >= 0)) throw dsl_error(n.args[0]->where, "rtol must be >= 0, got " + text(*n.args[0]));
      return pseudo_inverse(op, rtol, {n.name_where, text(n), n.where});
    }
    if (m == "solve" || m == "apply") {
      check_count(n, {m == "solve" ? ".solve" : ".apply", 1, 1, m == "solve" ? "K.solve(b)" : "K.apply(x)"});
      return make_result(n, op, m == "solve" ? result_value::kind::solve : result_value::kind::apply);
    }
    check_count(n, {m.c_str(), 0, 0, "K.transpose(), K.adjoint(), K.inverse()"});
    const op_method method = m == "transpose" ? op_method::transpose : m == "adjoint" ? op_method::adjoint : op_method::inverse;
    if (op->combined()) return with_method(op, method, {n.name_where, text(n), n.where});
    if (op->methods.size() >= max_operator_methods) {
      throw dsl_error(n.name_where, "too many methods on one operator: " + op->text + " already has " +
                                        std::to_string(op->methods.size()) + " (.transpose(), .adjoint(), .inverse()), "
                                        "the limit is " + std::to_string(max_operator_methods));
    }
    auto out = std::make_shared<operator_value>(*op);
    out->methods.push_back(m == "transpose" ? op_method::transpose : m == "adjoint" ? op_method::adjoint : op_method::inverse);
    out->text = text(n);
    out->where = n.where;
    return std::shared_ptr<const operator_value>(out);
  }

  value make_result(const node& n, const std::shared_ptr<const operator_value>& op, result_value::kind what) {
    if (what == result_value::kind::solve && !solvable(*op)) {
      throw dsl_error(n.name_where, "cannot solve with " + op->text + ": it is a pseudo-inverse, whose inverse is not "
                                    "defined; apply it with .apply(x)");
    }
    const node& arg = *n.args[0];
    const value v = eval(arg);
    auto r = std::make_shared<result_value>();
    r->what = what;
    r->op = op;
    r->text = text(n);
    r->where = n.where;
    const shape_t sizes = op->sizes();
    std::optional<dtype> operand_type;
    std::optional<shape_t> operand_shape;
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&v)) {
      r->operand = *a;
      operand_type = (*a)->type;
      operand_shape = shape_t((*a)->shape.begin(), (*a)->shape.end());
    } else if (auto* g = std::get_if<std::shared_ptr<const generated_tensor>>(&v)) {
      r->operand = *g;
    } else if (auto* inner = std::get_if<std::shared_ptr<const result_value>>(&v)) {
      if ((*inner)->stages >= max_stages) {
        throw dsl_error(n.where, "too many stages: " + text(arg) + " is already a chain of " +
                                     std::to_string((*inner)->stages) + " solves and applies, the limit is " +
                                     std::to_string(max_stages));
      }
      r->stages = (*inner)->stages + 1;
      r->operand = *inner;
      operand_type = (*inner)->type;
      operand_shape = (*inner)->shape();
    } else {
      std::string what_is = kind_name(v);
      if (std::holds_alternative<std::shared_ptr<const factor_value>>(v)) what_is += " (a 1D matrix, not a tensor)";
      if (std::holds_alternative<std::shared_ptr<const krylov_value>>(v)) {
        what_is += ", which is the program's result: a Krylov solve must be the last statement";
      }
      throw dsl_error(arg.where, "the operand of ." + n.text + " must be a tensor (npy(...), random(seed), ones() or "
                                 "a result), got " + what_is);
    }
    if (operand_shape && *operand_shape != sizes) {
      throw dsl_error(arg.where, "shape mismatch: " + op->text + " has sizes " + format_shape(sizes) + " but " +
                                     text(arg) + " has shape " + format_shape(*operand_shape));
    }
    if (op->type && operand_type && *op->type != *operand_type) {
      // Converting complex data to real loses information: then the factors must change.
      const std::string hint = is_complex(*operand_type) && !is_complex(*op->type)
                                   ? "; give the factors a complex value type (e.g. mass(n, degree, " +
                                         std::string(to_string(*operand_type)) + "))"
                                   : "; convert the operand, e.g. npy(\"file.npy\", " + std::string(to_string(*op->type)) + ")";
      throw dsl_error(arg.where, "value type mismatch: " + op->text + " is " + to_string(*op->type) + " but " +
                                     text(arg) + " is " + to_string(*operand_type) + hint);
    }
    r->type = op->type ? op->type : operand_type;
    check_tensor_size(sizes, n.where);
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&v)) {  // checked: read it now
      double bytes = double(size_of((*a)->type));
      for (std::size_t s : sizes) bytes *= double(s);
      if (!(*a)->values) check_memory(bytes, "the operand " + (*a)->text, (*a)->where);
      values_of(**a);
    }
    return std::shared_ptr<const result_value>(r);
  }

  static void check_tensor_size(const shape_t& sizes, const source_range& where) {
    std::uint64_t elements = 1;
    for (std::size_t s : sizes) {
      if (elements > max_tensor_elements / s) {
        throw dsl_error(where, "the tensor " + format_shape(sizes) + " is too large (more than 2^36 values)");
      }
      elements *= s;
    }
  }

  // ---- operator arithmetic ------------------------------------------------------------------

  static std::optional<double> as_number(const value& v) {
    if (auto* i = std::get_if<std::uint64_t>(&v)) return double(*i);
    if (auto* d = std::get_if<double>(&v)) return *d;
    return std::nullopt;
  }

  // A number argument (an integer or a decimal number).
  double coefficient_arg(const node& n, std::size_t i, const char* function, const char* what) {
    const value v = eval(*n.args[i]);
    const auto x = as_number(v);
    if (!x) wrong_type(*n.args[i], v, std::string("a number (") + what + ")", i, function);
    return *x;
  }

  // An assembled operator (mtx_operator(...), jacobi(...)) as a leaf of operator arithmetic;
  // any other value as it is.
  static value as_operator(const value& v) {
    if (auto* a = std::get_if<std::shared_ptr<const assembled_value>>(&v)) return assembled_leaf(*a);
    return v;
  }

  value negate(const node& n) {
    const value v = as_operator(eval(*n.args[0]));
    if (const auto x = as_number(v)) return -*x;
    if (auto* op = std::get_if<std::shared_ptr<const operator_value>>(&v)) {
      return scale(*op, -1.0, {n.name_where, text(n), n.where});
    }
    throw dsl_error(n.name_where, std::string("cannot negate ") + kind_name(v) + " (" + text(*n.args[0]) +
                                      "): '-' applies to operators and numbers");
  }

  // The text of a + b - c ... up to operand i: in full when short or complete, else elided to
  // its last operand, so that a long run costs time in proportion to its length.
  std::string partial_text(const node& n, std::size_t i) const {
    constexpr std::size_t full_up_to = 1024;  // bytes of source
    if (i + 1 == n.args.size() || n.args[i]->end_offset - n.where.offset <= full_up_to) {
      return source_text(m_source, n.where.offset, n.args[i]->end_offset);
    }
    return std::string("... ") + n.ops[i - 1] + " " + text(*n.args[i]);
  }

  // a + b - c ... or a * b * c ..., left to right, as C++ evaluates the same expression.
  value arithmetic(const node& n) {
    value acc = as_operator(eval(*n.args[0]));
    for (std::size_t i = 1; i < n.args.size(); ++i) {
      const value rhs = as_operator(eval(*n.args[i]));
      const char sign = n.ops[i - 1];
      const operator_site site{n.op_where[i - 1], partial_text(n, i), n.where};
      const auto* a = std::get_if<std::shared_ptr<const operator_value>>(&acc);
      const auto* b = std::get_if<std::shared_ptr<const operator_value>>(&rhs);
      if (sign == '+' || sign == '-') {
        if (!a || !b) {
          throw dsl_error(site.at, std::string("cannot ") + (sign == '+' ? "add " : "subtract ") + kind_name(rhs) +
                                       (sign == '+' ? " to " : " from ") + kind_name(acc) +
                                       ": '+' and '-' combine operators (kron(...), mtx_operator(...) and their sums, "
                                       "multiples and compositions) of the same sizes");
        }
        acc = add(*a, *b, sign == '+' ? 1.0 : -1.0, site);
        continue;
      }
      const auto ca = as_number(acc), cb = as_number(rhs);
      if (a && b) acc = compose(*a, *b, site);
      else if (ca && b) acc = scale(*b, *ca, site);
      else if (a && cb) acc = scale(*a, *cb, site);
      else {
        throw dsl_error(site.at, std::string("cannot multiply ") + kind_name(acc) + " by " + kind_name(rhs) +
                                     ": '*' takes a number and an operator (a scalar multiple) or two operators "
                                     "(a composition)");
      }
    }
    return acc;
  }

  // ---- the last statement ------------------------------------------------------------------

  evaluated_program finish(const value& last, const node& where) {
    evaluated_program p;
    p.where = where.where;
    p.text = text(where);
    if (auto* op = std::get_if<std::shared_ptr<const operator_value>>(&last)) {
      // Compiled as kronex::compile(K, sizes) would: the operator itself (an apply of K, or a
      // solve when it ends in .inverse()), for a tensor of its own sizes.
      p.bare_operator = *op;
      p.shape = (*op)->sizes();
      check_tensor_size(p.shape, where.where);
      p.type = (*op)->type.value_or(dtype::float64);
      p.stages.push_back(stage{result_value::kind::apply, *op, (*op)->text, (*op)->where});
      return p;
    }
    if (auto* k = std::get_if<std::shared_ptr<const krylov_value>>(&last)) {
      p.krylov = *k;
      p.type = (*k)->type.value_or(dtype::float64);
      p.shape = (*k)->A.sizes();
      std::visit([&](const auto& o) { p.operand = o; }, (*k)->operand);
      return p;
    }
    const auto* r = std::get_if<std::shared_ptr<const result_value>>(&last);
    if (!r) {
      throw dsl_error(where.where, std::string("the last statement must be a solve or an apply (K.solve(b), "
                                               "K.apply(x)), a Krylov solve (cg(A, b), ...) or an operator, got ") +
                                       kind_name(last));
    }
    // Flatten the nesting: stages innermost first; all share the outermost result's shape.
    std::vector<const result_value*> chain;
    for (const result_value* c = r->get(); c;) {
      chain.push_back(c);
      const auto* inner = std::get_if<std::shared_ptr<const result_value>>(&c->operand);
      c = inner ? inner->get() : nullptr;
    }
    std::optional<dtype> type;
    for (const result_value* c : chain) if (!type && c->type) type = c->type;
    p.type = type.value_or(dtype::float64);
    p.shape = (*r)->shape();
    const result_value* innermost = chain.back();
    if (auto* a = std::get_if<std::shared_ptr<const array_value>>(&innermost->operand)) p.operand = *a;
    else p.operand = std::get<std::shared_ptr<const generated_tensor>>(innermost->operand);
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      p.stages.push_back(stage{(*it)->what, (*it)->op, (*it)->text, (*it)->where});
    }
    return p;
  }

  const std::string& m_source;
  const parameters& m_params;
  std::set<std::string> m_used;
  std::map<std::string, value> m_names;
};

} // namespace

evaluated_program evaluate(const program& p, const std::string& source, const parameters& params) {
  return evaluator(source, params).run(p);
}

evaluated_program evaluate(const std::string& source, const parameters& params) {
  return evaluate(parse(source), source, params);
}

const std::vector<std::string>& builtin_names() {
  static const std::vector<std::string> all = [] {
    std::vector<std::string> v = function_names;
    v.insert(v.end(), keyword_names.begin(), keyword_names.end());
    return v;
  }();
  return all;
}

} // namespace kronex::dsl
