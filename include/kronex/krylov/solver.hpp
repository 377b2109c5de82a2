#pragma once
// The public Krylov entry points (docs/krylov.md):
//
//   kronex::cg(A, b, x[, P][, opt])        also bicgstab, gmres, minres: one solve, x the initial
//                                          guess in and the solution out
//   kronex::compile_krylov(method, A[, P], b_like[, opt])
//                                          a krylov_solver<T, D>: A and P compiled once, the
//                                          workspace allocated once; solver(b, x) many times
//
// A is a sparse_operator<T>, a matrix_free<T> or any kronex expression kronex::compile takes (a
// Kronecker product, a sum, a composition...); P the same (typically kron(...).inverse(), or the
// inverse of a sum, solved by fast diagonalisation). Host operands (xt::xtensor) here;
// distributed_solver.hpp (included by kronex/mpi.hpp) adds kronex::distributed_tensor, and
// device_solver.hpp (included by kronex/device.hpp) kronex::device_tensor.
//
// Compile-time cost: an expression is compiled into its host plan and the plan erased behind a
// std::function, so each method is instantiated once per value type, whatever the operators.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

#include <xtensor/xtensor.hpp>

#include "../compile.hpp"
#include "../operators/matrix_free.hpp"
#include "../operators/sparse_operator.hpp"
#include "bicgstab.hpp"
#include "cg.hpp"
#include "control.hpp"
#include "gmres.hpp"
#include "host_space.hpp"
#include "minres.hpp"
#include "options.hpp"

namespace kronex {

namespace krylov {

// A method, erased: what krylov_solver needs to size its workspace and run it.
template <class Space>
struct method_entry {
  void (*run)(control<Space>&);
  std::size_t (*slots)(const settings&);
  std::size_t (*vectors)(const settings&);
  std::size_t default_max_factor;
  const char* name;
};

// A method's workspace: slot_count scalars and vector_count vectors, or, when they depend on
// the options (GMRES: on restart), what its slots(settings) and vectors(settings) say.
template <class Method, class = void>
struct workspace_of {
  static std::size_t slots(const settings&) { return Method::slot_count; }
  static std::size_t vectors(const settings&) { return Method::vector_count; }
};
template <class Method>
struct workspace_of<Method, std::void_t<decltype(Method::slots(std::declval<const settings&>()))>> {
  static std::size_t slots(const settings& st) { return Method::slots(st); }
  static std::size_t vectors(const settings& st) { return Method::vectors(st); }
};

template <class Method, class Space>
method_entry<Space> entry_of(const char* name) {
  return {&Method::template run<Space>, &workspace_of<Method>::slots, &workspace_of<Method>::vectors,
          Method::default_max_factor, name};
}

template <class Space>
method_entry<Space> entry_for(krylov_method m) {
  switch (m) {
    case krylov_method::cg: return entry_of<cg_method, Space>("cg");
    case krylov_method::bicgstab: return entry_of<bicgstab_method, Space>("bicgstab");
    case krylov_method::gmres: return entry_of<gmres_method, Space>("gmres");
    case krylov_method::minres: break;
  }
  return entry_of<minres_method, Space>("minres");
}

} // namespace krylov

namespace detail {

template <class O>
struct is_flat_operator_impl : std::false_type {};
template <class T>
struct is_flat_operator_impl<sparse_operator<T>> : std::true_type {};
template <class T>
struct is_flat_operator_impl<matrix_free<T>> : std::true_type {};
template <class O>
inline constexpr bool is_flat_operator = is_flat_operator_impl<std::decay_t<O>>::value;

// What a Krylov solve takes as its operator or preconditioner.
template <class O>
inline constexpr bool is_krylov_operator = is_flat_operator<O> || is_operator_expr<O>;

template <class O>
shape_t krylov_operator_shape(const O& o) {
  if constexpr (is_flat_operator<O>) return o.shape();
  else return o.sizes();
}

// Every backend's check of an operator (or preconditioner) against the right-hand side's shape
// (`what`: "shape", or "global shape" for distributed tensors), naming both.
template <class T, class O>
void check_krylov_operator(const O& o, const shape_t& shape, const char* method, const char* role,
                           const char* what = "shape") {
  static_assert(std::is_void_v<typename O::value_type> || std::is_same_v<typename O::value_type, T>,
                "kronex: a Krylov solve's operator and preconditioner must have the value type of b and x");
  const shape_t own = krylov_operator_shape(o);
  if (own != shape)
    throw dimension_mismatch(message("kronex::", method, ": the ", role, "'s shape ", format_shape(own),
                                     " does not match the right-hand side's ", what, " ", format_shape(shape)));
}

// Every backend's check of the one-shot functions' b and x (`what`: "shape" or "global shape").
inline void check_krylov_operands(const char* method, const shape_t& bs, const shape_t& xs, const char* what = "shape") {
  if (bs != xs)
    throw dimension_mismatch(message("kronex::", method, ": x has ", what, " ", format_shape(xs), " but b has ", what, " ",
                                     format_shape(bs)));
}

// The operator (or preconditioner) as a linear map on C-order buffers of `like`'s shape: a
// sparse_operator or matrix_free shared or copied, an expression compiled into its host plan.
template <class T, class O, class Like>
typename krylov::host_space<T>::map krylov_map(const O& o, const Like& like, const char* method, const char* role) {
  check_krylov_operator<T>(o, to_shape(like.shape()), method, role);
  if constexpr (is_flat_operator<O>) {
    return [o](const T* x, T* y) { o.run(x, y); };
  } else {
    // Held by a shared_ptr (std::function copies its target; composite plans are move-only). The
    // solver owning it is move-only, so no two solvers share a plan's workspace.
    auto op = std::make_shared<decltype(kronex::compile(o, like))>(kronex::compile(o, like));
    return [op](const T* x, T* y) { op->run(x, y); };
  }
}

template <class R>
krylov::settings resolve_options(const krylov_options<R>& o, const char* method, std::size_t max_factor, std::size_t n) {
  const auto fail = [&](const char* what) {
    throw error(message("kronex::", method, ": krylov_options::", what));
  };
  if (!(double(o.rtol) >= 0) || !std::isfinite(double(o.rtol))) fail("rtol must be finite and >= 0");
  if (!(double(o.atol) >= 0) || !std::isfinite(double(o.atol))) fail("atol must be finite and >= 0");
  if (o.check_every == 0) fail("check_every must be at least 1");
  if (o.restart == 0) fail("restart must be at least 1");
  krylov::settings s;
  s.method = method;
  s.rtol = double(o.rtol);
  s.atol = double(o.atol);
  s.max_iterations = o.max_iterations ? *o.max_iterations : max_factor * n;
  s.restart = std::min(o.restart, n);
  s.check_every = o.check_every;
  s.history = o.history;
  return s;
}

} // namespace detail

namespace detail {

// What a compiled Krylov solve holds on every backend: the method, its settings, the operator
// and the preconditioner as maps of the space, and the space (the workspace: the method's
// vectors and scalars, and one vector for the final residual). krylov_solver (host) and
// distributed_krylov_solver derive from it, adding the checks and the tensors of their backend.
template <class Space>
class krylov_solver_base {
public:
  using space_type = Space;
  using map = typename Space::map;

