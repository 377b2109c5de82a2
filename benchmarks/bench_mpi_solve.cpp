// Distributed 3D solve benchmark: kron(M, M, M) x = b on a distributed_tensor, M the degree-3
// B-spline mass matrix (kronex::gallery::bspline_mass<double>(n, 3, bc)), all clamped or all
// periodic, double, n = 128 by default, one thread per rank. Run under mpirun; rank 0 prints.
//
// Per process grid (default: from the number of ranks, see default_grids; --grid a,b,c picks one)
// and boundary: one compiled distributed operator (factorization outside the timing), a warm-up
// solve, then R solves, each after an MPI_Barrier and timed with MPI_Wtime; a solve's time is the
// slowest rank's (max over ranks), and the row gives the median and min over the R solves.
//   GDOF/s     global unknowns / median
//   sent/rank  bytes one rank sends per solve: the sum over the plan's exchange steps of their
//              message_bytes (the most any rank sends in that exchange, self excluded)
//   exch       exchanges per solve (solver.exchanges()) next to psydac's count: two all-to-alls
//              per split mode (2 x the number of grid entries > 1)
//   floor      the 3-pass memory floor of the largest local block: 48 bytes per local unknown at
//              the triad bandwidth (benchmarks/support/kronex_bench/membw.hpp) measured in this run on every
//              rank at once, per rank; it leaves out communication, so time/floor shows what
//              the exchanges (and oversubscription) add to the local solves
//   residual   |K x - b|_max / |b|_max with K applied by a distributed apply (outside the timing)
//
// Then, per case, where the time goes (distributed_operator::time_steps, R more solves; each
// piece's time is the slowest rank's, median over the R): each exchange and each phase's local
// work, with
//   local[B]   bytes this rank's kronex code moves in memory (the plan's step bytes: the local
//              steps' traffic; for an exchange, its own-part copy, plus packing when it packs;
//              within a node (shared memory), every value of the next block, which the rank
//              copies itself, or nothing where the next step reads the parts: "read by step k")
//   sent[B]    bytes the rank that sends most sends to other ranks (the step's bytes/rank)
//   floor      local / triad bandwidth + sent / the bandwidth of an MPI_Alltoall that sends the
//              same bytes per rank, measured in this run on MPI_COMM_WORLD (the second term only
//              for exchanges through MPI: a shared-memory exchange is all local copies)
//   measured   for an exchange, the messages and bytes the busiest rank handed to MPI in the
//              run (in shared memory: the parts the other ranks took from its block; time_steps),
//              next to the plan's messages= and bytes/rank
// and a total whose floor is the sum of the pieces' floors. Then, on 2 or more ranks and unless
// --references 0, serial host solves timed the same way in the same run (serial_seconds): rank
// 0 alone on the whole n^3 tensor (one rank's speed; the speed-up printed is its median over the
// distributed median); every rank at once on a tensor of its block's shape, no exchange (the
// speed-up without exchanges: what the distributed solve would reach if exchanging and reading
// the peers' blocks cost nothing, the ranks still sharing the memory system); rank 0 alone on
// its block's shape; and, for a plan of two phases on a grid that splits one axis, all ranks on
// one node, the node-shared bound (shared_x_seconds): the two phases as they would run if the
// blocks of x lay in memory the node shares, in place, with barriers and no exchange copies (the
// speed-up with x shared). A phase's local work pipelined with the exchange after it is one piece
// ("local + exchange, K chunks"). --transport picks how exchanges move the data
// (compile_options::exchanges; default automatic: shared memory within a node, else subarray),
// --chunks K the pipelining (compile_options::exchange_chunks: 1 none; default 0, automatic; it applies to
// exchanges through MPI, so on one node with --transport subarray), --fuse 0 makes every
// shared-memory exchange copy the parts itself instead of leaving them to the next step
// (compile_options::fuse_shared_exchanges; such an exchange, printed "read by step k", has no
// local bytes and no floor of its own: its reads are the next phase's). Where the plan solves the
// split mode across ranks (compile_options::split_solves_in_place: a grid that splits one axis,
// not the last, a band that is not folded), that solve and its halo exchange are one piece
// ("across ranks + halo, K chunks"); --split 0 makes such a plan exchange blocks instead, for
// comparison.
//
// Exit status: 0 ok; 1 a wrong result (residual above 1e-10, or a bound's result other than the
// solve's) or an exchange that sent other than its plan predicted; 2 bad command
// line.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <unistd.h>

