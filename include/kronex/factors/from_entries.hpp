#pragma once
// kronex::factor_from_entries(n, entries): an n x n factor from a list of (row, col, value)
// entries (0-based), in the storage their nonzero pattern needs. This is how code that reads
// matrices from files or other libraries (the kronex DSL's Matrix Market reader among them) gets
// the most compact storage, without choosing it itself:
//
//   1. diagonal_factor<T> when every nonzero entry is on the diagonal (a zero matrix included);
//   2. else the narrowest band holding every nonzero entry: clamped (kl = max(i - j),
//      ku = max(j - i)), or periodic (the band wraps around the corners) when its kl + ku is
//      strictly smaller and kl + ku < n; among periodic bands, the smallest kl + ku, then the
//      smallest max(kl, ku);
//   3. banded<T>(n, kl, ku, bc) over that band when kl + ku + 1 <= n / 2 (integer division);
//   4. else dense xt::xtensor<T, 2>.
//
// Entries at the same position are summed (as scipy.sparse does), and positions whose sum is
// zero are dropped before the pattern is taken: an explicit zero never widens the band. Indices
// outside the matrix, and n = 0, throw invalid_factor naming the entry.
//
// Two steps when the caller wants to look before it allocates (e.g. to refuse a factor that
// would need too much memory): choose_storage(n, entries), then factor_from_entries(storage,
// entries).
#include <algorithm>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

#include <xtensor/xtensor.hpp>

#include "../core/error.hpp"
#include "any_factor.hpp"
#include "banded.hpp"
#include "boundary.hpp"
#include "diagonal.hpp"
#include "factor_view.hpp"

namespace kronex {

template <class T>
struct entry {
  std::size_t row = 0, col = 0;  // 0-based
  T value{};
};

// The band [-kl, ku] around the diagonal, wrapped around the corners when periodic.
struct band_shape {
  std::size_t kl = 0, ku = 0;
  boundary bc = boundary::clamped;
};

// What factor_from_entries builds: kind is diagonal, banded or dense; band is the narrowest band
// holding the entries (kl = ku = 0 for a diagonal; for a dense factor, the band that was too wide).
struct factor_storage {
  factor_kind kind = factor_kind::diagonal;
  std::size_t n = 0;
  band_shape band;

