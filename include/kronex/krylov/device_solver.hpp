#pragma once
// Krylov solves on device tensors (docs/krylov.md, "What runs where"): kronex::cg, bicgstab,
// gmres, minres and compile_krylov take b and x as kronex::device_tensor<T, D> or device_view;
// the methods are the host's, written once over a Space (space.hpp), here a device_space. The operator and the
// preconditioner: a kronex expression compiled into its device plan, a sparse_operator uploaded
// once (CSR) and applied by a device kernel, or a matrix_free whose function gets device
// pointers.
//
// Transfers per solve (kronex::transfers()): no upload, and one download of two values per read:
// ||b||, each convergence check, the final residual. So 2 + (number of checks), where the
// number of checks is the length of krylov_result::history (with history on), or iterations + 1
// with check_every = 1. A solve with b = 0 or a non-finite ||b|| makes only the first read.
// Compiling makes the plans' uploads (plan().setup_transfers) and a sparse_operator's three.
#include <cstddef>
#include <type_traits>
#include <utility>

#include "../backends/device/device_operator.hpp"
#include "../backends/device/device_tensor.hpp"
#include "device_space.hpp"
#include "solver.hpp"

namespace kronex {

namespace detail {

// The operator (or preconditioner) as a map on device buffers of like's shape: a sparse_operator
// or matrix_free as device_space says (flat_map), an expression compiled into its device plan by
// krylov_map (kronex::compile with a device operand).
template <class T, class O, class Like>
typename krylov::device_space<T>::map device_krylov_map(const O& o, const Like& like, const char* method,
                                                        const char* role) {
  if constexpr (is_flat_operator<O>) {
    check_krylov_operator<T>(o, to_shape(like.shape()), method, role);
    return krylov::device_space<T>::flat_map(o);
  } else {
    return krylov_map<T>(o, like, method, role);
  }
}

} // namespace detail

// A compiled Krylov solve on device tensors of one shape: as krylov_solver, with the vectors and
// the scalars in device memory. solver(b, x) allocates nothing on the device (a copy of b when b
// is x itself) and makes only the reads' transfers. Move-only: compile one per thread.
template <class T, std::size_t D>
class device_krylov_solver : public detail::krylov_solver_base<krylov::device_space<T>> {
  using space = krylov::device_space<T>;
  using base = detail::krylov_solver_base<space>;

public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = device_tensor<T, D>;

  template <class A, class P, class Like, class R>
  device_krylov_solver(const krylov::method_entry<space>& m, const A& a, const P* p, const Like& like,
                       const krylov_options<R>& opt)
      : device_krylov_solver(m, detail::to_shape(like.shape()), a, p, like, opt) {}

  // Solves A x = b from the initial guess in x, both in device memory; b is not modified.
  krylov_result operator()(device_view<const T, D> b, device_view<T, D> x) {
    detail::check_shape(detail::to_shape(b.shape()), m_shape, "right-hand side", detail::shape_source::compiled);
    detail::check_shape(detail::to_shape(x.shape()), m_shape, "solution x", detail::shape_source::compiled);
    if (b.data() != x.data()) return this->run(b.data(), x.data());
    // b is x: the solve needs b unchanged while x moves, so b is copied on the device first.
    device_tensor<T, D> copy(b.shape());
    kronex::device::copy(copy.data(), b.data(), copy.size() * sizeof(T));
    return this->run(copy.data(), x.data());
  }

  const shape_t& shape() const noexcept { return m_shape; }

  // The one-shot functions' check: b in device memory too, of x's shape (both named).
  template <class B, class X>
  static void check_operands(const char* method, const B& b, const X& x) {
    static_assert(std::is_convertible_v<const B&, device_view<const T, D>>,
                  "kronex: a Krylov solve's b and x must be in the same memory: with a device x, b must be a "
                  "kronex::device_tensor (or device_view) of the same value type and rank");
    detail::check_krylov_operands(method, detail::to_shape(b.shape()), detail::to_shape(x.shape()));
  }

private:
  template <class A, class P, class Like, class R>
  device_krylov_solver(const krylov::method_entry<space>& m, shape_t shape, const A& a, const P* p, const Like& like,
                       const krylov_options<R>& opt)
      : base(m, detail::resolve_options(opt, m.name, m.default_max_factor, detail::product(shape)),
             detail::device_krylov_map<T>(a, like, m.name, "operator"),
             p ? detail::device_krylov_map<T>(*p, like, m.name, "preconditioner") : typename base::map(),
             [n = detail::product(shape)](std::size_t vectors, std::size_t slots) { return space(n, vectors, slots); }),
        m_shape(std::move(shape)) {}

  shape_t m_shape;
};

namespace detail {

template <class T, std::size_t D>
struct krylov_target<device_tensor<T, D>> : std::true_type {
  using solver = device_krylov_solver<T, D>;
};
// b_like may also be a view of device memory the application owns...
template <class T, std::size_t D>
struct krylov_target<device_view<T, D>> : std::true_type {
  using solver = device_krylov_solver<std::remove_const_t<T>, D>;
};
// ... and so may x, when it is a view of mutable memory.
template <class T, std::size_t D>
struct is_krylov_solution_view<device_view<T, D>> : std::bool_constant<!std::is_const_v<T>> {};

} // namespace detail

} // namespace kronex