#include <mpi.h>

#include <kronex/mpi.hpp>
#include <kronex/backends/host/host_plan.hpp>
#include <kronex/backends/host/scattered_output.hpp>
#include <kronex/backends/mpi/block_layout.hpp>

#include <kronex_bench/membw.hpp>

#ifndef KRONEX_BENCHMARK_FLAGS
#define KRONEX_BENCHMARK_FLAGS "unknown flags"
#endif

namespace {

constexpr std::size_t degree = 3;
using grid3 = std::array<int, 3>;

struct options {
  std::size_t n = 128;
  int reps = 15;
  std::vector<grid3> grids;  // empty: default_grids(size)
  bool plan = false;
  kronex::exchange_transport transport = kronex::exchange_transport::automatic;
  std::size_t chunks = 0;  // compile_options::exchange_chunks
  bool fuse = true;        // compile_options::fuse_shared_exchanges
  bool references = true;  // the same-run serial references (serial_seconds)
  bool split = true;              // compile_options::split_solves_in_place
};

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

[[noreturn]] void usage(const char* prog, const std::string& error) {
  if (world_rank() == 0) {
    std::fprintf(error.empty() ? stdout : stderr,
                 "%s%s"
                 "usage: mpirun -n P %s [--n N] [--reps R] [--grid a,b,c] [--plan] [--transport automatic|subarray|packed] [--chunks K] [--fuse 0|1] [--split 0|1] [--references 0|1]\n"
                 "  defaults: N = 128, R = 15; grids from P: 1 -> (1,1,1), 2 -> (2,1,1), 4 -> (2,2,1) and "
                 "(4,1,1),\n"
                 "  in general the squarest (a,b,1) with a*b = P, plus (P,1,1) when that differs\n"
                 "  --plan prints each case's distributed plan (rank 0's view)\n"
                 "  --split 0 exchanges blocks to solve a split mode even where the plan would solve it across ranks\n"
                 "  --references 0 skips the serial solves timed after each case (rank 0 alone on n^3; every rank on its block's shape)\n"
                 "  and the node-shared bound (the plan's phases in place in shared memory, no exchange copies)\n",
                 error.c_str(), error.empty() ? "" : "\n", prog);
  }
  MPI_Finalize();
  std::exit(error.empty() ? 0 : 2);
}

int parse_int(const char* prog, const std::string& what, const std::string& s, int min, int max) {
  char* end = nullptr;
  const long v = std::strtol(s.c_str(), &end, 10);
  if (s.empty() || *end != '\0' || v < min || v > max) usage(prog, "bad value for " + what + ": '" + s + "'");
  return int(v);
}

options parse(int argc, char** argv, int size) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") usage(argv[0], "");
    if (arg == "--plan") {
      o.plan = true;
      continue;
    }
    if (i + 1 >= argc) usage(argv[0], "missing value after " + arg);
    const std::string value = argv[++i];
    if (arg == "--n") {
      o.n = std::size_t(parse_int(argv[0], arg, value, 4, 4096));
    } else if (arg == "--reps") {
      o.reps = parse_int(argv[0], arg, value, 1, 100000);
    } else if (arg == "--transport") {
      if (value == "subarray") o.transport = kronex::exchange_transport::subarray;
      else if (value == "packed") o.transport = kronex::exchange_transport::packed;
      else if (value == "automatic") o.transport = kronex::exchange_transport::automatic;
      else usage(argv[0], "--transport takes subarray, packed or automatic, not '" + value + "'");
    } else if (arg == "--chunks") {
      o.chunks = std::size_t(parse_int(argv[0], arg, value, 0, 4096));
    } else if (arg == "--fuse") {
      o.fuse = parse_int(argv[0], arg, value, 0, 1) == 1;
    } else if (arg == "--split") {
      o.split = parse_int(argv[0], arg, value, 0, 1) == 1;
    } else if (arg == "--references") {
      o.references = parse_int(argv[0], arg, value, 0, 1) == 1;
    } else if (arg == "--grid") {
      std::vector<int> g;
      std::stringstream ss(value);
      for (std::string item; std::getline(ss, item, ',');) g.push_back(parse_int(argv[0], arg, item, 1, 1 << 20));
      if (g.size() != 3) usage(argv[0], "--grid takes three entries, e.g. 2,2,1");
      if (g[0] * g[1] * g[2] != size)
        usage(argv[0], "--grid " + value + " has " + std::to_string(g[0] * g[1] * g[2]) + " ranks, mpirun started " +
                           std::to_string(size));
      o.grids.push_back({g[0], g[1], g[2]});
    } else {
      usage(argv[0], "unknown option " + arg);
    }
  }
  return o;
}