  krylov_solver_base(krylov_solver_base&&) noexcept = default;
  krylov_solver_base& operator=(krylov_solver_base&&) noexcept = default;
  krylov_solver_base(const krylov_solver_base&) = delete;
  krylov_solver_base& operator=(const krylov_solver_base&) = delete;

  const char* method() const noexcept { return m_method.name; }
  bool preconditioned() const noexcept { return bool(m_P); }
  // The batched reductions (calls of the space's dots) of the last solve: on distributed
  // tensors, its MPI_Allreduce calls besides those of the operators.
  std::size_t reductions() const noexcept { return m_reductions; }

protected:
  // make_space(vectors, slots) builds the space once the settings are known.
  template <class MakeSpace>
  krylov_solver_base(const krylov::method_entry<Space>& m, krylov::settings st, map A, map P, MakeSpace&& make_space)
      : m_method(m),
        m_settings(st),
        m_A(std::move(A)),
        m_P(std::move(P)),
        m_space(make_space(m.vectors(st) + 1, m.slots(st))) {}

  krylov_result run(const typename Space::value_type* b, typename Space::value_type* x) {
    const std::size_t before = m_space.reductions();
    krylov_result r = krylov::solve(m_space, m_method.run, m_A, m_P ? &m_P : nullptr, m_space.wrap(b), m_space.wrap(x),
                                    m_space.vector(m_method.vectors(m_settings)), m_settings);
    m_reductions = m_space.reductions() - before;
    return r;
  }

  krylov::method_entry<Space> m_method;
  krylov::settings m_settings;
  map m_A, m_P;
  Space m_space;
  std::size_t m_reductions = 0;
};

} // namespace detail

// A compiled Krylov solve for right-hand sides of one shape: the operator and the preconditioner
// compiled, the workspace (vectors and scalars) allocated. solver(b, x) solves with x as the
// initial guess; it allocates no vector (only the result's message and history, and a copy of b
// when b is not an xt::xtensor<T, D> or is x itself). Move-only, like a device operator (it owns
// compiled plans with their workspaces): compile one per thread.
template <class T, std::size_t D>
class krylov_solver : public detail::krylov_solver_base<krylov::host_space<T>> {
  using base = detail::krylov_solver_base<krylov::host_space<T>>;

public:
  using value_type = T;
  static constexpr std::size_t rank = D;
  using tensor_type = xt::xtensor<T, D>;