  // Values the factor holds: n, n * (kl + ku + 1) or n * n, saturating at SIZE_MAX.
  std::size_t stored_values() const noexcept {
    const std::size_t per_row = kind == factor_kind::diagonal ? 1
                              : kind == factor_kind::banded   ? band.kl + band.ku + 1
                                                              : n;
    if (per_row != 0 && n > std::numeric_limits<std::size_t>::max() / per_row) return std::numeric_limits<std::size_t>::max();
    return n * per_row;
  }
};

// The entries sorted by (row, col), one per position (duplicates summed), zeros dropped: the
// entries that factor_from_entries stores.
template <class T>
std::vector<entry<T>> canonical_entries(std::vector<entry<T>> e) {
  // Stable: duplicates are summed in the order given, so the result does not depend on the sort.
  std::stable_sort(e.begin(), e.end(), [](const entry<T>& a, const entry<T>& b) {
    return a.row != b.row ? a.row < b.row : a.col < b.col;
  });
  std::size_t out = 0;
  for (std::size_t k = 0; k < e.size();) {
    entry<T> sum = e[k];
    for (++k; k < e.size() && e[k].row == sum.row && e[k].col == sum.col; ++k) sum.value += e[k].value;
    if (sum.value != T(0)) e[out++] = sum;
  }
  e.resize(out);
  return e;
}

namespace detail {

template <class T>
void check_entries(std::size_t n, const std::vector<entry<T>>& entries, const char* who) {
  if (n == 0) throw invalid_factor(message("kronex::", who, ": n must be at least 1"));
  for (std::size_t k = 0; k < entries.size(); ++k) {
    const entry<T>& e = entries[k];
    if (e.row >= n || e.col >= n) {
      throw invalid_factor(message("kronex::", who, ": entry ", k, " (row ", e.row, ", column ", e.col,
                                   ") is outside the ", n, " x ", n, " matrix (indices are 0-based)"));
    }
  }
}

// The storage rule (see the top of this file) on canonical entries of an n x n matrix.
template <class T>
factor_storage choose_storage(std::size_t n, const std::vector<entry<T>>& entries) {
  band_shape clamped;
  // Offsets j - i modulo n of the off-diagonal entries: a periodic band [-kl, ku] holds residue
  // r when r <= ku (upper diagonals) or r >= n - kl (lower diagonals wrapped around).
  std::vector<std::size_t> residues;
  for (const entry<T>& e : entries) {
    if (e.row > e.col) clamped.kl = std::max(clamped.kl, e.row - e.col);
    if (e.col > e.row) clamped.ku = std::max(clamped.ku, e.col - e.row);
    if (e.row != e.col) residues.push_back((e.col + n - e.row) % n);
  }
  std::sort(residues.begin(), residues.end());
  residues.erase(std::unique(residues.begin(), residues.end()), residues.end());

  // The sorted residues split in two: those up to residues[k-1] go to the upper band, the rest to
  // the lower one. Try every split; the smallest kl+ku wins, then the smaller max(kl, ku).
  band_shape periodic{0, 0, boundary::periodic};
  bool found = false;
  for (std::size_t k = 0; k <= residues.size(); ++k) {
    const std::size_t ku = k == 0 ? 0 : residues[k - 1];
    const std::size_t kl = k == residues.size() ? 0 : n - residues[k];
    const bool better = !found || kl + ku < periodic.kl + periodic.ku ||
                        (kl + ku == periodic.kl + periodic.ku && std::max(kl, ku) < std::max(periodic.kl, periodic.ku));
    if (better) { periodic.kl = kl; periodic.ku = ku; found = true; }
  }
  // pw < n holds by construction (ku = largest residue, kl = 0 is a candidate), and banded<T>
  // requires it: checked anyway so that the rule reads as documented.
  const std::size_t pw = periodic.kl + periodic.ku;
  factor_storage s;
  s.n = n;
  s.band = pw < clamped.kl + clamped.ku && pw < n ? periodic : clamped;
  const std::size_t width = s.band.kl + s.band.ku + 1;
  s.kind = width == 1 ? factor_kind::diagonal : width <= n / 2 ? factor_kind::banded : factor_kind::dense;
  return s;
}

} // namespace detail

// The storage factor_from_entries(n, entries) builds, without building it.
template <class T>
factor_storage choose_storage(std::size_t n, const std::vector<entry<T>>& entries) {
  detail::check_entries(n, entries, "choose_storage");
  return detail::choose_storage(n, canonical_entries(entries));
}

namespace detail {

template <class T>
any_factor<T> build_factor(const factor_storage& s, const std::vector<entry<T>>& canonical) {
  const std::size_t n = s.n;
  switch (s.kind) {
    case factor_kind::diagonal: {
      std::vector<T> d(n, T(0));
      for (const entry<T>& x : canonical) {
        if (x.row != x.col) {
          throw invalid_factor(message("kronex::factor_from_entries: entry (", x.row, ", ", x.col,
                                       ") is off the diagonal, and the storage is diagonal"));
        }
        d[x.row] = x.value;
      }
      return diagonal_factor<T>(std::move(d));
    }
    case factor_kind::banded: {
      banded<T> a(n, s.band.kl, s.band.ku, s.band.bc);
      for (const entry<T>& x : canonical) a(x.row, x.col) = x.value;  // outside the band: invalid_factor
      return a;
    }
    case factor_kind::dense: {
      xt::xtensor<T, 2> a = xt::zeros<T>({n, n});
      for (const entry<T>& x : canonical) a(x.row, x.col) = x.value;
      return a;
    }
    case factor_kind::identity:
    case factor_kind::function: break;
  }
  throw invalid_factor(message("kronex::factor_from_entries: a factor from entries is diagonal, banded or dense, not ",
                               to_string(s.kind)));
}

} // namespace detail

// The factor in a given storage (normally from choose_storage on the same entries). Throws
// invalid_factor if the storage is not diagonal, banded or dense, or an entry (after summing) lies
// outside it.
template <class T>
any_factor<T> factor_from_entries(const factor_storage& s, const std::vector<entry<T>>& entries) {
  detail::check_entries(s.n, entries, "factor_from_entries");
  return detail::build_factor(s, canonical_entries(entries));
}

// The factor in the storage that choose_storage picks (the rule at the top of this file).
template <class T>
any_factor<T> factor_from_entries(std::size_t n, const std::vector<entry<T>>& entries) {
  detail::check_entries(n, entries, "factor_from_entries");
  const std::vector<entry<T>> canonical = canonical_entries(entries);
  return detail::build_factor(detail::choose_storage(n, canonical), canonical);
}

} // namespace kronex
