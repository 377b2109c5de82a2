#pragma once
// Transposes of small square blocks in registers, for the last mode's gathers and scatters
// (tiles.hpp): a W x W block of 4-, 8- or 16-byte values (W = 8, 4 or 2) is W loads of 32
// bytes, log2(W) rounds of two-vector shuffles and W stores, instead of W * W scalar moves.
// Values move as unsigned integers (a 16-byte value as two): their bits are copied, never
// interpreted. 32-byte vectors are native to the AVX2 and AVX-512 clones alike.
#include <cstddef>
#include <cstdint>
#include <utility>

namespace kronex::detail {

// Values move as lanes of U: one lane per value of 4 or 8 bytes, two per 16-byte value.
template <std::size_t Bytes>
struct transpose_lane {};
template <>
struct transpose_lane<4> {
  using type = std::uint32_t;
};
template <>
struct transpose_lane<8> {
  using type = std::uint64_t;
};
template <>
struct transpose_lane<16> {
  using type = std::uint64_t;
};

// Whether values of T move through block transposes.
template <class T>
inline constexpr bool has_block_transpose = sizeof(T) == 4 || sizeof(T) == 8 || sizeof(T) == 16;

template <class T>
struct block_transpose {
  using U = typename transpose_lane<sizeof(T)>::type;
  static constexpr std::size_t W = 32 / sizeof(T);        // values per vector: the block is W x W
  static constexpr std::size_t lanes = 32 / sizeof(U);    // lanes per vector
  static constexpr std::size_t per_value = sizeof(T) / sizeof(U);
  typedef U vec __attribute__((vector_size(32)));
  // The same vector at any address of a T, read and written as any type: a plain 32-byte move.
  // (memcpy into a vec array went through the stack in 16-byte halves, and each 32-byte reload
  // then waited for both: a block transpose cost 3 cycles per value instead of 0.6.)
  typedef U unaligned_vec __attribute__((vector_size(32), aligned(alignof(T)), may_alias));

  // Round b (a power of two below W) swaps the off-diagonal b x b blocks of every 2b x 2b block:
  // rows (a, c) = (i, i + b), i & b == 0, become, in lanes (d = b * per_value lanes)
  //   a'[j] = j & d ? c[j - d] : a[j],   c'[j] = j & d ? c[j] : a[j + d].
  // After the rounds b = W/2, ..., 1, row i holds column i. (Shuffle indices address a's lanes
  // as 0..lanes-1 and c's as lanes..2 lanes-1; vectors pass by reference so no version's ABI
  // changes.) Clang has only __builtin_shufflevector (constant indices); GCC's own
  // __builtin_shuffle takes a mask vector, which it folds to a constant. nvcc's front end mangles
  // a pack expanded inside __builtin_shufflevector, so GCC and nvcc take the mask.
  template <std::size_t b, std::size_t... J>
  static inline __attribute__((always_inline)) void swap_blocks(vec& a, vec& c, std::index_sequence<J...>) {
    constexpr std::size_t d = b * per_value;
#if defined(__clang__)
    const vec low = __builtin_shufflevector(a, c, ((J & d) ? lanes + J - d : J)...);
    c = __builtin_shufflevector(a, c, ((J & d) ? lanes + J : J + d)...);
#else
    vec low_mask = {}, high_mask = {};
    for (std::size_t j = 0; j < lanes; ++j) {
      low_mask[j] = U((j & d) ? lanes + j - d : j);
      high_mask[j] = U((j & d) ? lanes + j : j + d);
    }
    const vec low = __builtin_shuffle(a, c, low_mask);
    c = __builtin_shuffle(a, c, high_mask);
#endif
    a = low;
  }
  template <std::size_t b>
  static inline __attribute__((always_inline)) void round(vec* r) {
    for (std::size_t i = 0; i < W; ++i)
      if (!(i & b)) swap_blocks<b>(r[i], r[i + b], std::make_index_sequence<lanes>{});
  }

  // out[k * out_stride + c] = in[c * in_stride + k] for c, k < W (strides in values of T).
  static inline __attribute__((always_inline)) void run(const T* in, std::size_t in_stride, T* out,
                                                         std::size_t out_stride) {
    vec r[W];
    for (std::size_t c = 0; c < W; ++c) r[c] = *reinterpret_cast<const unaligned_vec*>(in + c * in_stride);
    if constexpr (W >= 8) round<4>(r);
    if constexpr (W >= 4) round<2>(r);
    round<1>(r);
    for (std::size_t k = 0; k < W; ++k) *reinterpret_cast<unaligned_vec*>(out + k * out_stride) = r[k];
  }

  // out[k * out_stride + c] = rows[c][at + k] for c, k < W: the rows anywhere.
  static inline __attribute__((always_inline)) void run_rows(const T* const* rows, std::size_t at, T* out,
                                                              std::size_t out_stride) {
    vec r[W];
    for (std::size_t c = 0; c < W; ++c) r[c] = *reinterpret_cast<const unaligned_vec*>(rows[c] + at);
    if constexpr (W >= 8) round<4>(r);
    if constexpr (W >= 4) round<2>(r);
    round<1>(r);
    for (std::size_t k = 0; k < W; ++k) *reinterpret_cast<unaligned_vec*>(out + k * out_stride) = r[k];
  }
};

} // namespace kronex::detail
