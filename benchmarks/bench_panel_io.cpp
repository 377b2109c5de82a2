// A distributed phase's reads and writes on one rank, without MPI: one host plan step run from a
// plain array or from a tensor in pieces (gathered_tensor: the peers' blocks a phase after an
// exchange reads), into a plain array or into cells (scattered_output: the own part of x and the
// block the peers copy from, where the phase before the return writes). The pieces and cells are
// laid out as on 2 ranks of grid (2,1,1), (1,2,1) and (1,1,2), whose phase 1 this is; each
// array is a separate allocation of its own. Cases run alternately, one solve each per round, so
// a noisy machine slows them alike. Double, one thread, degree-3 clamped B-spline mass
// matrices; median over the rounds after a warm-up, GDOF/s, GB/s (one pass: 16 B per unknown)
// and the ratio to that pass's floor at the triad bandwidth measured in this run.
// Exits 1 where the result from pieces into cells differs from the plain arrays' in any bit.
//   build/release/benchmarks/bench_panel_io [n ...]   (default 128 192)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <kronex/kronex.hpp>
#include <kronex/backends/host/host_plan.hpp>
#include <kronex/backends/host/scattered_output.hpp>

#include <kronex_bench/membw.hpp>
#include <kronex_bench/timing.hpp>

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

namespace {

using kronex::detail::gathered_tensor;
using kronex::detail::host_plan;
using kronex::detail::scattered_output;
using strides_t = std::vector<std::size_t>;

// Phase 1 of a 2-rank grid split along `axis`, on rank 0: the local tensor (the phase's view),
// the plan's operator, and where the pieces lie.
struct phase_case {
  std::string name;
  kronex::shape_t shape;       // the phase's local tensor
  std::size_t cut_axis;        // the axis its input pieces and output cells are cut on, at half
  strides_t block_strides;     // of the phase before's block (rank 0's and rank 1's), and of x
  strides_t buffer_strides;    // of the part rank 0 keeps for rank 1 to copy
};

void run_case(const phase_case& c, const kronex::banded<double>& M, double bandwidth, int rounds) {
  const std::size_t n = M.size(), h = n / 2;
  kronex::compile_options substitution;
  substitution.solves = kronex::solve_method::substitution;
  substitution.threads = 1;
  // (2,1,1) solves mode 0 of (n, n/2, n); the others modes 1 and 2 of (n/2, n, n), fused.
  kronex::operator_desc<double> d =
      c.cut_axis == 0 ? kronex::kron(M, kronex::identity(h), kronex::identity(n)).inverse().template describe<double>()
                      : kronex::kron(kronex::identity(h), M, M).inverse().template describe<double>();
  d.options = substitution;
  host_plan<double> plan(d, c.shape);
  plan.reserve_scattered_output();

  const std::size_t size = h * n * n;
  std::vector<double> b(size), x(size), own(size), kept(size), block0(size), block1(size);
  std::mt19937_64 gen(n);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto* v : {&b, &block0, &block1})
    for (auto& e : *v) e = u(gen);

  std::vector<std::vector<std::size_t>> cuts(3, {0});
  cuts[c.cut_axis] = {0, h};
  std::vector<std::size_t> first_cell(3, 0), second_cell(3, 0);
  second_cell[c.cut_axis] = 1;
  gathered_tensor<double> pieces(c.shape, cuts);
  pieces.set_cell(pieces.cell_index(first_cell), block0.data(), c.block_strides, 0);
  pieces.set_cell(pieces.cell_index(second_cell), block1.data(), c.block_strides, 0);
  scattered_output<double> cells(c.shape, cuts);
  cells.set_cell(cells.cell_index(first_cell), own.data(), c.block_strides, 0);
  cells.set_cell(cells.cell_index(second_cell), kept.data(), c.buffer_strides, 0);
  cells.set_home(x.data());

  // The same tensor both ways: b holds the pieces' values in C order.
  read_values(kronex::detail::gathered_source<double>{&pieces, 0}, 0, size, b.data());

  const std::vector<std::pair<const char*, std::function<void()>>> runs{
      {"array -> array", [&] { plan.run(b.data(), x.data()); }},
      {"pieces -> array", [&] { plan.run(pieces, x.data()); }},
      {"array -> cells", [&] { plan.run(b.data(), cells); }},
      {"pieces -> cells", [&] { plan.run(pieces, cells); }},
  };
  std::vector<std::vector<double>> seconds(runs.size());
  for (const auto& r : runs) r.second();  // warm-up: first touch of every array and buffer
  for (int k = 0; k < rounds; ++k)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto t = kronex_bench::sorted_seconds(1, runs[i].second);
      seconds[i].push_back(t[0]);
    }
  // Every way gives the same bits: the last run (pieces -> cells) read back through cells laid
  // out as written, against an array -> array run.
  gathered_tensor<double> written(c.shape, cuts);
  written.set_cell(written.cell_index(first_cell), own.data(), c.block_strides, 0);
  written.set_cell(written.cell_index(second_cell), kept.data(), c.buffer_strides, 0);
  std::vector<double> from_cells(size);
  read_values(kronex::detail::gathered_source<double>{&written, 0}, 0, size, from_cells.data());
  plan.run(b.data(), x.data());
  if (from_cells != x) {
    std::fprintf(stderr, "%s, n = %zu: pieces -> cells differs from array -> array\n", c.name.c_str(), n);
    std::exit(1);
  }

  const double dof = double(size), floor_s = 16.0 * dof / bandwidth;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::sort(seconds[i].begin(), seconds[i].end());
    const double t = seconds[i][seconds[i].size() / 2];
    std::printf("%-22s %-16s %5zu %10.3f %9.3f %9.2f %10.3f %11.2f\n", c.name.c_str(), runs[i].first, n, t * 1e3,
                dof / t * 1e-9, 16.0 * dof / t * 1e-9, floor_s * 1e3, t / floor_s);
  }
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::size_t(std::atoi(argv[i])));
  if (sizes.empty()) sizes = {128, 192};
  const double bw = kronex_bench::triad_bandwidth();
  std::printf("kronex panel I/O benchmark: phase 1 of 2-rank grids on one rank, b -> x or from pieces / into cells, "
              "degree-3 clamped B-spline mass matrices, double, 1 thread, built with %s\n",
              KRONEX_BENCHMARK_FLAGS);
  std::printf("memory floor: triad bandwidth %.2f GB/s measured in this run; floor = 16 B/unknown (one pass) / "
              "bandwidth; median of 41 rounds, the cases alternating\n\n",
              bw * 1e-9);
  std::printf("%-22s %-16s %5s %10s %9s %9s %10s %11s\n", "phase", "input -> output", "n", "time[ms]", "GDOF/s", "GB/s",
              "floor[ms]", "time/floor");
  for (const std::size_t n : sizes) {
    const std::size_t h = n / 2;
    const auto M = kronex::gallery::bspline_mass<double>(n, 3, kronex::boundary::clamped);
    const std::vector<phase_case> cases{
        {"(2,1,1): mode 0", {n, h, n}, 0, {n * n, n, 1}, {h * n, n, 1}},
        {"(1,2,1): modes 1+2", {h, n, n}, 1, {h * n, n, 1}, {h * n, n, 1}},
        {"(1,1,2): modes 1+2", {h, n, n}, 2, {n * h, h, 1}, {n * h, h, 1}},
    };
    for (const auto& c : cases) run_case(c, M, bw, 41);
  }
  return 0;
}
