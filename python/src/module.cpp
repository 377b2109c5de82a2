// _kronex: the compiled half of the kronex Python package (python/kronex/ is the other half:
// argument conversion, dtype promotion, the pythonic API). Everything here takes exactly what it
// needs (C-contiguous arrays of the compiled value type) and checks it before any work; the GIL
// is released while factors are factored and while solves run.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <xtensor/xadapt.hpp>

#include <kronex/core/error.hpp>
#include <kronex/factors/finite.hpp>

#include <kronex_bench/membw.hpp>
#include <kronex_bench/timing.hpp>

#include "binding_support.hpp"
#include "dlpack.hpp"
#include "expression.hpp"
#include "factor_source.hpp"
#include "krylov.hpp"

namespace py = pybind11;
using namespace kronex::python;

namespace {

// The NumPy dtype of t.
py::dtype numpy_dtype(dtype t) {
  return kronex::dsl::with_dtype(t, [](auto zero) { return py::dtype::of<decltype(zero)>(); });
}

kronex::shape_t shape_of(const py::array& a) {
  return kronex::shape_t(a.shape(), a.shape() + a.ndim());
}

// A buffer kronex reads, or writes in place (writable), before any work: value type t,
// C-contiguous. `name` is how messages call it ("the input", "b"); `fixed_by` says what chose t
// ("the operator was compiled for").
void check_buffer(const py::array& a, dtype t, const std::string& name, bool writable, const char* fixed_by) {
  if (!a.dtype().is(numpy_dtype(t)))
    throw dtype_error("kronex: " + name + " has dtype " + std::string(py::str(a.dtype())) + " but " + fixed_by + " " +
                      kronex::dsl::to_string(t));
  if (!(a.flags() & py::array::c_style)) throw kronex::invalid_operator("kronex: " + name + " is not C-contiguous");
  if (writable && !a.writeable()) throw kronex::invalid_operator("kronex: " + name + " is read-only");
}

// An operand (or output) of a compiled operator: its value type, layout and shape. The messages
// name both shapes or both types.
void check_array(const py::array& a, const compiled& op, const char* what, bool writable) {
  if (op.memory() != memory_space::host)
    throw kronex::invalid_operator(std::string("kronex: this operator was compiled for device arrays; its ") + what +
                                   " is a NumPy array");
  check_buffer(a, op.type(), std::string("the ") + what, writable, "the operator was compiled for");
  kronex::detail::check_shape(shape_of(a), op.shape(), what, kronex::detail::shape_source::compiled);
}

void check_finite(const py::array& a, dtype t, const char* what) {
  kronex::dsl::with_dtype(t, [&](auto zero) {
    using T = decltype(zero);
    const auto shape = shape_of(a);
    const std::size_t n = kronex::detail::product(shape);
    kronex::check_finite(xt::adapt(static_cast<const T*>(a.data()), n, xt::no_ownership(), shape), what);
  });
}

// The factor of a dense square matrix (C-contiguous complex128, converted by the package).
std::shared_ptr<factor_source> dense_factor(const py::array_t<std::complex<double>, py::array::c_style>& a,
                                            const std::string& type) {
  if (a.ndim() != 2 || a.shape(0) != a.shape(1))
    throw kronex::invalid_factor("kronex: a factor must be a square matrix; got shape " +
                                 kronex::detail::format_shape(shape_of(a)));
  if (a.shape(0) == 0) throw kronex::invalid_factor("kronex: a factor must have at least one row");
  factor_source::dense d;
  d.n = std::size_t(a.shape(0));
  d.values.assign(a.data(), a.data() + a.size());
  return std::make_shared<factor_source>(std::move(d), dtype_from_name(type));
}

// The factor of n x n entries (rows, cols, values: from a SciPy sparse matrix's COO form).
std::shared_ptr<factor_source> entries_factor(std::size_t n, const py::array_t<std::int64_t, py::array::c_style>& rows,
                          const py::array_t<std::int64_t, py::array::c_style>& cols,
                          const py::array_t<std::complex<double>, py::array::c_style>& values, const std::string& type) {
  if (rows.size() != cols.size() || rows.size() != values.size())
    throw kronex::invalid_factor("kronex: a factor's rows, columns and values differ in length");
  factor_source::entries e;
  e.n = n;
  for (py::ssize_t k = 0; k < rows.size(); ++k) {
    if (rows.data()[k] < 0 || cols.data()[k] < 0)
      throw kronex::invalid_factor("kronex: a factor's entry has a negative index");
    e.values.push_back({std::size_t(rows.data()[k]), std::size_t(cols.data()[k]), values.data()[k]});
  }
  auto f = std::make_shared<factor_source>(std::move(e), dtype_from_name(type));
  f->storage();  // builds it now: a bad entry is reported here, not at the first solve
  return f;
}

std::shared_ptr<factor_source> gallery_factor(const std::string& name, std::size_t n, std::size_t degree, bool periodic,
                          const std::string& type) {
  factor_source::gallery g;
  using M = factor_source::gallery::matrix;
  if (name == "bspline_mass") g.which = M::bspline_mass;
  else if (name == "bspline_stiffness") g.which = M::bspline_stiffness;
  else if (name == "laplacian") g.which = M::laplacian;
  else throw kronex::error("kronex: no gallery matrix " + name);
  g.n = n;
  g.degree = degree;
  g.bc = periodic ? kronex::boundary::periodic : kronex::boundary::clamped;
  auto f = std::make_shared<factor_source>(g, dtype_from_name(type));
  f->storage();  // the gallery's own checks (n, degree) now
  return f;
}

void run(compiled& op, const py::array& b, py::array& x, bool check_input) {
  check_array(b, op, "input", false);
  check_array(x, op, "output", true);
  if (check_input) check_finite(b, op.type(), "the input");
  const void* in = b.data();
  void* out = x.mutable_data();
  py::gil_scoped_release release;
  op.run(in, out);
}

// An N x N sparse matrix in CSR (int64 indptr and indices, complex128 data, from SciPy) acting on
// tensors of `shape`, in value type `type`.
std::shared_ptr<const sparse_source> sparse_of(const kronex::shape_t& shape, const py::handle& indptr_,
                                               const py::handle& indices_, const py::handle& data_,
                                               const std::string& type) {
  const auto indptr = indptr_.cast<py::array_t<std::int64_t, py::array::c_style>>();
  const auto indices = indices_.cast<py::array_t<std::int64_t, py::array::c_style>>();
  const auto data = data_.cast<py::array_t<std::complex<double>, py::array::c_style>>();
  csr_arrays c;
  for (py::ssize_t k = 0; k < indptr.size(); ++k) {
    if (indptr.data()[k] < 0) throw kronex::invalid_operator("kronex: a sparse matrix's indptr has a negative entry");
    c.row_ptr.push_back(std::size_t(indptr.data()[k]));
  }
  for (py::ssize_t k = 0; k < indices.size(); ++k) {
    if (indices.data()[k] < 0) throw kronex::invalid_operator("kronex: a sparse matrix's indices have a negative entry");
    c.col_idx.push_back(std::size_t(indices.data()[k]));
  }
  c.values.assign(data.data(), data.data() + data.size());
  return std::make_shared<const sparse_source>(shape, std::move(c), dtype_from_name(type));
}

// The operator or preconditioner of a Krylov solve, as the package describes it:
//   ("compiled", _Compiled)            a kronex operator compiled for b's shape and value type
//   ("csr", indptr, indices, data, dtype)  an N x N sparse matrix (int64, int64, complex128 arrays;
//                                      its own dtype)
//   ("function", f, flat)              y = f(x): x a read-only array over kronex's buffer, flat
//                                      (N,) or shaped like b; called with the GIL taken
// None: no preconditioner.
erased_map map_of(const py::object& spec, const kronex::shape_t& shape, dtype t, const std::string& role) {
  if (spec.is_none()) return {};
  const auto d = spec.cast<py::tuple>();
  const auto kind = d[0].cast<std::string>();
  const std::size_t n = kronex::detail::product(shape);
  if (kind == "compiled") {
    auto op = d[1].cast<std::shared_ptr<compiled>>();
    if (op->memory() != memory_space::host)
      throw kronex::backend_unavailable("kronex: the " + role + " was compiled for device arrays; Krylov solves run on "
                                        "host arrays");
    if (op->type() != t)
      throw dtype_error("kronex: the " + role + " was compiled for " + kronex::dsl::to_string(op->type()) +
                        " but the solve computes in " + kronex::dsl::to_string(t));
    kronex::detail::check_shape(shape, op->shape(), ("the " + role + "'s operand").c_str(),
                                kronex::detail::shape_source::compiled);
    return [op](const void* x, void* y) { op->run(x, y); };
  }
  if (kind == "csr") return sparse_map(*sparse_of(shape, d[1], d[2], d[3], d[4].cast<std::string>()), t);
  // A Python function. The object is released with the GIL taken, wherever the last copy of the
  // map goes (the solver copies maps while the GIL is released).
  std::shared_ptr<py::object> f(new py::object(d[1]), [](py::object* p) {
    py::gil_scoped_acquire gil;
    delete p;
  });
  const bool flat = d[2].cast<bool>();
  std::vector<py::ssize_t> dims;
  if (flat) dims.push_back(py::ssize_t(n));
  else for (std::size_t s : shape) dims.push_back(py::ssize_t(s));
  return kronex::dsl::with_dtype(t, [&](auto zero) -> erased_map {
    using T = decltype(zero);
    return [f, dims, n, role](const void* xv, void* yv) {
      py::gil_scoped_acquire gil;
      const T* x = static_cast<const T*>(xv);
      // A read-only view of kronex's vector: no copy, and the function cannot change it.
      py::array_t<T> view(dims, x, py::capsule(x, [](void*) {}));
      view.attr("flags").attr("writeable") = false;
      const py::object r = (*f)(view);
      const py::array any = py::array::ensure(r);
      if (!any || any.dtype().kind() == 'O')
        throw dtype_error("kronex: the " + role + " function returned " + std::string(py::str(py::type::of(r))) +
                          ", not an array of numbers");
      if (!kronex::value_traits<T>::is_complex && any.dtype().kind() == 'c')
        throw dtype_error("kronex: the " + role + " function returned complex values in a real solve");
      const auto y = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(any);
      if (!y || std::size_t(y.size()) != n)
        throw kronex::dimension_mismatch("kronex: the " + role + " function returned " + std::to_string(any.size()) +
                                         " values, not " + std::to_string(n));
      std::copy(y.data(), y.data() + n, static_cast<T*>(yv));
    };
  });
}

kronex::krylov_method method_from_name(const std::string& name) {
  if (name == "cg") return kronex::krylov_method::cg;
  if (name == "bicgstab") return kronex::krylov_method::bicgstab;
  if (name == "gmres") return kronex::krylov_method::gmres;
  if (name == "minres") return kronex::krylov_method::minres;
  throw kronex::error("kronex: no Krylov method " + name);
}

py::dict krylov_solve(const std::string& method, const std::string& type, const py::object& A, const py::object& P,
                      const py::array& b, py::array& x, double rtol, double atol, const py::object& maxiter,
                      std::size_t restart, std::size_t check_every, bool history) {
  const dtype t = dtype_from_name(type);
  const kronex::krylov_method m = method_from_name(method);
  check_buffer(b, t, "b", false, "the solve computes in");
  check_buffer(x, t, "x", true, "the solve computes in");
  const kronex::shape_t shape = shape_of(b);
  kronex::detail::check_shape(shape_of(x), shape, "x", kronex::detail::shape_source::compiled);
  if (b.data() == x.data()) throw kronex::invalid_operator("kronex: b and x must be different arrays");
  erased_map a = map_of(A, shape, t, "operator"), p = map_of(P, shape, t, "preconditioner");
  kronex::krylov_options<double> o;
  o.rtol = rtol;
  o.atol = atol;
  if (!maxiter.is_none()) o.max_iterations = maxiter.cast<std::size_t>();
  o.restart = restart;
  o.check_every = check_every;
  o.history = history;
  const void* in = b.data();
  void* out = x.mutable_data();
  kronex::krylov_result r;
  {
    py::gil_scoped_release release;
    r = kronex::python::krylov(m, shape, t, std::move(a), std::move(p), in, out, o);
  }
  py::dict d;
  d["converged"] = r.converged;
  d["status"] = kronex::to_string(r.status);
  d["iterations"] = r.iterations;
  d["relative_residual"] = r.relative_residual;
  d["history"] = r.history;
  d["message"] = r.message;
  return d;
}

// Python exception classes for kronex's errors: Error (a RuntimeError) and one subclass per
// kronex::error subclass; some are ValueError or TypeError too, as Python code expects.
struct error_types {
  py::object base, dtype, dimension_mismatch, invalid_factor, invalid_operator, file_error, size_limit, non_finite, singular,
      not_separable, lapack, backend_unavailable, transfer, device, mpi;
};

py::object new_error(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string full = std::string("kronex.") + name;
  py::object type = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(full.c_str(), doc, bases.ptr(), nullptr));
  if (!type) throw py::error_already_set();
  m.attr(name) = type;
  return type;
}