  template <class A, class P, class Like, class R>
  krylov_solver(const krylov::method_entry<krylov::host_space<T>>& m, const A& a, const P* p, const Like& like,
                const krylov_options<R>& opt)
      : krylov_solver(m, detail::to_shape(like.shape()), a, p, like, opt) {}

  // Solves A x = b from the initial guess in x; returns what happened (docs/krylov.md).
  template <class E>
  krylov_result operator()(const xt::xexpression<E>& b, tensor_type& x) {
    static_assert(std::is_same_v<typename E::value_type, T>, "kronex: b's value type must match the solver's");
    static_assert(detail::rank_matches<E, D>, "kronex: b's rank must match the solver's");
    const E& e = b.derived_cast();
    detail::check_shape(detail::to_shape(e.shape()), m_shape, "right-hand side", detail::shape_source::compiled);
    detail::check_shape(detail::to_shape(x.shape()), m_shape, "solution x", detail::shape_source::compiled);
    if constexpr (std::is_same_v<E, tensor_type>) {
      if (e.data() != x.data()) return this->run(e.data(), x.data());
    }
    const tensor_type copy = e;
    return this->run(copy.data(), x.data());
  }

  const shape_t& shape() const noexcept { return m_shape; }

  // The one-shot functions' check: b and x of the same shape (both named).
  template <class B>
  static void check_operands(const char* method, const B& b, const tensor_type& x) {
    static_assert(xt::is_xexpression<B>::value,
                  "kronex: a Krylov solve's b and x must be in the same memory: with a host x, b must be a host "
                  "tensor expression");
    detail::check_krylov_operands(method, detail::to_shape(b.shape()), detail::to_shape(x.shape()));
  }

private:
  template <class A, class P, class Like, class R>
  krylov_solver(const krylov::method_entry<krylov::host_space<T>>& m, shape_t shape, const A& a, const P* p,
                const Like& like, const krylov_options<R>& opt)
      : base(m, detail::resolve_options(opt, m.name, m.default_max_factor, detail::product(shape)),
             detail::krylov_map<T>(a, like, m.name, "operator"),
             p ? detail::krylov_map<T>(*p, like, m.name, "preconditioner") : typename base::map(),
             [n = detail::product(shape)](std::size_t vectors, std::size_t slots) {
               return krylov::host_space<T>(n, vectors, slots);
             }),
        m_shape(std::move(shape)) {}

  shape_t m_shape;
};

namespace detail {

// The compiled solver for right-hand sides like X (`solver`), when X is a tensor a Krylov solve
// takes (`value`): a host tensor of fixed rank here; distributed tensors in
// krylov/distributed_solver.hpp (kronex/mpi.hpp).
template <class X, class = void>
struct krylov_target : std::false_type {};
template <class X>
struct krylov_target<X, std::enable_if_t<xt::is_xexpression<X>::value && (static_rank<X>::value > 0)>> : std::true_type {
  using solver = krylov_solver<typename X::value_type, static_rank<X>::value>;
};

// A writable view that a backend's solver also takes as x (device_view, device_solver.hpp).
template <class X>
struct is_krylov_solution_view : std::false_type {};

// x: the solver's own tensor type, or such a view (x is written in place).
template <class X, class = void>
struct is_krylov_solution : std::false_type {};
template <class X>
struct is_krylov_solution<X, std::enable_if_t<krylov_target<X>::value>>
    : std::bool_constant<std::is_same_v<X, typename krylov_target<X>::solver::tensor_type> ||
                         is_krylov_solution_view<X>::value> {};

template <class Like>
constexpr void check_krylov_like() {
  static_assert(krylov_target<Like>::value,
                "kronex::compile_krylov: b_like must be a host tensor of fixed rank (an xt::xtensor<T, D>) or, with "
                "kronex/device.hpp, a kronex::device_tensor<T, D> or, with kronex/mpi.hpp, a "
                "kronex::distributed_tensor<T, D>");
}

template <class Like>
using krylov_solver_for = typename krylov_target<Like>::solver;

template <class Like>
using krylov_space_for = typename krylov_solver_for<Like>::space_type;

// kronex::cg, bicgstab, gmres, minres: one solve each, with or without a preconditioner and
// options (function objects, so that each instantiates its own method only). x picks the
// backend (krylov_target); its solver checks b against x.
template <class Method>
struct krylov_function {
  const char* name;