// The squarest (a, b, 1) with a * b = P (a >= b), plus (P, 1, 1) when that differs.
std::vector<grid3> default_grids(int P) {
  int b = 1;
  for (int d = 1; d * d <= P; ++d)
    if (P % d == 0) b = d;
  std::vector<grid3> g{{P / b, b, 1}};
  if (b != 1) g.push_back({P, 1, 1});
  return g;
}

std::string text(const grid3& g) {
  return "(" + std::to_string(g[0]) + "," + std::to_string(g[1]) + "," + std::to_string(g[2]) + ")";
}

double max_over_ranks(double v) {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return r;
}
double min_over_ranks(double v) {
  double r = v;
  MPI_Allreduce(&v, &r, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return r;
}

// Ranks on this rank's node (shared-memory domain), to tell oversubscription.
int ranks_on_node() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int n = 1;
  MPI_Comm_size(node, &n);
  MPI_Comm_free(&node);
  return n;
}

// Bytes per second of an MPI_Alltoall on MPI_COMM_WORLD in which each rank sends `bytes` to the
// others in all (bytes / (P - 1) to each): the fastest of a few calls, after one warm-up. Cached
// per size; every rank calls it with the same sizes in the same order (it is collective).
double alltoall_bandwidth(double bytes) {
  static std::vector<std::pair<double, double>> cache;
  for (const auto& c : cache)
    if (c.first == bytes) return c.second;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::size_t per_peer = size > 1 ? std::size_t(bytes) / std::size_t(size - 1) : 0;
  std::vector<char> send(per_peer * std::size_t(size), 1), recv(per_peer * std::size_t(size), 0);
  double best = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    MPI_Alltoall(send.data(), int(per_peer), MPI_BYTE, recv.data(), int(per_peer), MPI_BYTE, MPI_COMM_WORLD);
    const double t = max_over_ranks(MPI_Wtime() - t0);
    if (rep > 0) best = std::min(best, t);
  }
  const double bw = size > 1 && per_peer > 0 ? double(per_peer) * double(size - 1) / best : 0.0;
  cache.emplace_back(bytes, bw);
  return bw;
}

// One piece of a solve (an exchange or a phase's local work) and where its time goes.
struct piece {
  std::string what;
  double seconds = 0, local_bytes = 0, sent_bytes = 0, floor = 0;
  double measured_bytes = 0, measured_messages = 0, planned_messages = 0;  // exchanges: max over ranks
  bool exchange = false;
  bool through_mpi = true;  // an exchange through MPI messages (not shared memory)
};

struct result {
  double median = 0, min = 0, sent = 0, floor = 0, residual = 0, local_max = 0;
  double alone = 0, blocks = 0, block_alone = 0;  // the same-run references (median seconds; 0 when not run)
  double shared = 0;            // ... and the node-shared bound (shared_x_seconds)
  bool shared_differs = false;  // the bound's result is not the distributed solve's
  std::size_t exchanges = 0, split = 0;
  std::vector<piece> pieces;
};

