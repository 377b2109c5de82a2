#pragma once
// What every Krylov method shares, written once over a Space (space.hpp): the tolerance from
// ||b||, the convergence checks (the one read per check), the exit with the true residual, and
// the small set of slots every method uses.
//
// A method is a struct with
//   template <class Space> static void run(control<Space>&)
//                               sets up its recurrences, iterates, and asks control.check(norm, k)
//                               at each due iteration whether to stop;
//   slot_count, vector_count    its workspace (its slots numbered from common_slots::count), or
//                               slots(settings), vectors(settings) when they depend on the options;
//   default_max_factor          max_iterations is this times N unless the options say.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstddef>
#include <sstream>
#include <string>

#include "options.hpp"
#include "space.hpp"

namespace kronex::krylov {

// krylov_options resolved for one method and one problem size.
struct settings {
  const char* method = "";
  double rtol = 1e-5, atol = 0;
  std::size_t max_iterations = 0;
  std::size_t restart = 20;
  std::size_t check_every = 1;
  bool history = false;
};

// Slots every solve uses; a method's own slots start at common_slots::count.
struct common_slots {
  static constexpr slot minus_one{0}, one{1}, zero{2}, scratch{3}, norm{4};
  static constexpr std::size_t count = 5;
};

template <class Space>
class control {
public:
  using vec = typename Space::vec;
  using cvec = typename Space::cvec;
  using map = typename Space::map;

  control(Space& s, const map& A, const map* P, cvec b, vec x, const settings& st, double tol, krylov_result& res)
      : m_s(s), m_A(A), m_P(P), m_b(b), m_x(x), m_settings(st), m_tol(tol), m_res(res) {}

  Space& space() noexcept { return m_s; }
  cvec b() const noexcept { return m_b; }
  vec x() const noexcept { return m_x; }
  const settings& options() const noexcept { return m_settings; }

  // y = A x.
  void apply(cvec x, vec y) { m_s.apply(m_A, x, y); }
  // M x into `out`, or x itself without a preconditioner (no copy).
  cvec precondition(cvec x, vec out) {
    if (!m_P) return x;
    m_s.apply(*m_P, x, out);
    return out;
  }
  // r = b - A x (x: the iterate).
  void residual(vec r) {
    m_s.apply(m_A, m_x, r);
    m_s.xpay(m_b, common_slots::minus_one, r);
  }

  // Whether iteration k is checked: every check_every iterations, and the last allowed one.
  bool due(std::size_t k) const noexcept { return k % m_settings.check_every == 0 || k >= m_settings.max_iterations; }

  // The convergence check after iteration k (0: the initial guess), on the residual norm in
  // `norm` (a real number >= 0 in the slot): one read. True when the solve stops: converged,
  // a breakdown flagged since the last check, a non-finite norm, or max_iterations reached.
  bool check(slot norm, std::size_t k) {
    const slot_value<typename Space::value_type> r = m_s.read(norm);
    const double n = double(std::real(r.value));
    if (m_settings.history) m_res.history.push_back(n);
    m_res.iterations = k;
    m_last_norm = n;
    if (!std::isfinite(n)) return stop(krylov_status::non_finite);
    if (n <= m_tol) {
      m_res.converged = true;
      return stop(krylov_status::converged);
    }
    if (r.breakdown) return stop(*r.breakdown);
    if (k >= m_settings.max_iterations) return stop(krylov_status::max_iterations);
    return false;
  }

  bool stopped_non_finite() const noexcept { return m_res.status == krylov_status::non_finite; }
  double last_norm() const noexcept { return m_last_norm; }
  double tolerance() const noexcept { return m_tol; }

private:
  bool stop(krylov_status s) {
    m_res.status = s;
    return true;
  }

  Space& m_s;
  const map& m_A;
  const map* m_P;
  cvec m_b;
  vec m_x;
  const settings& m_settings;
  double m_tol;
  krylov_result& m_res;
  double m_last_norm = 0;
};

// The one-line krylov_result::message.
inline std::string describe(const settings& st, const krylov_result& r, double norm, double tol) {
  std::ostringstream os;
  os.precision(3);
  os << st.method << ": ";
  switch (r.status) {
    case krylov_status::converged:
      os << "converged after " << r.iterations << " iterations: ||r|| = " << norm << " <= " << tol
         << " = max(rtol ||b||, atol)";
      break;
    case krylov_status::max_iterations:
      os << "not converged: max_iterations = " << st.max_iterations << " reached with ||r|| = " << norm << " > " << tol;
      break;
    case krylov_status::indefinite_operator:
      os << "breakdown: p^H A p <= 0, the operator is not hermitian positive definite";
      break;
    case krylov_status::indefinite_preconditioner:
      os << "breakdown: r^H M r " << (std::string(st.method) == "cg" ? "<= 0" : "< 0")
         << ", the preconditioner is not hermitian positive definite";
      break;
    case krylov_status::breakdown_rho: os << "breakdown: rho = r0^H r = 0"; break;
    case krylov_status::breakdown_alpha: os << "breakdown: r0^H v = 0 (alpha undefined)"; break;
    case krylov_status::breakdown_omega: os << "breakdown: omega = t^H s / t^H t = 0"; break;
    case krylov_status::non_finite:
      os << "stopped: a NaN or an infinity appeared (the operator, the preconditioner or b produced it)";
      break;
  }
  if (r.status != krylov_status::converged && r.status != krylov_status::max_iterations)
    os << " (found at the check after iteration " << r.iterations << ")";
  os << "; true ||b - A x|| / ||b|| = " << r.relative_residual;
  return os.str();
}

// One solve: ||b||, the method's iterations, then the true residual of the x returned. The
// workspace is the space's; `work` is a vector the method does not use (the final residual).
template <class Space>
krylov_result solve(Space& s, void (*method)(control<Space>&), const typename Space::map& A,
                    const typename Space::map* P, typename Space::cvec b, typename Space::vec x,
                    typename Space::vec work, const settings& st) {
  using T = typename Space::value_type;
  using C = common_slots;
  krylov_result res;
  s.reset();
  s.set(C::minus_one, T(-1));
  s.set(C::one, T(1));
  s.set(C::zero, T(0));
  s.dots({{b, b, C::scratch}});
  s.sqrt(C::norm, C::scratch);
  const double bnorm = double(std::real(s.read(C::norm).value));
  const double tol = std::max(st.rtol * bnorm, st.atol);
  if (!std::isfinite(bnorm)) {
    res.status = krylov_status::non_finite;
    res.relative_residual = bnorm;
    res.message = std::string(st.method) + ": ||b|| is not finite; nothing was done";
    return res;
  }
  if (bnorm == 0) {
    // SciPy's answer: x = 0, converged without iterating.
    s.zero(x);
    res.converged = true;
    res.status = krylov_status::converged;
    if (st.history) res.history.push_back(0.0);
    res.message = std::string(st.method) + ": b = 0, so x = 0 (converged without iterating)";
    return res;
  }
  control<Space> c(s, A, P, b, x, st, tol, res);
  method(c);
  // The true residual of the x returned, whatever stopped the iterations.
  s.reset();
  c.residual(work);
  s.dots({{work, work, C::scratch}});
  s.sqrt(C::norm, C::scratch);
  res.relative_residual = double(std::real(s.read(C::norm).value)) / bnorm;
  res.message = describe(st, res, c.last_norm(), tol);
  return res;
}

} // namespace kronex::krylov
