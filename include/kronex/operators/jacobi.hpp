#pragma once
// kronex::jacobi(A): the Jacobi preconditioner of an assembled operator, P = diag(A)^-1, as a
// diagonal sparse_operator<T> on A's shape (so it is the preconditioner of a Krylov solve like
// any operator; docs/krylov.md). Diagonal entries that a row lists several times are summed, as
// A's products sum them. Throws invalid_operator, naming the row, when a diagonal entry is zero
// (or missing) or not finite: the preconditioner would be undefined there.
#include <cmath>
#include <cstddef>
#include <vector>

#include "../core/error.hpp"
#include "../core/value_traits.hpp"
#include "sparse_operator.hpp"

namespace kronex {

template <class T>
sparse_operator<T> jacobi(const sparse_operator<T>& a) {
  const std::size_t n = a.size();
  const auto& rp = a.row_ptr();
  const auto& ci = a.col_idx();
  const auto& v = a.values();
  std::vector<std::size_t> row_ptr(n + 1), col_idx(n);
  std::vector<T> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    T d{};
    for (std::size_t k = rp[i]; k < rp[i + 1]; ++k)
      if (ci[k] == i) d += v[k];
    if (d == T(0) || !std::isfinite(std::abs(d)))
      throw invalid_operator(detail::message("kronex::jacobi: the diagonal entry of row ", i,
                                             d == T(0) ? " is zero (or missing)" : " is not finite",
                                             ": the Jacobi preconditioner diag(A)^-1 is undefined"));
    row_ptr[i + 1] = i + 1;
    col_idx[i] = i;
    values[i] = T(1) / d;
  }
  return sparse_operator<T>(a.shape(), std::move(row_ptr), std::move(col_idx), std::move(values));
}

} // namespace kronex
