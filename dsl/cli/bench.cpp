// kronex bench: times the compiled plans of a program on one or both backends, over a sweep of
// sizes, against the memory-bandwidth floor measured in the same run.
//   time:   each run() of the whole program (every stage) after warm-up runs; median, min, max;
//   GDOF/s: unknowns (the tensor's size) / median time;
//   GB/s:   the bytes the plans state they move / median time;
//   floor:  2 * sizeof(T) * unknowns per plan step (each step reads and writes the tensor once)
//           at the bandwidth measured on that backend in this run (host: triad; device: a large
//           device-to-device copy); time/floor is how far the plans are from it.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <system_error>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "exec/plan_json.hpp"
#include "io/atomic_file.hpp"

namespace kronex::cli {

namespace {

// The most points (rows per backend) all --sweep options together may give.
constexpr std::uint64_t max_sweep_points = 1000;

struct bench_options {
  source_options source;
  std::string backend = "host";
  int reps = 0;     // 0: as many as fit in about half a second, 5 to 200
  int warmup = 2;
  std::string json, plot;
  const CLI::Option* json_option = nullptr;
  const CLI::Option* plot_option = nullptr;
  std::vector<std::string> sweeps;
  bool plans = true;
  double min_rcond = -1;
  std::size_t threads = 0;
  std::string solves = "automatic";
};

// "n=32:256:x2" (geometric), "n=32:256:+32" (arithmetic) or "n=32,64,100" (a list).
std::pair<std::string, std::vector<std::uint64_t>> parse_sweep(const std::string& spec) {
  const auto bad = [&](const std::string& why) {
    return usage_error("--sweep " + spec + ": " + why + " (expected NAME=FROM:TO:xFACTOR, NAME=FROM:TO:+STEP or NAME=A,B,C)");
  };
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) throw bad("no NAME=");
  const std::string name = spec.substr(0, eq), rest = spec.substr(eq + 1);
  const auto number = [&](const std::string& s) -> std::uint64_t {
    if (s.empty() || s.size() > 12 || s.find_first_not_of("0123456789") != std::string::npos || std::stoull(s) == 0) {
      throw bad("'" + s + "' is not a positive integer");
    }
    return std::stoull(s);
  };
  std::vector<std::uint64_t> values;
  if (rest.find(':') == std::string::npos) {
    std::stringstream ss(rest);
    for (std::string item; std::getline(ss, item, ',');) {
      if (values.size() == max_sweep_points) throw bad("more than " + std::to_string(max_sweep_points) + " values");
      values.push_back(number(item));
    }
  } else {
    std::vector<std::string> parts;
    std::stringstream ss(rest);
    for (std::string item; std::getline(ss, item, ':');) parts.push_back(item);
    if (parts.size() != 3 || parts[2].size() < 2 || (parts[2][0] != 'x' && parts[2][0] != '+')) throw bad("malformed range");
    const std::uint64_t from = number(parts[0]), to = number(parts[1]), by = number(parts[2].substr(1));
    if (from == 0 || from > to) throw bad("FROM must be positive and at most TO");
    if (by < (parts[2][0] == 'x' ? 2u : 1u)) throw bad("the factor must be at least 2 and the step at least 1");
    for (std::uint64_t v = from; v <= to && values.size() < 1000;) {
      values.push_back(v);
      if (parts[2][0] == 'x' ? v > to / by : v > to - by) break;  // the next value would pass TO (or overflow)
      v = parts[2][0] == 'x' ? v * by : v + by;
    }
  }
  if (values.empty()) throw bad("no values");
  return {name, values};
}

// Every combination of the swept values (the first sweep varies slowest), on top of --set. The
// count is checked before any is made: sweeps multiply.
std::vector<dsl::parameters> combinations(const dsl::parameters& base, const std::vector<std::string>& sweeps) {
  std::vector<std::pair<std::string, std::vector<std::uint64_t>>> parsed;
  std::uint64_t total = 1;
  for (const auto& s : sweeps) {
    parsed.push_back(parse_sweep(s));
    const std::string& name = parsed.back().first;
    if (base.count(name)) throw usage_error("parameter " + name + " is given by both --set and --sweep: give it once");
    for (std::size_t k = 0; k + 1 < parsed.size(); ++k) {
      if (parsed[k].first == name) throw usage_error("--sweep " + name + " is given twice: give each parameter once");
    }
    total *= parsed.back().second.size();  // at most max_sweep_points^2 before the check below
    if (total > max_sweep_points) {
      std::string counts;
      for (const auto& [n, v] : parsed) counts += (counts.empty() ? "" : " x ") + std::to_string(v.size()) + " (" + n + ")";
      throw usage_error("the sweeps give " + counts + " = " + std::to_string(total) + " points, more than the limit of " +
                        std::to_string(max_sweep_points) + "; sweep fewer values");
    }
  }
  std::vector<dsl::parameters> out{base};
  for (const auto& [name, values] : parsed) {
    std::vector<dsl::parameters> next;
    for (const auto& p : out) {
      for (const auto v : values) {
        auto q = p;
        q[name] = v;
        next.push_back(q);
      }
    }
    out = std::move(next);
  }
  return out;
}

std::string describe(const dsl::parameters& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

class progress {
public:
  explicit progress(std::string label) : m_label(std::move(label)), m_on(isatty(fileno(stderr))) {}
  ~progress() { if (m_on) std::fprintf(stderr, "\r\033[K"); }
  void show(int done, int total) {
    if (!m_on) return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\r\033[K%s [%s%s] %d/%d", m_label.c_str(), std::string(std::size_t(filled), '#').c_str(),
                 std::string(std::size_t(width - filled), '.').c_str(), done, total);
    std::fflush(stderr);
  }

private:
  std::string m_label;
  bool m_on;
};

struct row {
  dsl::parameters params;
  std::string backend;
  std::vector<std::size_t> shape;
  dsl::dtype type;
  int reps = 0;
  std::vector<double> samples;  // the timed runs' seconds, in the order they ran
  double median = 0, min = 0, max = 0, bytes = 0, flops = 0, floor = 0, residual = 0;
  std::size_t steps = 0;
  // A Krylov solve (each timed run one whole solve from x = 0): its last run's outcome.
  std::string method;  // empty for other programs
  std::size_t iterations = 0;
  bool converged = true;
  std::string status;
  double per_iteration() const { return iterations ? median / double(iterations) : median; }
  double unknowns() const {
    double n = 1;
    for (auto s : shape) n *= double(s);
    return n;
  }
};

std::string plot_script() {
  if (const char* env = std::getenv("KRONEX_PLOT_SCRIPT")) return env;
  // Installed next to the binary (bin/../share/kronex), else the source tree's copy.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "kronex" / "kronex-plot.py";
    if (std::filesystem::exists(installed, ec)) return installed.string();
  }
  return KRONEX_PLOT_SCRIPT_SOURCE;
}

// Runs argv[0] (looked up on PATH) with these arguments, without a shell, so no file name is
// ever parsed as shell syntax; waits for it. Returns "" on exit status 0, else what went wrong.
std::string run_program(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  std::cout.flush();  // the table comes before anything the program prints
  pid_t pid = 0;
  if (const int err = ::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ)) {
    return "cannot start " + args[0] + " (" + std::error_code(err, std::generic_category()).message() + ")";
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return "cannot wait for " + args[0] + " (" + std::error_code(errno, std::generic_category()).message() + ")";
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
  return WIFEXITED(status) ? args[0] + " exited with status " + std::to_string(WEXITSTATUS(status))
                           : args[0] + " was killed by signal " + std::to_string(WTERMSIG(status));
}

void bench(const bench_options& o) {
  check_output_path(o.json, *o.json_option);
  check_output_path(o.plot, *o.plot_option);
  if (o.reps < 0 || o.warmup < 0) throw usage_error("--reps and --warmup must not be negative");
  const loaded_source src = load_source(o.source);
  const auto all = combinations(parse_assignments(o.source.assignments), o.sweeps);
  std::vector<dsl::backend_kind> backends;
  if (o.backend == "host" || o.backend == "all") backends.push_back(dsl::backend_kind::host);
  if (o.backend == "device" || o.backend == "all") backends.push_back(dsl::backend_kind::device);

  // One point at a time: evaluated, prepared, timed and released before the next, so a sweep
  // needs the memory of its largest point, not of all of them.
  std::map<std::string, double> bandwidth;
  std::vector<std::pair<std::size_t, row>> rows;  // (backend index, row): shown backend by backend
  bool krylov = false;  // the program ends with a Krylov solve (the same at every point)
  for (std::size_t i = 0; i < all.size(); ++i) {
    dsl::evaluated_program program = evaluate(src, all[i]);
    program.options.min_rcond = o.min_rcond;
    program.options.threads = o.threads;
    program.options.solves = solve_method_named(o.solves);
    check_parameters_used(program, all[i]);
    if (!program.runnable()) {
      throw rendered_error(dsl::dsl_error(program.where, "the program ends with an operator: bench times "
                                                         "a solve or an apply, e.g. K.solve(random(1))")
                               .render(src.text, src.name));
    }
    if (i == 0) {
      krylov = bool(program.krylov);
      if (krylov && !o.plot.empty()) {
        throw usage_error("--plot draws Kronecker plans against their memory floor; a Krylov solve has none: use "
                          "--json for its rows");
      }
      std::cout << "kronex bench  " << program.text << '\n';
    }
    for (std::size_t b = 0; b < backends.size(); ++b) {
      const auto backend = backends[b];
      auto exe = pointing_into(src, [&] { return dsl::prepare(program, backend); });
      const std::string name = exe->backend_name();
      if (!krylov && !bandwidth.count(name)) {
        bandwidth[name] = exe->memory_bandwidth();
        std::printf("memory floor on %s: %.2f GB/s measured now (%s)\n", name.c_str(), bandwidth[name] * 1e-9,
                    backend == dsl::backend_kind::host ? "triad" : "device-to-device copy");
        std::fflush(stdout);
      }
      if (o.plans && i == 0) {
        if (krylov) print_krylov_plans(std::cout, program, name, exe->plans());
        else print_plans(std::cout, program, exe->plans());
      }
      row r;
      r.params = all[i];
      r.backend = name;
      r.shape.assign(program.shape.begin(), program.shape.end());
      r.type = program.type;
      for (const auto& p : exe->plans()) {
        r.bytes += p.bytes();
        r.flops += p.flops();
        r.steps += p.steps.size();
      }
      progress bar(describe(all[i]) + (describe(all[i]).empty() ? "" : " ") + name);
      // The automatic repetition count needs one run's time: the last warm-up run's, or (with
      // --warmup 0) the first timed run, which then counts.
      std::vector<double> t;
      double first = 0;
      for (int w = 0; w < o.warmup; ++w) first = exe->timed_run();
      if (o.warmup == 0 && o.reps == 0) t.push_back(first = exe->timed_run());
      r.reps = o.reps > 0 ? o.reps : int(std::clamp(0.5 / std::max(first, 1e-9), 5.0, 200.0));
      while (int(t.size()) < r.reps) {
        bar.show(int(t.size()), r.reps);
        t.push_back(exe->timed_run());
      }
      bar.show(r.reps, r.reps);
      r.samples = t;
      std::sort(t.begin(), t.end());
      r.median = t[t.size() / 2];
      r.min = t.front();
      r.max = t.back();
      const double elem = double(program.type == dsl::dtype::float32 ? 4 : program.type == dsl::dtype::complex128 ? 16 : 8);
      if (const krylov_result* k = exe->krylov()) {
        r.floor = std::numeric_limits<double>::quiet_NaN();
        r.method = to_string(program.krylov->method);
        r.iterations = k->iterations;
        r.converged = k->converged;
        r.status = to_string(k->status);
        r.residual = k->relative_residual;
        rows.emplace_back(b, std::move(r));
        continue;
      }
      r.floor = double(r.steps) * 2.0 * elem * r.unknowns() / bandwidth[name];
      r.residual = pointing_into(src, [&] {
        try {
          return dsl::relative_residual(program, exe->result());
        } catch (const dsl::dsl_error&) {
          // An operator combination that cannot be undone (the apply of a sum that is not
          // separable, a pseudo-inverse) is still timed: its residual is nan (null in JSON).
          if (!program.stages.back().op->combined()) throw;
          return std::numeric_limits<double>::quiet_NaN();
        }
      });
      rows.emplace_back(b, std::move(r));
    }
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.first < y.first; });