// The times of R runs of run(), sorted, each after an MPI_Barrier and the slowest rank's
// (MPI_Wtime; every rank calls this, a rank with nothing to time passes a run that does nothing).
template <class Run>
std::vector<double> sorted_seconds(int reps, Run&& run) {
  std::vector<double> t;
  for (int rep = 0; rep < reps; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    run();
    t.push_back(max_over_ranks(MPI_Wtime() - t0));
  }
  std::sort(t.begin(), t.end());
  return t;
}

// The median of R serial host solves kron(Ma, Mb, Mc) x = b of this shape (the matrices
// bspline_mass(shape[k], 3, bc)), one thread, on the ranks where `solves` is true, the others
// waiting at the barrier: the same-run references printed below each case (this VM's noise
// falls on them and on the distributed solves alike).
double serial_seconds(int reps, const std::array<std::size_t, 3>& shape, kronex::boundary bc, bool solves) {
  if (!solves) return sorted_seconds(reps, [] {})[std::size_t(reps) / 2];
  xt::xtensor<double, 3> b = xt::zeros<double>(shape), x = xt::zeros<double>(shape);
  for (std::size_t i = 0; i < b.size(); ++i) b.data()[i] = std::sin(0.37 * double(i % 100003)) + 0.1;
  kronex::compile_options one_thread;
  one_thread.threads = 1;
  const auto Ma = kronex::gallery::bspline_mass<double>(shape[0], degree, bc);
  const auto Mb = kronex::gallery::bspline_mass<double>(shape[1], degree, bc);
  const auto Mc = kronex::gallery::bspline_mass<double>(shape[2], degree, bc);
  auto solver = kronex::compile(kronex::kron(Ma, Mb, Mc).inverse(), b, one_thread);
  solver(b, x);  // warm-up: first touch of x and of the workspace
  return sorted_seconds(reps, [&] { solver(b, x); })[std::size_t(reps) / 2];
}

// The host plan of kron(F0, F1, F2)^-1 on `shape`, one thread, F_k = M for the modes in `modes`
// (bit k: mode k) and the identity for the others: one phase of a bound's solve.
kronex::detail::host_plan<double> modes_plan(const kronex::banded<double>& M, int modes, const kronex::shape_t& shape) {
  std::vector<kronex::any_factor<double>> f;
  for (std::size_t k = 0; k < 3; ++k)
    f.push_back((modes >> k & 1) ? kronex::any_factor<double>(M) : kronex::any_factor<double>(kronex::identity(shape[k])));
  kronex::operator_desc<double> d = kronex::kron(f[0], f[1], f[2]).inverse().template describe<double>();
  d.options.threads = 1;
  return kronex::detail::host_plan<double>(d, shape);
}

// Whether a bound's result (this rank's block of it, in x's layout) differs from the distributed
// solve's x by more than 1e-12 relative on any rank (collective).
bool differs_from_solve(const double* got, const kronex::distributed_tensor<double, 3>& x) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < x.local().size(); ++i) {
    diff = std::max(diff, std::abs(got[i] - x.local().data()[i]));
    scale = std::max(scale, std::abs(x.local().data()[i]));
  }
  return max_over_ranks(diff) > 1e-12 * max_over_ranks(scale);
}

// The node-shared bound: this plan's two phases as they would run if the ranks' blocks of x lay
// in memory the node shares, each block in C order as now. Phase 0 solves its modes from b into
// the rank's own block; after a barrier, phase 1 solves its modes on the phase's box, reading
// and writing it in place across the blocks (a gathered source and a scattered output, one cell
// per block, the host plan's own paths for the peers' blocks); then a barrier. No exchange copy
// and no return: what taking every copy out of the exchanges could reach, memory shared. It
// runs for plans of two phases on a grid that splits one axis, all ranks on one node, where
// phase 1's plan can write a scattered output (host_plan::scatters_output); `x` is
// the distributed solve's result, which the bound's must equal to 1e-12 (else `differs`).
struct shared_bound {
  double seconds = 0;  // median over the repeats; 0: not run
  bool differs = false;
};

