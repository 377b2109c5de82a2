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

#include "../backends/device/device_operator.hpp"
#include "../backends/device/device_tensor.hpp"
#include "device_space.hpp"
#include "solver.hpp"

namespace kronex {

// A compiled Krylov solve on device tensors of one shape: as krylov_solver, with the vectors and
// the scalars in device memory. solver(b, x) allocates nothing on the device (a copy of b when b
// is x itself) and makes only the reads' transfers. Move-only: compile one per thread.
template <class T, std::size_t D>
class device_krylov_solver : public detail::krylov_solver_core<krylov::device_space<T>, D> {
  using core = detail::krylov_solver_core<krylov::device_space<T>, D>;

public:
  using tensor_type = device_tensor<T, D>;

  template <class A, class P, class Like, class R>
  device_krylov_solver(const krylov::method_entry<typename core::space>& m, const A& a, const P* p, const Like& like,
                       const krylov_options<R>& opt)
      : core(m, a, p, like, opt) {}

  // Solves A x = b from the initial guess in x, both in device memory; b is not modified.
  krylov_result operator()(device_view<const T, D> b, device_view<T, D> x) {
    detail::check_shape(detail::to_shape(b.shape()), this->m_shape, "right-hand side", detail::shape_source::compiled);
    detail::check_shape(detail::to_shape(x.shape()), this->m_shape, "solution x", detail::shape_source::compiled);
    if (b.data() != x.data()) return this->run(b.data(), x.data());
    // b is x: the solve needs b unchanged while x moves, so b is copied on the device first.
    device_tensor<T, D> copy(b.shape());
    kronex::device::copy(copy.data(), b.data(), copy.size() * sizeof(T));
    return this->run(copy.data(), x.data());
  }
};

namespace detail {

template <class T, std::size_t D>
struct krylov_compiled<device_tensor<T, D>> {
  using type = device_krylov_solver<T, D>;
  using space = krylov::device_space<T>;
};
// b_like may also be a view of device memory the application owns.
template <class T, std::size_t D>
struct krylov_compiled<device_view<T, D>> : krylov_compiled<device_tensor<std::remove_const_t<T>, D>> {};
template <class T, std::size_t D>
struct krylov_solution<device_tensor<T, D>> : std::true_type {
  using compiled = krylov_compiled<device_tensor<T, D>>;
  template <class B>
  static constexpr bool takes = std::is_convertible_v<const B&, device_view<const T, D>>;
};
// x may be a view of mutable device memory the application owns.
template <class T, std::size_t D>
struct krylov_solution<device_view<T, D>> : krylov_solution<device_tensor<T, D>> {};
template <class T, std::size_t D>
struct krylov_solution<device_view<const T, D>> : std::false_type {};

} // namespace detail

} // namespace kronex