  if (krylov) {
    // Each timed run is one whole solve from x = 0: the median is the time to solution.
    std::printf("\n%-14s %-12s %-18s %-10s %6s %10s %10s %10s %-9s %10s %12s %-16s %10s\n", "params", "backend",
                "shape", "type", "reps", "median[ms]", "min[ms]", "max[ms]", "method", "iterations", "per-iter[ms]",
                "status", "residual");
    for (const auto& [b, r] : rows) {
      std::printf("%-14s %-12s %-18s %-10s %6d %10.3f %10.3f %10.3f %-9s %10zu %12.4f %-16s %10.1e\n",
                  describe(r.params).empty() ? "-" : describe(r.params).c_str(), r.backend.c_str(),
                  format_shape(r.shape).c_str(), dsl::to_string(r.type), r.reps, r.median * 1e3, r.min * 1e3,
                  r.max * 1e3, r.method.c_str(), r.iterations, r.per_iteration() * 1e3, r.status.c_str(), r.residual);
    }
    std::cout << "median: time to solution (one whole solve from x = 0); per-iter: median / iterations; residual: "
                 "the true ||b - A x|| / ||b|| of the last run, computed by the solver at exit\n";
  } else {
  std::printf("\n%-14s %-12s %-18s %-10s %6s %10s %10s %10s %9s %8s %10s %10s %10s\n", "params", "backend", "shape",
              "type", "reps", "median[ms]", "min[ms]", "max[ms]", "GDOF/s", "GB/s", "floor[ms]", "time/floor",
              "residual");
  for (const auto& [b, r] : rows) {
    std::printf("%-14s %-12s %-18s %-10s %6d %10.3f %10.3f %10.3f %9.3f %8.2f %10.3f %10.2f %10.1e\n",
                describe(r.params).empty() ? "-" : describe(r.params).c_str(), r.backend.c_str(),
                format_shape(r.shape).c_str(), dsl::to_string(r.type), r.reps, r.median * 1e3, r.min * 1e3,
                r.max * 1e3, r.unknowns() / r.median * 1e-9, r.bytes / r.median * 1e-9, r.floor * 1e3, r.median / r.floor,
                r.residual);
  }
  std::cout << "floor: 2 x sizeof(T) bytes per unknown per plan step at the measured bandwidth; residual: the last "
               "stage undone on the host\n";
  }
  // Rows whose solve did not converge: exit code 3 once the table (and the JSON) is out.
  std::string unconverged;
  for (const auto& [b, r] : rows) {
    if (!r.converged) unconverged += (unconverged.empty() ? "" : ", ") + (describe(r.params).empty() ? r.backend : describe(r.params) + " " + r.backend) + " (" + r.status + ")";
  }
  const auto finish = [&] {
    if (!unconverged.empty()) throw not_converged("the Krylov solve did not converge at " + unconverged);
  };

