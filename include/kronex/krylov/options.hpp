#pragma once
// What a Krylov solve is asked (krylov_options) and what it reports (krylov_result), and the
// methods (krylov_method). docs/krylov.md describes them; the defaults are SciPy's
// (scipy.sparse.linalg, recent versions).
#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kronex {

enum class krylov_method { cg, bicgstab, gmres, minres };

inline const char* to_string(krylov_method m) {
  switch (m) {
    case krylov_method::cg: return "cg";
    case krylov_method::bicgstab: return "bicgstab";
    case krylov_method::gmres: return "gmres";
    case krylov_method::minres: return "minres";
  }
  return "?";
}
inline std::ostream& operator<<(std::ostream& os, krylov_method m) { return os << to_string(m); }

// R: the real type the tolerances are given in (double will do for every value type).
template <class R = double>
struct krylov_options {
  // Converged when the tested residual norm ||r|| <= max(rtol ||b||, atol) (docs/krylov.md).
  R rtol = R(1e-5);
  R atol = R(0);
  // Iterations at most (GMRES: inner iterations, over all restarts). Unset: 10 N for cg, bicgstab
  // and gmres, 5 N for minres, N the number of unknowns.
  std::optional<std::size_t> max_iterations;
  // GMRES: the Krylov subspace dimension between restarts (at most N).
  std::size_t restart = 20;
  // The convergence test every check_every iterations (and after the last allowed one): each
  // test copies one number to the host, the only transfer of an iteration on a device.
  std::size_t check_every = 1;
  // Keep the tested residual norm of every check in krylov_result::history.
  bool history = false;
};

enum class krylov_status {
  converged,                  // the tested residual norm met the tolerance
  max_iterations,             // max_iterations done without meeting it
  indefinite_operator,        // cg: p^H A p <= 0, A is not hermitian positive definite
  indefinite_preconditioner,  // cg: r^H M r <= 0; minres: r^H M r < 0: M is not positive definite
  breakdown_rho,              // bicgstab: rho = r0^H r = 0
  breakdown_alpha,            // bicgstab: r0^H v = 0, alpha undefined
  breakdown_omega,            // bicgstab: omega = t^H s / t^H t = 0
  non_finite,                 // a NaN or an infinity (in b, the residual, or a breakdown test)
};

inline const char* to_string(krylov_status s) {
  switch (s) {
    case krylov_status::converged: return "converged";
    case krylov_status::max_iterations: return "max_iterations";
    case krylov_status::indefinite_operator: return "indefinite_operator";
    case krylov_status::indefinite_preconditioner: return "indefinite_preconditioner";
    case krylov_status::breakdown_rho: return "breakdown_rho";
    case krylov_status::breakdown_alpha: return "breakdown_alpha";
    case krylov_status::breakdown_omega: return "breakdown_omega";
    case krylov_status::non_finite: return "non_finite";
  }
  return "?";
}
inline std::ostream& operator<<(std::ostream& os, krylov_status s) { return os << to_string(s); }

struct krylov_result {
  bool converged = false;
  krylov_status status = krylov_status::max_iterations;
  // The iteration whose check stopped the solve (0: the initial guess was tested and kept).
  std::size_t iterations = 0;
  // The true ||b - A x|| / ||b|| of the returned x, recomputed at exit (0 when b = 0).
  double relative_residual = 0;
  // With krylov_options::history: the tested residual norm ||r|| at every check, iteration 0
  // first.
  std::vector<double> history;
  // One line saying what happened, with the numbers.
  std::string message;
};

} // namespace kronex
