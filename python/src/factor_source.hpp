#pragma once
// factor_source: a 1D factor as Python code hands it to kronex (a dense NumPy array, the entries
// of a SciPy sparse matrix, a gallery matrix, an identity), kept in the form it came in so that
// an operator can be compiled in any value type its operand asks for (a real factor in a complex
// solve): the any_factor<T> is built on first use in each value type, then reused. Factors are
// immutable once made; operators and compiled operators hold them by shared_ptr, which is what
// keeps a factor alive while anything compiled from it exists.
#include <array>
#include <complex>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include <kronex/factors/any_factor.hpp>
#include <kronex/factors/boundary.hpp>
#include <kronex/factors/from_entries.hpp>
#include <kronex/factors/gallery.hpp>

#include "core/dtype.hpp"

namespace kronex::python {

using dsl::dtype;
using value = std::complex<double>;  // every value type's entries, exactly

class factor_source {
public:
  // A dense n x n matrix, row-major.
  struct dense {
    std::size_t n = 0;
    std::vector<value> values;
  };
  // (row, col, value) entries: stored as factor_from_entries chooses (diagonal, banded, periodic
  // banded or dense: the narrowest storage that holds them).
  struct entries {
    std::size_t n = 0;
    std::vector<kronex::entry<value>> values;
  };
  // kronex::gallery::bspline_mass, bspline_stiffness or laplacian.
  struct gallery {
    enum class matrix { bspline_mass, bspline_stiffness, laplacian } which = matrix::bspline_mass;
    std::size_t n = 0, degree = 0;
    kronex::boundary bc = kronex::boundary::clamped;
  };
  struct identity {
    std::size_t n = 0;
  };
  using spec = std::variant<dense, entries, gallery, identity>;

  factor_source(spec s, dtype t);

  dtype type() const noexcept { return m_type; }
  std::size_t size() const noexcept;
  // The storage the factor gets: "dense", "banded (kl=1, ku=1)", "periodic banded (...)",
  // "diagonal", "identity".
  std::string storage() const;
  // As Python prints it: "Factor(n=64, banded (kl=3, ku=3), float64)".
  std::string repr() const;

  // The factor in value type T, built on first use (thread-safe). Its address is stable for the
  // source's lifetime: plans refer to it.
  template <class T>
  const any_factor<T>& get() const {
    auto& slot = std::get<std::unique_ptr<const any_factor<T>>>(m_built);
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!slot) slot = std::make_unique<const any_factor<T>>(build<T>());
    return *slot;
  }

private:
  template <class T>
  any_factor<T> build() const;

  spec m_spec;
  dtype m_type;
  mutable std::mutex m_mutex;
  mutable std::tuple<std::unique_ptr<const any_factor<float>>, std::unique_ptr<const any_factor<double>>,
                     std::unique_ptr<const any_factor<std::complex<float>>>,
                     std::unique_ptr<const any_factor<std::complex<double>>>>
      m_built;
};

namespace detail {
// v in value type T. Only called with a type that holds v: a factor is compiled in its own value
// type or a wider one (a complex factor never in a real type).
template <class T>
T narrow(const value& v) {
  if constexpr (value_traits<T>::is_complex) return T(typename T::value_type(v.real()), typename T::value_type(v.imag()));
  else return T(v.real());
}
} // namespace detail

template <class T>
any_factor<T> factor_source::build() const {
  return std::visit([](const auto& s) -> any_factor<T> {
    using S = std::decay_t<decltype(s)>;
    if constexpr (std::is_same_v<S, dense>) {
      xt::xtensor<T, 2> a = xt::xtensor<T, 2>::from_shape({s.n, s.n});
      for (std::size_t k = 0; k < s.values.size(); ++k) a.data()[k] = detail::narrow<T>(s.values[k]);
      return a;
    } else if constexpr (std::is_same_v<S, entries>) {
      std::vector<kronex::entry<T>> e;
      e.reserve(s.values.size());
      for (const auto& x : s.values) e.push_back({x.row, x.col, detail::narrow<T>(x.value)});
      return factor_from_entries<T>(s.n, e);
    } else if constexpr (std::is_same_v<S, gallery>) {
      switch (s.which) {
        case gallery::matrix::bspline_mass: return kronex::gallery::bspline_mass<T>(s.n, s.degree, s.bc);
        case gallery::matrix::bspline_stiffness: return kronex::gallery::bspline_stiffness<T>(s.n, s.degree, s.bc);
        case gallery::matrix::laplacian: break;
      }
      return kronex::gallery::laplacian<T>(s.n, s.bc);
    } else {
      return identity_factor(s.n);
    }
  }, m_spec);
}

} // namespace kronex::python