  if (o.json.empty() && o.plot.empty()) return finish();
  nlohmann::json j;
  j["source"] = src.name;
  j["program"] = src.text;
  j["bandwidth_bytes_per_s"] = bandwidth;
  j["rows"] = nlohmann::json::array();
  for (const auto& [b, r] : rows) {
    j["rows"].push_back({{"params", r.params}, {"backend", r.backend}, {"shape", r.shape},
                         {"value_type", dsl::to_string(r.type)}, {"unknowns", r.unknowns()}, {"reps", r.reps},
                         {"time_s", {{"median", r.median}, {"min", r.min}, {"max", r.max}}}, {"samples_s", r.samples},
                         {"gdof_per_s", r.unknowns() / r.median * 1e-9}, {"gb_per_s", r.bytes / r.median * 1e-9},
                         {"plan_bytes", r.bytes}, {"plan_flops", r.flops}, {"floor_s", r.floor},
                         {"time_over_floor", r.median / r.floor}, {"residual", r.residual}});
    if (!r.method.empty()) {
      auto& k = j["rows"].back();
      for (const char* key : {"gdof_per_s", "gb_per_s", "plan_bytes", "plan_flops", "floor_s", "time_over_floor"}) k.erase(key);
      k["krylov"] = {{"method", r.method}, {"iterations", r.iterations}, {"converged", r.converged},
                     {"status", r.status}, {"time_to_solution_s", r.median},
                     {"time_per_iteration_s", r.per_iteration()}, {"relative_residual", r.residual}};
    }
  }
  const std::string json_path = o.json.empty() ? o.plot + ".json.tmp-" + std::to_string(::getpid()) : o.json;
  dsl::io::write_file_atomic(json_path, [&](std::ostream& out) { out << j.dump(2) << '\n'; });
  if (!o.json.empty()) std::cout << "wrote " << o.json << '\n';
  if (!o.plot.empty()) {
    // Debian's python3 (where python3-matplotlib installs) unless KRONEX_PYTHON says otherwise.
    const char* python = std::getenv("KRONEX_PYTHON");
    std::error_code ec;
    const std::string interpreter = python ? python : std::filesystem::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
    const std::vector<std::string> cmd{interpreter, plot_script(), json_path, o.plot};
    const std::string failure = run_program(cmd);
    if (o.json.empty()) std::remove(json_path.c_str());
    if (!failure.empty()) {
      // Not an input error: exit code 1.
      std::string line;
      for (const auto& a : cmd) line += (line.empty() ? "" : " ") + a;
      throw external_failure("plotting failed: " + failure + " (running " + line + "); it needs python3 with "
                             "matplotlib (Debian: python3-matplotlib); set KRONEX_PYTHON to choose the interpreter");
    }
    std::cout << "wrote " << o.plot << '\n';
  }
  finish();
}

} // namespace

