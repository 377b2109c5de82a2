#pragma once
// sparse_source: an assembled N x N sparse matrix from Python (a SciPy sparse matrix, in CSR)
// acting on tensors of a given shape, as kronex::sparse_operator<T> does in C++: a leaf of
// operator expressions (applied, never solved: a csr_spmv step) and an operator or
// preconditioner of Krylov solves. Like a factor_source it is kept as Python handed it (values
// in complex128, exactly) and built as sparse_operator<T> on first use in each value type T, its
// values rounded through its own type first.
#include <complex>
#include <cstddef>
#include <memory>
#include <vector>

#include <kronex/core/shape.hpp>
#include <kronex/operators/sparse_operator.hpp>
#include <kronex/plan/operator_tree.hpp>

#include "factor_source.hpp"
#include "value_type_cache.hpp"

namespace kronex::python {

struct csr_arrays {
  std::vector<std::size_t> row_ptr, col_idx;
  std::vector<value> values;
};

class sparse_source {
public:
  // Checks the arrays now (kronex::sparse_operator's checks: invalid_operator or
  // dimension_mismatch naming the problem).
  sparse_source(shape_t shape, csr_arrays csr, dtype t);

  dtype type() const noexcept { return m_type; }
  const shape_t& shape() const noexcept { return m_shape; }
  std::size_t nnz() const noexcept { return m_csr.values.size(); }

  // Its action in value type T (what operator_tree's flat leaves and the Krylov solvers call).
  template <class T>
  std::shared_ptr<const flat_action<T>> action() const {
    return m_built.get<T>([&] {
      return dsl::with_dtype(m_type, [&](auto zero) {
        using U = decltype(zero);
        std::vector<T> values;
        values.reserve(m_csr.values.size());
        for (const value& v : m_csr.values) values.push_back(detail::convert_value<T>(detail::convert_value<U>(v)));
        return sparse_operator<T>(m_shape, m_csr.row_ptr, m_csr.col_idx, std::move(values)).action();
      });
    });
  }

private:
  shape_t m_shape;
  csr_arrays m_csr;
  dtype m_type;
  template <class T>
  using action_ptr = std::shared_ptr<const flat_action<T>>;
  per_value_type<action_ptr> m_built;
};

} // namespace kronex::python