shared_bound shared_x_seconds(int reps, const kronex::banded<double>& M, const grid3& grid,
                              const kronex::plan_description& plan, const kronex::distributed_tensor<double, 3>& b,
                              const kronex::distributed_tensor<double, 3>& x) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::size_t split = 3, splits = 0;
  for (std::size_t k = 0; k < 3; ++k)
    if (grid[k] > 1) split = k, ++splits;
  int phase_modes[2] = {0, 0};  // bit k: mode k solved in that phase
  bool two_phases = true;
  for (const auto& st : plan.steps) {
    const auto& info = kronex::step_info(st);
    if (kronex::kind_of(st) != kronex::step_kind::solve) continue;
    if (info.phase == 0 || info.phase == 1) phase_modes[info.phase] |= 1 << info.mode;
    else two_phases = false;
  }
  std::size_t across = 3;  // phase 1's box: split along the first axis none of its modes solve
  for (std::size_t k = 3; k-- > 0;)
    if (!(phase_modes[1] >> k & 1)) across = k;
  if (splits != 1 || !two_phases || !(phase_modes[1] >> split & 1) || (phase_modes[0] >> split & 1) ||
      across == 3 || ranks_on_node() != size)
    return {};

  // Blocks along `split` and phase 1's boxes along `across`, as distributed_tensor splits axes:
  // the first ranks get one more point.
  const std::size_t n = M.size(), P = std::size_t(size), me = std::size_t(world_rank());
  auto extent = [&](std::size_t q) { return kronex::detail::block_range(n, P, q).size(); };
  auto offset = [&](std::size_t q) { return kronex::detail::block_range(n, P, q).begin; };
  kronex::shape_t own{n, n, n}, box{n, n, n};
  own[split] = extent(me);
  box[across] = extent(me);
  auto p0 = modes_plan(M, phase_modes[0], own), p1 = modes_plan(M, phase_modes[1], box);
  if (max_over_ranks(p1.scatters_output() ? 0.0 : 1.0) > 0) return {};  // its last step does not run in panels
  p1.reserve_scattered_output();

  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  double* mine = nullptr;
  MPI_Win win;
  MPI_Win_allocate_shared(MPI_Aint(b.local().size() * sizeof(double)), int(sizeof(double)), MPI_INFO_NULL, node,
                          &mine, &win);
  std::vector<std::vector<std::size_t>> cuts(3, {0});
  for (std::size_t q = 1; q < P; ++q) cuts[split].push_back(offset(q));
  kronex::detail::gathered_tensor<double> in(box, cuts);
  kronex::detail::scattered_output<double> out(box, cuts);
  for (std::size_t q = 0; q < P; ++q) {
    MPI_Aint bytes = 0;
    int unit = 0;
    double* base = nullptr;
    MPI_Win_shared_query(win, int(q), &bytes, &unit, &base);
    kronex::shape_t block{n, n, n};
    block[split] = extent(q);
    const std::vector<std::size_t> strides{block[1] * block[2], block[2], 1};
    std::vector<std::size_t> cell(3, 0);
    cell[split] = q;
    in.set_cell(in.cell_index(cell), base, strides, offset(me) * strides[across]);
    out.set_cell(out.cell_index(cell), base, strides, offset(me) * strides[across]);
  }
  std::vector<double> home(kronex::detail::product(box));  // where a fused pair's first step may work
  out.set_home(home.data());
  auto solve = [&] {
    p0.run(b.local().data(), mine);
    MPI_Barrier(node);
    p1.run(in, out);
    MPI_Barrier(node);
  };
  solve();  // warm-up
  shared_bound r;
  r.seconds = sorted_seconds(reps, solve)[std::size_t(reps) / 2];
  r.differs = differs_from_solve(mine, x);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  return r;
}