void register_bench(CLI::App& app) {
  auto o = std::make_shared<bench_options>();
  auto* cmd = app.add_subcommand("bench", "Time a program's compiled plans against the memory-bandwidth floor");
  add_source_options(*cmd, o->source);
  add_backend_option(*cmd, o->backend, true);
  cmd->add_option("--reps", o->reps, "Timed runs per row (default: about 0.5 s worth, 5 to 200)");
  cmd->add_option("--warmup", o->warmup, "Untimed runs before timing")->capture_default_str();
  cmd->add_option("--sweep", o->sweeps, "Repeat over values of a parameter: n=32:256:x2, n=32:256:+32 or n=32,64 "
                                        "(write $n in the program; repeatable: all combinations)")
      ->type_name("NAME=RANGE");
  o->json_option = cmd->add_option("--json", o->json, "Write every row as JSON to this file");
  o->plot_option = cmd->add_option("--plot", o->plot, "Draw time and GDOF/s against size into this file (.svg, .png or .pdf; "
                                     "python3 with matplotlib)");
  cmd->add_flag("!--no-plan", o->plans, "Do not print the plans");
  add_min_rcond_option(*cmd, o->min_rcond);
  add_threads_option(*cmd, o->threads);
  add_solves_option(*cmd, o->solves);
  cmd->footer(R"(Examples:
  kronex bench 'kron(mass(128, 3), mass(128, 3, periodic), mass(128, 3)).solve(random(1))'
  kronex bench 'kron(mass($n, 3), mass($n, 3), mass($n, 3)).solve(random(1))' --sweep n=32:256:x2 \
               --backend all --json bench.json --plot bench.svg)");
  cmd->callback([o] { bench(*o); });
}

} // namespace kronex::cli
