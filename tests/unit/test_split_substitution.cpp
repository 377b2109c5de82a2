// A substitution along a split axis run where its rows lie (backends/mpi/split_substitution.hpp),
// without MPI: every rank's share built for 2 to 4 ranks (blocks as distributed_tensor cuts
// them, uneven where they must be), then run in the program's order of segments in one process,
// each rank's rows in a block of their own, a transfer's rows taken from the sender's block right
// after its segment `from` and handed over at the receiving segment. The blocks put together
// must hold the whole program's result bit for bit: clamped bands with and without pivoting, N
// and T, and periodic bands small enough not to be folded; a folded periodic band must be
// refused. Catches a segment given to the wrong rank, a transfer that misses a row its segment
// reads or carries it from the wrong segment (a value too old or too new), strip rows mixed up,
// an own row not gathered or not put back, and runs relabelled wrongly.
#define BOOST_TEST_MODULE test_split_substitution
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <optional>
#include <vector>

#include <kronex/backends/host/lu_factors.hpp>
#include <kronex/backends/host/row_kernels.hpp>
#include <kronex/backends/host/row_program.hpp>
#include <kronex/backends/mpi/block_layout.hpp>
#include <kronex/backends/mpi/split_substitution.hpp>
#include <kronex/kronex.hpp>

#include "kronex_test_support.hpp"

namespace {

using kronex::boundary;
using kronex::op;
using kronex::detail::index_t;

struct band {
  std::size_t n, kl, ku;
  boundary bc;
  bool pivot;
};

// Runs the shares of `ranks` ranks in order and returns the rows put together (n rows of
// `width` values), or nothing where the substitution was refused.
template <class T>
std::optional<std::vector<T>> run_split(const kronex::detail::row_program<T>& p, const std::vector<T>& rows,
                                        std::size_t width, std::size_t ranks) {
  constexpr std::size_t V = kronex::detail::strip_width<T>;
  std::vector<std::size_t> offsets{0};
  for (std::size_t q = 0; q < ranks; ++q) offsets.push_back(kronex::detail::block_range(p.n, ranks, q).end);
  std::vector<kronex::detail::split_substitution<T>> share;
  for (std::size_t q = 0; q < ranks; ++q) {
    auto s = kronex::detail::make_split_substitution(p, offsets, q);
    if (!s) return std::nullopt;
    share.push_back(std::move(*s));
  }
  std::vector<std::vector<T>> block(ranks);
  for (std::size_t q = 0; q < ranks; ++q)
    block[q].assign(rows.begin() + offsets[q] * width, rows.begin() + offsets[q + 1] * width);
  const auto& transfers = share[0].transfers;
  std::map<std::size_t, std::vector<T>> mailbox;  // transfer -> its rows, as sent
  const auto send_after = [&](long segment) {
    for (std::size_t t = 0; t < transfers.size(); ++t) {
      if (transfers[t].from != segment) continue;
      const std::size_t q = transfers[t].sender;
      std::vector<T>& box = mailbox[t];
      for (index_t g : transfers[t].rows) {
        BOOST_REQUIRE(share[0].owner(g) == q);
        box.insert(box.end(), block[q].begin() + (g - offsets[q]) * width, block[q].begin() + (g - offsets[q] + 1) * width);
      }
    }
  };
  kronex::detail::prefetch_stream none;
  send_after(-1);
  for (std::size_t j = 0; j < share[0].segments.size(); ++j) {
    const std::size_t q = share[0].segments[j].owner;
    const auto& s = share[q];
    const auto part = std::find_if(s.parts.begin(), s.parts.end(), [&](const auto& pt) { return pt.segment == j; });
    BOOST_REQUIRE(part != s.parts.end());
    std::vector<T> strip(part->strip_rows * width);
    for (std::size_t t = 0; t < transfers.size(); ++t)
      if (transfers[t].to == j) {
        BOOST_REQUIRE(mailbox.count(t));
        std::copy(mailbox[t].begin(), mailbox[t].end(), strip.begin() + transfers[t].at * width);
      }
    T* const own = block[q].data();
    for (const auto& run : part->runs) {
      if (!run.on_strip) {
        kronex::detail::run_solve_rows(run.program, 0, run.program.ops.size(), own, width / V, width, none);
        continue;
      }
      for (std::size_t i = 0; i < run.own_rows.size(); ++i)
        std::copy_n(own + (run.own_rows[i] - offsets[q]) * width, width, strip.data() + run.strip_rows[i] * width);
      kronex::detail::run_solve_rows(run.program, 0, run.program.ops.size(), strip.data(), width / V, width, none);
      for (std::size_t i = 0; i < run.own_rows.size(); ++i)
        std::copy_n(strip.data() + run.strip_rows[i] * width, width, own + (run.own_rows[i] - offsets[q]) * width);
    }
    send_after(long(j));
  }
  std::vector<T> out;
  for (const auto& b : block) out.insert(out.end(), b.begin(), b.end());
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(split_substitution_computes_the_programs_bits) {
  using T = double;
  constexpr std::size_t width = 2 * kronex::detail::strip_width<T>;
  std::vector<band> bands;
  for (std::size_t n : {12, 30, 64, 100})
    for (auto [kl, ku] : {std::pair<std::size_t, std::size_t>{1, 1}, {3, 3}, {2, 1}, {1, 3}})
      for (bool pivot : {false, true}) {
        bands.push_back({n, kl, ku, boundary::clamped, pivot});
        if (!pivot) bands.push_back({n, kl, ku, boundary::periodic, false});
      }
  std::size_t pipelined = 0, refused_folded = 0;
  for (const band& b : bands) {
    const auto a = kronex_test::random_band_matrix<T>(b.n, b.kl, b.ku, b.bc, b.pivot);
    const auto lu = kronex::detail::factorize(kronex::make_view(kronex_test::to_banded(a, b.kl, b.ku, b.bc)), 0);
    for (op o : {op::none, op::transpose}) {
      const auto p = kronex::detail::solve_program(lu, o);
      std::vector<T> rows(b.n * width);
      for (auto& v : rows) v = kronex_test::random_value<T>();
      std::vector<T> whole = rows;
      kronex::detail::prefetch_stream none;
      kronex::detail::run_solve_rows(p, 0, p.ops.size(), whole.data(), width / kronex::detail::strip_width<T>, width,
                                     none);
      for (std::size_t ranks : {2, 3, 4}) {
        BOOST_TEST_CONTEXT(kronex::to_string(b.bc) << " n=" << b.n << " kl=" << b.kl << " ku=" << b.ku
                                                   << (b.pivot ? " pivoting" : "") << " trans="
                                                   << kronex::trans_letter(o) << " ranks=" << ranks) {
          const auto split = run_split(p, rows, width, ranks);
          const bool folded = !lu.order.empty();
          if (folded) {
            BOOST_TEST(!split.has_value(), "a folded band alternates between the ranks: refused");
            refused_folded += split ? 0 : 1;
            continue;
          }
          // A clamped band without swaps always pipelines: forward over the ranks and back.
          if (b.bc == boundary::clamped && lu.swaps.empty()) BOOST_TEST_REQUIRE(split.has_value());
          if (!split) continue;
          BOOST_TEST(std::memcmp(split->data(), whole.data(), whole.size() * sizeof(T)) == 0,
                     "the bits differ; relative difference " << kronex_test::rel_error(*split, whole));
          ++pipelined;
        }
      }
    }
  }
  BOOST_TEST(pipelined > 100);
  BOOST_TEST(refused_folded > 0);
}
