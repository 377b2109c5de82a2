#pragma once
// matrix_free<T>(shape, f): an operator known only by a function of the application,
// f(const T* x, T* y) computing y = A x on C-order buffers of product(shape) values (x and y
// never overlap when kronex calls it). Use it as the operator or the preconditioner of a Krylov
// solve (docs/krylov.md); apply(x) calls it once. A Krylov solver keeps a copy of f: what f
// refers to must outlive the solver.
#include <functional>
#include <memory>
#include <utility>

#include "flat_operator.hpp"

namespace kronex {

template <class T>
class matrix_free : public detail::flat_operator<matrix_free<T>, T> {
public:
  using function_type = std::function<void(const T* x, T* y)>;

  matrix_free(shape_t shape, function_type f)
      : detail::flat_operator<matrix_free<T>, T>(std::move(shape), "matrix_free"), m_f(std::move(f)) {
    if (!m_f) throw invalid_operator("kronex::matrix_free: the function is empty");
  }

  // y = A x on raw C-order buffers of size() values.
  void run(const T* x, T* y) const { m_f(x, y); }

  // What the operator runs as a leaf of an expression: its action only (no transpose: an
  // expression needing one is refused when compiled).
  std::shared_ptr<const flat_action<T>> action() const {
    auto a = std::make_shared<flat_action<T>>();
    a->name = "matrix_free" + detail::format_shape(this->shape());
    a->method = "matrix_free";
    a->shape = this->shape();
    a->apply = m_f;
    a->bytes = 2.0 * double(this->size()) * double(sizeof(T));
    return a;
  }

private:
  function_type m_f;
};

} // namespace kronex