void raise(const py::object& type, const std::string& what) { PyErr_SetString(type.ptr(), what.c_str()); }

} // namespace

PYBIND11_MODULE(_kronex, m) {
  m.doc() = "kronex: Kronecker-structured linear algebra (the compiled module; use the kronex package)";

  // Never destroyed: the classes must outlive every module-level object at interpreter exit.
  static error_types& errors = *new error_types;
  py::object runtime_error = py::reinterpret_borrow<py::object>(PyExc_RuntimeError);
  py::object value_error = py::reinterpret_borrow<py::object>(PyExc_ValueError);
  errors.base = new_error(m, "Error", py::make_tuple(runtime_error), "Any error kronex reports.");
  auto sub = [&](const char* name, const char* doc, py::object also = py::object()) {
    return new_error(m, name, also ? py::make_tuple(errors.base, also) : py::make_tuple(errors.base), doc);
  };
  errors.dtype = sub("DTypeError", "A value type kronex cannot use here; the message names it.",
                     py::reinterpret_borrow<py::object>(PyExc_TypeError));
  errors.dimension_mismatch = sub("DimensionMismatchError", "Shapes that do not fit; the message names both.", value_error);
  errors.invalid_factor = sub("InvalidFactorError", "A factor that is not a square matrix kronex can use.", value_error);
  errors.invalid_operator = sub("InvalidOperatorError", "An operator, operand or option kronex cannot use.", value_error);
  errors.file_error = sub("FileError", "A file that cannot be read or written.");
  errors.size_limit = sub("SizeLimitExceededError", "A problem larger than kronex's limits.");
  errors.non_finite = sub("NonFiniteValueError", "A NaN or infinity where finite values are needed.", value_error);
  errors.singular = sub("SingularFactorError", "A singular factor: .mode and .info (LAPACK's) say which.");
  errors.not_separable = sub("NotSeparableError", "An operator with no direct solve: use a Krylov solver.");
  errors.lapack = sub("LapackError", "LAPACK rejected its arguments (a bug in kronex).");
  errors.backend_unavailable = sub("BackendUnavailableError", "A backend that is not built or not present.");
  errors.transfer = sub("TransferError", "A host/device transfer where none is allowed.");
  errors.device = sub("DeviceError", "A failure reported by the device runtime.");
  errors.mpi = sub("MPIError", "A failure reported by MPI.");

  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const kronex::singular_factor& e) {
      py::object exc = errors.singular(e.what());
      exc.attr("mode") = e.mode();
      exc.attr("info") = e.info();
      PyErr_SetObject(errors.singular.ptr(), exc.ptr());
    } catch (const dtype_error& e) {
      raise(errors.dtype, e.what());
    } catch (const kronex::dimension_mismatch& e) {
      raise(errors.dimension_mismatch, e.what());
    } catch (const kronex::invalid_factor& e) {
      raise(errors.invalid_factor, e.what());
    } catch (const kronex::invalid_operator& e) {
      raise(errors.invalid_operator, e.what());
    } catch (const kronex::file_error& e) {
      raise(errors.file_error, e.what());
    } catch (const kronex::size_limit_exceeded& e) {
      raise(errors.size_limit, e.what());
    } catch (const kronex::non_finite_value& e) {
      raise(errors.non_finite, e.what());
    } catch (const kronex::not_separable& e) {
      raise(errors.not_separable, e.what());
    } catch (const kronex::lapack_error& e) {
      raise(errors.lapack, e.what());
    } catch (const kronex::backend_unavailable& e) {
      raise(errors.backend_unavailable, e.what());
    } catch (const kronex::transfer_error& e) {
      raise(errors.transfer, e.what());
    } catch (const kronex::device_error& e) {
      raise(errors.device, e.what());
    } catch (const kronex::mpi_error& e) {
      raise(errors.mpi, e.what());
    } catch (const kronex::error& e) {
      raise(errors.base, e.what());
    }
  });

  py::class_<factor_source, std::shared_ptr<factor_source>>(m, "Factor", "A 1D factor (use kronex.factor to make one).")
      .def_property_readonly("n", &factor_source::size, "Its size: n for an n x n matrix.")
      .def_property_readonly("_dtype", [](const factor_source& f) { return kronex::dsl::to_string(f.type()); })
      .def_property_readonly("storage", &factor_source::storage,
                             "How kronex stores it: dense, banded, periodic banded, diagonal or identity.")
      .def("__repr__", &factor_source::repr)
      .def("toarray", [](const factor_source& f) {
        return kronex::dsl::with_dtype(f.type(), [&](auto zero) -> py::array {
          using T = decltype(zero);
          const kronex::factor_view<T> v = kronex::make_view<T>(f.get<T>());
          py::array_t<T> a({v.n, v.n});
          T* out = a.mutable_data();
          for (std::size_t i = 0; i < v.n; ++i)
            for (std::size_t j = 0; j < v.n; ++j) out[i * v.n + j] = v(i, j);
          return std::move(a);
        });
      }, "The matrix as a dense NumPy array (what kronex stores, in the factor's dtype).");

  m.def("_dense_factor", &dense_factor);
  m.def("_entries_factor", &entries_factor);
  m.def("_gallery_factor", &gallery_factor);
  m.def("_converted_factor", [](const std::shared_ptr<factor_source>& f, const std::string& type) {
    factor_source::converted c{f->size(), f};
    auto g = std::make_shared<factor_source>(c, dtype_from_name(type));
    g->storage();  // converts now: a value the new type cannot hold is reported here
    return g;
  });
  m.def("_identity_factor", [](std::size_t n, const std::string& type) {
    if (n == 0) throw kronex::invalid_factor("kronex: an identity factor needs n >= 1");
    return std::make_shared<factor_source>(factor_source::identity{n}, dtype_from_name(type));
  });

  using E = expression;
  py::class_<E, std::shared_ptr<E>>(m, "_Expression")
      .def_property_readonly("dtype", [](const E& e) { return kronex::dsl::to_string(e.type()); })
      .def_property_readonly("shape", [](const E& e) { return py::tuple(py::cast(e.sizes())); })
      .def_property_readonly("factors", [](const E& e) {
        std::vector<std::shared_ptr<factor_source>> out;
        for (const auto& f : e.factors()) out.push_back(std::const_pointer_cast<factor_source>(f));
        return out;
      })
      .def("text", &E::text);
  m.def("_kron", [](const std::vector<std::shared_ptr<factor_source>>& f, const std::string& type) {
    return std::const_pointer_cast<E>(E::kron(std::vector<factor_ptr>(f.begin(), f.end()), dtype_from_name(type)));
  });
  auto mutable_ = [](expression_ptr e) { return std::const_pointer_cast<E>(e); };
  m.def("_sparse_operator", [=](const std::vector<std::size_t>& shape, const py::handle& indptr,
                                const py::handle& indices, const py::handle& data, const std::string& type) {
    return mutable_(E::sparse(sparse_of(shape, indptr, indices, data, type)));
  });
  m.def("_scaled", [=](const std::shared_ptr<E>& a, std::complex<double> c) { return mutable_(E::scaled(a, c)); });
  m.def("_sum", [=](const std::shared_ptr<E>& a, const std::shared_ptr<E>& b, double sign) {
    return mutable_(E::sum(a, b, sign));
  });
  m.def("_product", [=](const std::shared_ptr<E>& a, const std::shared_ptr<E>& b) { return mutable_(E::product(a, b)); });
  m.def("_method", [=](const std::shared_ptr<E>& a, const std::string& name, double rtol) {
    const E::form f = name == "transpose" ? E::form::transpose
                      : name == "adjoint" ? E::form::adjoint
                      : name == "inverse" ? E::form::inverse
                                          : E::form::pseudo_inverse;
    return mutable_(E::method(a, f, rtol));
  });
  m.def("_as_type", [=](const std::shared_ptr<E>& a, const std::string& type) {
    return mutable_(E::as_type(a, dtype_from_name(type)));
  });

  py::class_<compiled, std::shared_ptr<compiled>>(m, "_Compiled")
      .def_property_readonly("dtype", [](const compiled& c) { return kronex::dsl::to_string(c.type()); })
      .def_property_readonly("shape", [](const compiled& c) { return py::tuple(py::cast(c.shape())); })
      .def("run", &run, py::arg("b"), py::arg("x"), py::arg("check_finite") = false)
      .def("plan_text", [](const compiled& c) { return kronex::to_string(c.plan()); })
      // For benchmarks/python: the C++ call's own time, `repeats` runs timed in C++ (sorted
      // seconds), on arrays already checked as a call checks them.
      .def("time_runs", [](compiled& c, const py::array& b, py::array& x, int repeats) {
        check_array(b, c, "input", false);
        check_array(x, c, "output", true);
        const void* in = b.data();
        void* out = x.mutable_data();
        py::gil_scoped_release release;
        return kronex_bench::sorted_seconds(repeats, [&] { c.run(in, out); });
      })
      .def("plan_json", [](const compiled& c) { return kronex::dsl::to_json(c.plan()).dump(); });

  def_compile_and_explain<host_backend>(m, "_compile", "_explain");
  m.def("_krylov", &krylov_solve);
  m.def("_dlpack_view", &dlpack_view);
  // The benchmarks' memory-bandwidth floor (a triad, bytes/s), as the C++ benchmarks measure it.
  m.def("_triad_bandwidth", [](int threads) {
    py::gil_scoped_release release;
    return kronex_bench::triad_bandwidth(std::size_t(1) << 25, 7, threads);
  });
  m.def("_check_shape", [](const std::vector<std::size_t>& shape, const std::vector<std::size_t>& expected,
                           const std::string& what) {
    kronex::detail::check_shape(shape, expected, what.c_str(), kronex::detail::shape_source::compiled);
  });
  m.def("_check_finite", [](const py::array& a, const std::string& type, const std::string& what) {
    check_finite(a, dtype_from_name(type), what.c_str());
  });
}
