#pragma once
// One mode's GEMM as BLAS calls that each stay within what one call takes: cuBLAS takes int
// sizes, leading dimensions and batch counts (its strides are 64-bit), so a tensor of more than
// 2^31 lines, slabs or values after the mode needs several calls. The plan phase decides the
// calls (split_gemm, printed as "gemm x<calls>"); the run phase issues exactly those (run_gemm).
// With the tensor viewed as (L, n, R) in C order and M the dense n x n matrix, column-major:
//   last     (R = 1)   Y (n x L) = M X: the L lines go in calls of at most `limit` lines;
//   first    (L = 1)   Y^c (R x n) = X^c M^T: one call;
//   batched            the same for each of the L slabs of n*R values: one strided-batched call
//                      per at most `limit` slabs;
//   packed   (R > limit, first or batched) one call's leading dimension would be R: each call
//                      copies a block of n x c values (c <= limit columns of R, one slab) into
//                      contiguous scratch, multiplies it there, and copies the product back.
// n itself must be within the limit (the check phase refuses it otherwise).
#include <algorithm>
#include <cstddef>

#include "../../plan/step.hpp"
#include "runtime.hpp"

namespace kronex::detail {

// A packed call's block holds at most this many values (n x c), so its scratch stays small
// (2^27 values: 1 GiB in double).
constexpr std::size_t packed_block_values = std::size_t(1) << 27;

inline std::size_t ceil_div(std::size_t a, std::size_t b) { return a / b + (a % b != 0); }

// Plan phase: sets st.calls, st.per_call and st.packed for calls of at most `limit` in every
// BLAS size argument. The step's view is (L, n, R).
inline void split_gemm(gemm_step& st, std::size_t limit) {
  const std::size_t L = st.view[0], n = st.view[1], R = st.view[2];
  st.packed = st.how != gemm_step::layout::last && R > limit;
  if (st.packed) {
    st.per_call = std::max<std::size_t>(1, std::min(limit, packed_block_values / std::max<std::size_t>(n, 1)));
    st.calls = L * ceil_div(R, st.per_call);
  } else {
    st.per_call = std::max<std::size_t>(1, std::min(L, limit));  // lines (last) or slabs
    st.calls = ceil_div(L, st.per_call);
  }
}

// The scratch a packed step needs: its block and the block's product.
inline std::size_t gemm_scratch_values(const gemm_step& st) { return st.packed ? 2 * st.view[1] * st.per_call : 0; }

// Run phase: dst = M applied along the step's mode to src (dst != src), in st.calls BLAS calls.
// `scratch` holds gemm_scratch_values(st) values (packed steps only).
template <class T>
void run_gemm(device::context& ctx, const gemm_step& st, const T* M, const T* src, T* dst, T* scratch) {
  using blas = device::blas<T>;
  const std::size_t L = st.view[0], n = st.view[1], R = st.view[2], c = st.per_call;
  const long ln = long(n);
  if (st.packed) {
    T* block = scratch;
    T* product = scratch + n * c;
    device::device_box pack, unpack;
    pack.rank = unpack.rank = 3;
    const std::size_t whole[3] = {L, n, R};
    for (std::size_t l = 0; l < L; ++l) {
      for (std::size_t r0 = 0; r0 < R; r0 += c) {
        const std::size_t cols = std::min(c, R - r0);
        const std::size_t offset[3] = {l, 0, r0}, extent[3] = {1, n, cols};
        for (int k = 0; k < 3; ++k) {
          pack.part_offset[k] = unpack.part_offset[k] = offset[k];
          pack.part_extent[k] = unpack.part_extent[k] = extent[k];
          pack.from_offset[k] = unpack.to_offset[k] = 0;
          pack.from_extent[k] = unpack.to_extent[k] = whole[k];
          pack.to_offset[k] = unpack.from_offset[k] = offset[k];
          pack.to_extent[k] = unpack.from_extent[k] = extent[k];
        }
        device::copy_box(ctx, pack, src, block);
        blas::gemm(ctx, 'N', 'T', long(cols), ln, ln, block, long(cols), M, ln, product, long(cols));
        device::copy_box(ctx, unpack, product, dst);
      }
    }
    return;
  }
  for (std::size_t first = 0; first < L; first += c) {
    const std::size_t count = std::min(c, L - first);
    switch (st.how) {
      case gemm_step::layout::last: {  // lines contiguous: Y^c (n x count) = M (n x n) * X^c (n x count)
        const std::size_t at = first * n;
        blas::gemm(ctx, 'N', 'N', ln, long(count), ln, M, ln, src + at, ln, dst + at, ln);
        break;
      }
      case gemm_step::layout::first:  // L = 1: Y^c (R x n) = X^c (R x n) * M^T
      case gemm_step::layout::batched: {  // the same for each slab of n*R values
        const std::size_t at = first * n * R;
        if (count == 1)
          blas::gemm(ctx, 'N', 'T', long(R), ln, ln, src + at, long(R), M, ln, dst + at, long(R));
        else
          blas::gemm_strided_batched(ctx, 'N', 'T', long(R), ln, ln, src + at, long(R), (long long)(n * R), M, ln, 0,
                                     dst + at, long(R), (long long)(n * R), long(count));
        break;
      }
    }
  }
}

} // namespace kronex::detail