result run_case(const options& o, const grid3& grid, kronex::boundary bc, double bw_rank) {
  const std::size_t n = o.n;
  const auto M = kronex::gallery::bspline_mass<double>(n, degree, bc);
  kronex::distributed_tensor<double, 3> b(MPI_COMM_WORLD, {n, n, n}, grid);
  {
    // The same global b whatever the grid: each entry from its global index.
    const auto off = b.local_offset();
    auto& loc = b.local();
    const auto& s = loc.shape();
    for (std::size_t i = 0; i < s[0]; ++i)
      for (std::size_t j = 0; j < s[1]; ++j)
        for (std::size_t k = 0; k < s[2]; ++k) {
          const std::size_t g = ((off[0] + i) * n + off[1] + j) * n + off[2] + k;
          loc(i, j, k) = std::sin(0.37 * double(g % 100003)) + 0.1;
        }
  }
  auto x = kronex::distributed_tensor<double, 3>::like(b);
  const auto K = kronex::kron(M, M, M);
  kronex::compile_options one_thread;  // one thread per rank, as printed (the default follows OMP_NUM_THREADS)
  one_thread.threads = 1;
  one_thread.exchanges = o.transport;
  one_thread.exchange_chunks = o.chunks;
  one_thread.fuse_shared_exchanges = o.fuse;
  one_thread.split_solves_in_place = o.split;
  auto solver = kronex::compile(K.inverse(), b, one_thread);

  result r;
  r.exchanges = solver.exchanges();
  for (int g : grid) r.split += g > 1;
  for (const auto& st : solver.plan().steps)
    if (const auto* e = std::get_if<kronex::exchange_step>(&st)) r.sent += e->message_bytes;
  const double local = double(b.local().size());
  r.local_max = max_over_ranks(local);
  r.floor = max_over_ranks(48.0 * local / bw_rank);
  if (o.plan && world_rank() == 0) std::printf("%s\n", kronex::to_string(solver.plan()).c_str());

  solver(b, x);  // warm-up: first touch of x, the buffers and the sub-communicators' paths
  const std::vector<double> t = sorted_seconds(o.reps, [&] { solver(b, x); });
  r.median = t[t.size() / 2];
  r.min = t.front();

  // Where the time goes: the pieces of R more solves, each the slowest rank's, median over R.
  std::vector<std::vector<double>> piece_times;
  std::vector<kronex::timed_steps> layout;
  for (int rep = 0; rep < o.reps; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    layout = solver.time_steps(b, x);
    piece_times.resize(layout.size());
    for (std::size_t p = 0; p < layout.size(); ++p) piece_times[p].push_back(max_over_ranks(layout[p].seconds));
  }
  const auto& steps = solver.plan().steps;
  for (std::size_t p = 0; p < layout.size(); ++p) {
    piece pc;
    std::sort(piece_times[p].begin(), piece_times[p].end());
    pc.seconds = piece_times[p][piece_times[p].size() / 2];
    const auto& ts = layout[p];
    double local_bytes = 0;
    for (std::size_t s = ts.first; s < ts.first + ts.count; ++s) {
      local_bytes += kronex::step_info(steps[s]).bytes;
      if (const auto* e = std::get_if<kronex::exchange_step>(&steps[s])) {
        const long phase = kronex::step_info(steps[ts.first]).phase;
        const std::string where = phase >= 0 ? "local (phase " + std::to_string(phase) + ")" : "across ranks";
        pc.what = ts.count == 1 ? "step " + std::to_string(s) + " exchange " + kronex::step_method(steps[s])
                                : "steps " + std::to_string(ts.first) + "-" + std::to_string(s) + " " + where + " + " +
                                      (e->how == kronex::exchange_step::method::halo ? "halo" : "exchange") + ", " +
                                      std::to_string(e->chunks) + " chunks";
        pc.sent_bytes = e->message_bytes;
        pc.planned_messages = double(e->messages);
        pc.exchange = true;
        pc.through_mpi = e->transport != "shared memory";
      }
    }
    if (pc.what.empty()) {
      const long phase = ts.count ? kronex::step_info(steps[ts.first]).phase : 0;
      pc.what = ts.count == 0 ? "phase 0 copy"
                              : "steps " + std::to_string(ts.first) + "-" + std::to_string(ts.first + ts.count - 1) +
                                    " local (phase " + std::to_string(phase) + ")";
    }
    pc.local_bytes = max_over_ranks(local_bytes);
    pc.measured_bytes = max_over_ranks(ts.sent_bytes);
    pc.measured_messages = max_over_ranks(double(ts.messages));
    pc.floor = pc.local_bytes / bw_rank +
               (pc.through_mpi && pc.sent_bytes > 0 ? pc.sent_bytes / alltoall_bandwidth(pc.sent_bytes) : 0.0);
    r.pieces.push_back(pc);
  }

  // Residual, outside the timing: K x against b, with a distributed apply.
  auto apply = kronex::compile(K, b);
  const auto y = apply(x);
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < b.local().size(); ++i) {
    diff = std::max(diff, std::abs(y.local().data()[i] - b.local().data()[i]));
    scale = std::max(scale, std::abs(b.local().data()[i]));
  }
  r.residual = max_over_ranks(diff) / max_over_ranks(scale);

  // The same-run references (serial_seconds): rank 0 alone on the whole tensor, as one rank
  // would solve it; every rank at once on a tensor of its block's shape, no exchange (the ranks'
  // local work if exchanging and reading the peers' blocks were free, on the shared memory
  // system); rank 0 alone on its block's shape (the same without the other ranks' traffic).
  // One rank's distributed solve is the serial one: no references there.
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (o.references && size > 1) {
    const auto& s = b.local().shape();
    r.alone = serial_seconds(o.reps, {n, n, n}, bc, world_rank() == 0);
    r.blocks = serial_seconds(o.reps, {s[0], s[1], s[2]}, bc, true);
    r.block_alone = serial_seconds(o.reps, {s[0], s[1], s[2]}, bc, world_rank() == 0);
    const shared_bound sb = shared_x_seconds(o.reps, M, grid, solver.plan(), b, x);
    r.shared = sb.seconds;
    r.shared_differs = sb.differs;
  }
  return r;
}

} // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const bool root = world_rank() == 0;
  options o = parse(argc, argv, size);
  if (o.grids.empty()) o.grids = default_grids(size);

  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int on_node = ranks_on_node();
  const double ranks_max_on_node = max_over_ranks(double(on_node));

  // The bandwidth floor, measured on every rank at once (they share the memory system, as in
  // the solves), per rank.
  MPI_Barrier(MPI_COMM_WORLD);
  const double bw = kronex_bench::triad_bandwidth();
  const double bw_min = min_over_ranks(bw), bw_max = max_over_ranks(bw);

  const std::size_t n = o.n;
  if (root) {
    std::printf("kronex distributed solve benchmark: kron(M, M, M) x = b, M = B-spline mass matrix of degree %zu, "
                "n = %zu (%zu^3 = %.0f unknowns), double, %d ranks, 1 thread per rank, built with %s\n",
                degree, n, n, double(n * n * n), size, KRONEX_BENCHMARK_FLAGS);
    std::printf("time: slowest rank per solve, after MPI_Barrier, MPI_Wtime; median and min of %d solves after 1 warm-up\n",
                o.reps);
    std::printf("memory floor: triad bandwidth per rank, all ranks at once: %.2f to %.2f GB/s; "
                "floor = 48 B per unknown of the largest local block / the rank's bandwidth (communication not included)\n",
                bw_min * 1e-9, bw_max * 1e-9);
    std::printf("sent/rank: bytes one rank sends per solve (plan's exchange steps); exch: exchanges per solve, "
                "psydac: 2 per split mode\n");
    if (ranks_max_on_node > double(cores)) {
      std::printf("NOTE: %d ranks on a node with %ld cores: OVERSUBSCRIBED, times are for sanity only, not performance\n",
                  int(ranks_max_on_node), cores);
    } else {
      std::printf("note: %d ranks on a node with %ld cores (oversubscribed runs, more ranks than cores, are for sanity only)\n",
                  int(ranks_max_on_node), cores);
    }
    std::printf("\n%-9s %-9s %10s %10s %10s %8s %11s %11s %9s %10s %11s\n", "boundary", "grid", "local[MB]",
                "median[ms]", "min[ms]", "GDOF/s", "sent/rank", "exch/psydac", "floor[ms]", "time/floor", "residual");
  }

  int status = 0;
  for (const grid3& grid : o.grids) {
    for (const auto bc : {kronex::boundary::clamped, kronex::boundary::periodic}) {
      const result r = run_case(o, grid, bc, bw);
      bool ok = r.residual <= 1e-10 && !r.shared_differs;
      for (const piece& pc : r.pieces)
        ok = ok && (!pc.exchange || (pc.measured_bytes == pc.sent_bytes && pc.measured_messages == pc.planned_messages));
      if (!ok) status = 1;
      if (root) {
        const std::string ex = std::to_string(r.exchanges) + " / " + std::to_string(2 * r.split);
        std::printf("%-9s %-9s %10.2f %10.3f %10.3f %8.3f %10.2fM %11s %9.3f %10.2f %11.1e%s\n",
                    kronex::to_string(bc), text(grid).c_str(), r.local_max * 8e-6, r.median * 1e3, r.min * 1e3,
                    double(n * n * n) / r.median * 1e-9, r.sent * 1e-6, ex.c_str(), r.floor * 1e3, r.median / r.floor,
                    r.residual, ok ? "" : "  WRONG");
        double seconds = 0, local = 0, sent = 0, floor = 0;
        for (const piece& pc : r.pieces) {
          std::printf("    %-52s %9.3f ms %10.2fM local %9.2fM sent  floor %8.3f ms  x%.2f", pc.what.c_str(),
                      pc.seconds * 1e3, pc.local_bytes * 1e-6, pc.sent_bytes * 1e-6, pc.floor * 1e3,
                      pc.floor > 0 ? pc.seconds / pc.floor : 0.0);
          if (pc.exchange) {
            // What the busiest rank handed to MPI in the run, against the plan's prediction.
            const bool same = pc.measured_bytes == pc.sent_bytes && pc.measured_messages == pc.planned_messages;
            std::printf("  measured %.0f msg %.2fM sent%s", pc.measured_messages, pc.measured_bytes * 1e-6,
                        same ? " (= plan)" : "  DIFFERS FROM THE PLAN");
          }
          std::printf("\n");
          seconds += pc.seconds, local += pc.local_bytes, sent += pc.sent_bytes, floor += pc.floor;
        }
        std::printf("    %-52s %9.3f ms %10.2fM local %9.2fM sent  floor %8.3f ms  x%.2f\n", "total (sum of pieces)",
                    seconds * 1e3, local * 1e-6, sent * 1e-6, floor * 1e3, floor > 0 ? seconds / floor : 0.0);
        if (r.alone > 0) {
          std::printf("    %-52s %9.3f ms  speed-up of the distributed solve: %.2fx\n",
                      "serial n^3, rank 0 alone", r.alone * 1e3, r.alone / r.median);
          std::printf("    %-52s %9.3f ms  speed-up without exchanges: %.2fx\n", "serial block shapes, every rank at once",
                      r.blocks * 1e3, r.alone / r.blocks);
          std::printf("    %-52s %9.3f ms\n", "serial block shape, rank 0 alone", r.block_alone * 1e3);
          if (r.shared > 0)
            std::printf("    %-52s %9.3f ms  speed-up with x shared: %.2fx%s\n", "node-shared x, in place, barriers only",
                        r.shared * 1e3, r.alone / r.shared, r.shared_differs ? "  RESULT DIFFERS" : "");
        }
      }
    }
  }
  MPI_Finalize();
  return status;
}
