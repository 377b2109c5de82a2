// kronex precondition: how well do Kronecker products and Kronecker sums precondition operators
// that are not Kronecker products? The first numbers a preconditioner researcher wants.
//
// Two variable-coefficient operators on a 3D tensor-product B-spline space (clamped, degree p,
// n splines per axis), assembled as sparse matrices (gallery::variable_mass, variable_helmholtz)
// with the coefficient c(x, y, z) = 1 + 0.9 sin(2πx) sin(2πy) sin(2πz), which varies by 19x:
//   mass:      ∫ c u v                        preconditioned by nothing, Jacobi, and the inverse
//                                             of M ⊗ M ⊗ M (the constant-coefficient mass matrix);
//   Helmholtz: ∫ c (∇u·∇v + σ u v), σ = 1     preconditioned by Jacobi and the inverse of the
//                                             Kronecker sum K⊗M⊗M + M⊗K⊗M + M⊗M⊗K + σ M⊗M⊗M
//                                             (fast diagonalisation).
// Each is solved by CG to rtol = 1e-10 from x = 0 with b = 1 (every entry one). The program
// prints the iterations, the set-up time (compile_krylov: the preconditioner factored or
// diagonalised, the workspace allocated), the solve time, and the true relative residual, on host
// tensors and, when the example is built with a device runtime (the CPU device in kronex's own
// build), on device tensors.
//
//   ./build/release/examples/precondition [n] [degree] [--write DIR]     (defaults: 24 2)
//
// --write DIR also writes the two operators as DIR/mass.mtx and DIR/helmholtz.mtx, for the same
// experiment as kronex programs (examples/precondition/*.kx, run in DIR with --set n=N; degree 2).
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>

#include <kronex/kronex.hpp>
#ifdef KRONEX_EXAMPLE_DEVICE
#include <kronex/device.hpp>
#endif

namespace {

using clock_type = std::chrono::steady_clock;
using tensor = xt::xtensor<double, 3>;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// A as a Matrix Market coordinate file, with every digit a double needs.
void write_matrix_market(const kronex::sparse_operator<double>& A, const std::string& path) {
  std::ofstream out(path);
  out.precision(17);
  out << "%%MatrixMarket matrix coordinate real general\n" << A.size() << " " << A.size() << " " << A.nnz() << "\n";
  for (std::size_t i = 0; i < A.size(); ++i)
    for (std::size_t k = A.row_ptr()[i]; k < A.row_ptr()[i + 1]; ++k)
      out << i + 1 << " " << A.col_idx()[k] + 1 << " " << A.values()[k] << "\n";
  if (!out.flush()) throw std::runtime_error("precondition: cannot write " + path);
}

// One solve: compile the solver for operands like b (timed), solve once from x (timed), print.
template <class Tensor, class A, class... P>
void solve_once(const char* problem, const char* preconditioner, const char* backend, const Tensor& b, Tensor& x,
                const A& op, const P&... p) {
  kronex::krylov_options<double> opt;
  opt.rtol = 1e-10;
  auto t0 = clock_type::now();
  auto solver = kronex::compile_krylov(kronex::krylov_method::cg, op, p..., b, opt);
  const double setup = seconds_since(t0);
  t0 = clock_type::now();
  const kronex::krylov_result r = solver(b, x);
  const double solve = seconds_since(t0);
  std::printf("| %-9s | %-29s | %-10s | %5zu | %-9s | %8.4f | %8.4f | %9.2e |\n", problem, preconditioner, backend,
              r.iterations, kronex::to_string(r.status), setup, solve, r.relative_residual);
}

// One row of the table per backend: host tensors, then (when built with a device runtime)
// device tensors, where the whole solve runs on the device.
template <class A, class... P>
void run(const char* problem, const char* preconditioner, const A& op, const tensor& b, const P&... p) {
  tensor x = xt::zeros<double>(b.shape());
  solve_once(problem, preconditioner, "host", b, x, op, p...);
#ifdef KRONEX_EXAMPLE_DEVICE
  const kronex::device_tensor<double, 3> bd(b);
  kronex::device_tensor<double, 3> xd(tensor(xt::zeros<double>(b.shape())));
  const std::string backend = std::string("device ") + kronex::device::system_name();
  solve_once(problem, preconditioner, backend.c_str(), bd, xd, op, p...);
#endif
}

} // namespace

int main(int argc, char** argv) {
  std::size_t n = 24, p = 2, position = 0;
  std::string write_dir;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--write" && i + 1 < argc) write_dir = argv[++i];
    else if (position++ == 0) n = std::size_t(std::atoi(argv[i]));
    else p = std::size_t(std::atoi(argv[i]));
  }
  const double sigma = 1.0, pi = std::acos(-1.0);
  const kronex::shape_t shape{n, n, n};
  const auto c = [pi](const double* x) {
    return 1.0 + 0.9 * std::sin(2 * pi * x[0]) * std::sin(2 * pi * x[1]) * std::sin(2 * pi * x[2]);
  };

  auto t0 = clock_type::now();
  const auto mass = kronex::gallery::variable_mass<double>(shape, p, c);
  const auto helmholtz = kronex::gallery::variable_helmholtz<double>(shape, p, c, sigma);
  const double assembly = seconds_since(t0);
  const auto M = kronex::gallery::bspline_mass<double>(n, p);
  const auto K = kronex::gallery::bspline_stiffness<double>(n, p);

  if (!write_dir.empty()) {
    write_matrix_market(mass, write_dir + "/mass.mtx");
    write_matrix_market(helmholtz, write_dir + "/helmholtz.mtx");
  }
  const tensor b = xt::ones<double>({n, n, n});

  std::printf("kronex precondition: CG to rtol 1e-10 on a %zu^3 B-spline space of degree %zu (%zu unknowns, "
              "%zu nonzeros per operator; assembled in %.2f s)\n\n",
              n, p, mass.size(), mass.nnz(), assembly);
  std::printf("| problem   | preconditioner                | backend    | iter. | status    | set-up s | solve s  | true rel. residual |\n");
  std::printf("|---|---|---|---:|---|---:|---:|---:|\n");
  run("mass", "none", mass, b);
  run("mass", "Jacobi", mass, b, kronex::jacobi(mass));
  run("mass", "kron(M, M, M)^-1", mass, b, kronex::kron(M, M, M).inverse());
  run("Helmholtz", "Jacobi", helmholtz, b, kronex::jacobi(helmholtz));
  const auto L = kronex::kron(K, M, M) + kronex::kron(M, K, M) + kronex::kron(M, M, K) + sigma * kronex::kron(M, M, M);
  run("Helmholtz", "Kronecker sum^-1 (fast diag.)", helmholtz, b, L.inverse());
  return 0;
}
