#pragma once
// Dense applies as BLAS GEMMs. On a C-order tensor seen as (L, n, R), y = op(A) x along the mode
// is, for each of the L blocks X_l (n x R, row-major, i.e. R x n column-major with ld R),
//   Y_l^T = X_l^T op(A)^T                      one GEMM per block (one in all when L = 1),
// and for the last mode (R = 1) the whole tensor is one block of lines:
//   Y^T = op(A) X^T   (X^T: n x L column-major)  one GEMM in all.
// The plan keeps A row-major, i.e. M = A^T column-major, and reaches op(A) or op(A)^T through
// the BLAS's transpose flags; the one product no flag gives, conj(M) (C on the last mode, R on
// the others), is served by keeping conj(A) instead.
//
// A GEMM may not write what it reads, so in place (src == dst: every step of a plan after the
// first) each block is done in chunks of lines (columns of R, or lines of the last mode) into a
// buffer that is then copied back; out of place the GEMMs write the tensor directly.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

#include "../../core/op.hpp"
#include "../../core/value_traits.hpp"
#include "../../factors/factor_view.hpp"
#include "../../lapack/blas.hpp"

namespace kronex::detail {

// Whether a mode of n entries and R lines after it fits BLAS's int sizes (R is a leading dimension).
inline bool gemm_sizes_fit(std::size_t n, std::size_t R) {
  return R <= std::size_t(INT_MAX) && n <= std::size_t(INT_MAX);
}

// The plan's rule: a dense factor runs as GEMMs when n >= gemm_min, at least a third of its
// entries are nonzero (a row program skips zeros; a GEMM runs about three times its rate), and
// each GEMM has at least gemm_min rows (a middle mode, 1 < L, needs R >= gemm_min: L GEMMs of
// R rows each); otherwise, and for banded factors, the row program runs. Measured with OpenBLAS,
// GEMMs are as fast as the row program at n = 4 or R = 4 and faster above, for all four types.
// R and n must fit BLAS's int (R is a leading dimension).
inline constexpr std::size_t gemm_min = 4;

inline bool use_gemm(bool dense, std::size_t nnz, std::size_t L, std::size_t n, std::size_t R) {
  const bool enough_rows = R == 1 || L == 1 || R >= gemm_min;
  return dense && n >= gemm_min && 3 * nnz >= n * n && enough_rows && L >= 1 && R >= 1 && gemm_sizes_fit(n, R);
}

// Lines per in-place chunk: a chunk (lines x n values) of about 256 KB, so it stays in L2 between
// the GEMM and the copy back, but at least 32 lines so each GEMM stays efficient.
template <class T>
std::size_t gemm_chunk(std::size_t n) {
  return std::max<std::size_t>(32, (std::size_t(256) << 10) / (n * sizeof(T)));
}

// Buffer values an in-place apply on the view (L, n, R) needs.
template <class T>
std::size_t gemm_buffer_values(std::size_t L, std::size_t n, std::size_t R) {
  return std::min(gemm_chunk<T>(n), R == 1 ? L : R) * n;
}

// A dense factor's n x n entries for GEMMs, row-major, conjugated or not. The same matrix serves
// every op that wants it (with another flag), so plans may share it.
template <class T>
struct gemm_matrix {
  std::size_t n = 0;
  std::vector<T> a;
  bool conjugated = false;
};

// What a GEMM needs for op o: the flag applied to M = A^T (column-major view of A row-major), and
// whether M must be conj(A)^T instead. Last mode: the product is op(A) X^T, so op(A) is wanted;
// otherwise X^T op(A)^T, so op(A)^T.
inline std::pair<char, bool> gemm_flag(op o, bool last_mode) {
  const bool t = is_transposed(o) != last_mode;  // the wanted matrix is M^T (not M), up to conj
  if (!is_conjugated(o)) return {t ? 'T' : 'N', false};
  // Conjugated: (M^T)-conj is M^H, flag 'C'; plain conj(M) has no flag, so conj(A) is kept.
  return t ? std::pair{'C', false} : std::pair{'N', true};
}

template <class T>
gemm_matrix<T> make_gemm_matrix(const factor_view<T>& f, bool conjugated) {
  gemm_matrix<T> g;
  g.n = f.n;
  g.conjugated = conjugated;
  g.a.resize(f.n * f.n);
  for (std::size_t i = 0; i < f.n; ++i)
    for (std::size_t j = 0; j < f.n; ++j) g.a[i * f.n + j] = g.conjugated ? conj_if_complex(f(i, j)) : f(i, j);
  return g;
}

// dst = op(A) src along the mode of the view (L, n, R), g and trans as gemm_flag gives them for
// op; src may equal dst (then `buffer`, of gemm_buffer_values values, is used).
template <class T>
void run_gemm_apply(const gemm_matrix<T>& g, char trans, std::size_t L, std::size_t n, std::size_t R, const T* src,
                    T* dst, T* buffer) {
  using lapack::int_t;
  const int_t in = int_t(n);
  const bool in_place = src == dst;
  // Out of place the chunks only keep each GEMM's sizes within int.
  const std::size_t chunk = in_place ? gemm_chunk<T>(n) : std::size_t(INT_MAX);
  if (R == 1) {
    for (std::size_t l0 = 0; l0 < L; l0 += chunk) {
      const std::size_t c = std::min(chunk, L - l0);
      T* out = in_place ? buffer : dst + l0 * n;
      lapack::gemm(trans, 'N', in, int_t(c), in, T(1), g.a.data(), in, src + l0 * n, in, T(0), out, in);
      if (in_place) std::memcpy(dst + l0 * n, buffer, c * n * sizeof(T));
    }
    return;
  }
  const int_t ir = int_t(R);
  for (std::size_t l = 0; l < L; ++l) {
    const T* x = src + l * n * R;
    T* y = dst + l * n * R;
    for (std::size_t r0 = 0; r0 < R; r0 += chunk) {
      const std::size_t c = std::min(chunk, R - r0);
      if (!in_place) {
        lapack::gemm('N', trans, int_t(c), in, in, T(1), x + r0, ir, g.a.data(), in, T(0), y + r0, ir);
        continue;
      }
      // The chunk's result is c x n column-major: row i of the block, columns [r0, r0 + c).
      lapack::gemm('N', trans, int_t(c), in, in, T(1), x + r0, ir, g.a.data(), in, T(0), buffer, int_t(c));
      for (std::size_t i = 0; i < n; ++i) std::memcpy(y + i * R + r0, buffer + i * c, c * sizeof(T));
    }
  }
}

} // namespace kronex::detail