  template <class A, class B, class X, class R, class = std::enable_if_t<is_krylov_operator<A> && is_krylov_solution<X>::value>>
  krylov_result operator()(const A& a, const B& b, X& x, const krylov_options<R>& opt) const {
    return solve(a, static_cast<const A*>(nullptr), b, x, opt);
  }
  template <class A, class B, class X, class = std::enable_if_t<is_krylov_operator<A> && is_krylov_solution<X>::value>>
  krylov_result operator()(const A& a, const B& b, X& x) const {
    return solve(a, static_cast<const A*>(nullptr), b, x, krylov_options<real_t<typename X::value_type>>{});
  }
  template <class A, class B, class X, class P, class R,
            class = std::enable_if_t<is_krylov_operator<A> && is_krylov_operator<P> && is_krylov_solution<X>::value>>
  krylov_result operator()(const A& a, const B& b, X& x, const P& p, const krylov_options<R>& opt) const {
    return solve(a, &p, b, x, opt);
  }
  template <class A, class B, class X, class P,
            class = std::enable_if_t<is_krylov_operator<A> && is_krylov_operator<P> && is_krylov_solution<X>::value>>
  krylov_result operator()(const A& a, const B& b, X& x, const P& p) const {
    return solve(a, &p, b, x, krylov_options<real_t<typename X::value_type>>{});
  }

  // Any other x (a device tensor, a const tensor, an xt::xarray): a readable error.
  template <class A, class B, class X, class... Rest, class = std::enable_if_t<!is_krylov_solution<X>::value>>
  krylov_result operator()(const A&, const B&, X&, const Rest&...) const {
    static_assert(always_false<X>, "kronex: a Krylov solve's x must be a (non-const) xt::xtensor<T, D> or, with "
                                   "kronex/device.hpp, a kronex::device_tensor<T, D> (or device_view<T, D>) or, "
                                   "with kronex/mpi.hpp, a kronex::distributed_tensor<T, D>");
    return {};
  }

private:
  template <class A, class P, class B, class X, class R>
  krylov_result solve(const A& a, const P* p, const B& b, X& x, const krylov_options<R>& opt) const {
    using solver = krylov_solver_for<X>;
    solver::check_operands(name, b, x);
    solver s(krylov::entry_of<Method, typename solver::space_type>(name), a, p, x, opt);
    return s(b, x);
  }
};

} // namespace detail

inline constexpr detail::krylov_function<krylov::cg_method> cg{"cg"};
inline constexpr detail::krylov_function<krylov::bicgstab_method> bicgstab{"bicgstab"};
inline constexpr detail::krylov_function<krylov::gmres_method> gmres{"gmres"};
inline constexpr detail::krylov_function<krylov::minres_method> minres{"minres"};

// The solver for right-hand sides shaped like b_like (an xt::xtensor<T, D>), with a preconditioner.
template <class A, class P, class Like, class R,
          class = std::enable_if_t<detail::is_krylov_operator<A> && detail::is_krylov_operator<P>>>
auto compile_krylov(krylov_method m, const A& a, const P& p, const Like& b_like, const krylov_options<R>& opt) {
  detail::check_krylov_like<Like>();
  using solver = detail::krylov_solver_for<Like>;
  return solver(krylov::entry_for<detail::krylov_space_for<Like>>(m), a, &p, b_like, opt);
}
template <class A, class P, class Like,
          class = std::enable_if_t<detail::is_krylov_operator<A> && detail::is_krylov_operator<P>>>
auto compile_krylov(krylov_method m, const A& a, const P& p, const Like& b_like) {
  return compile_krylov(m, a, p, b_like, krylov_options<real_t<typename Like::value_type>>{});
}
// Without a preconditioner.
template <class A, class Like, class R, class = std::enable_if_t<detail::is_krylov_operator<A>>>
auto compile_krylov(krylov_method m, const A& a, const Like& b_like, const krylov_options<R>& opt) {
  detail::check_krylov_like<Like>();
  using solver = detail::krylov_solver_for<Like>;
  return solver(krylov::entry_for<detail::krylov_space_for<Like>>(m), a, static_cast<const A*>(nullptr), b_like, opt);
}
template <class A, class Like, class = std::enable_if_t<detail::is_krylov_operator<A> && !detail::is_krylov_operator<Like>>>
auto compile_krylov(krylov_method m, const A& a, const Like& b_like) {
  return compile_krylov(m, a, b_like, krylov_options<real_t<typename Like::value_type>>{});
}

} // namespace kronex
