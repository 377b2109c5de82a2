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
#include <string>
#include <variant>
#include <vector>

#include <kronex/factors/any_factor.hpp>
#include <kronex/factors/boundary.hpp>
#include <kronex/factors/from_entries.hpp>
#include <kronex/factors/gallery.hpp>

#include "core/dtype.hpp"
#include "value_type_cache.hpp"

namespace kronex::python {

using dsl::dtype;
using value = std::complex<double>;  // every value type's entries, exactly

namespace detail {
// v in value type To. A complex value with an imaginary part has no real To: refused, never
// dropped (the package refuses such conversions before they get here).
template <class To, class From>
To convert_value(const From& v) {
  if constexpr (value_traits<To>::is_complex) {
    if constexpr (value_traits<From>::is_complex)
      return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
    else return To(typename To::value_type(v));
  } else {
    if constexpr (value_traits<From>::is_complex) {
      if (v.imag() != 0)
        throw invalid_factor("kronex: a complex factor entry with a nonzero imaginary part has no real value");
      return To(v.real());
    } else {
      return To(v);
    }
  }
}
template <class T>
T narrow(const value& v) { return convert_value<T>(v); }
} // namespace detail

// The same factor, in the same storage, in value type To.
template <class To, class From>
any_factor<To> convert_factor(const any_factor<From>& f) {
  return std::visit([](const auto& x) -> any_factor<To> {
    using F = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<F, identity_factor>) {
      return x;
    } else if constexpr (std::is_same_v<F, diagonal_factor<From>>) {
      std::vector<To> d;
      for (const From& v : x.values()) d.push_back(detail::convert_value<To>(v));
      return diagonal_factor<To>(std::move(d));
    } else if constexpr (std::is_same_v<F, banded<From>>) {
      banded<To> b(x.size(), x.lower(), x.upper(), x.boundary_condition());
      const long n = long(x.size());
      for (long i = 0; i < n; ++i)
        for (long d = -long(x.lower()); d <= long(x.upper()); ++d) {
          long j = i + d;
          if (x.periodic()) j = (j + n) % n;
          else if (j < 0 || j >= n) continue;
          b(std::size_t(i), std::size_t(j)) = detail::convert_value<To>(x(std::size_t(i), std::size_t(j)));
        }
      return b;
    } else if constexpr (std::is_same_v<F, xt::xtensor<From, 2>>) {
      xt::xtensor<To, 2> a = xt::xtensor<To, 2>::from_shape(x.shape());
      for (std::size_t k = 0; k < x.size(); ++k) a.data()[k] = detail::convert_value<To>(x.data()[k]);
      return a;
    } else {
      throw invalid_factor("kronex: a function factor cannot change its value type");
    }
  }, f.get());
}

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
  // Another factor's values in this source's value type (Python: kronex.factor(f, dtype)).
  struct converted {
    std::size_t n = 0;
    std::shared_ptr<const factor_source> from;
  };
  using spec = std::variant<dense, entries, gallery, identity, converted>;

  factor_source(spec s, dtype t);

  dtype type() const noexcept { return m_type; }
  std::size_t size() const noexcept;
  // The storage the factor gets: "dense", "banded (kl=1, ku=1)", "periodic banded (...)",
  // "diagonal", "identity".
  std::string storage() const;
  // As Python prints it: "Factor(n=64, banded (kl=3, ku=3), float64)".
  std::string repr() const;

  // The factor in value type T, built on first use (thread-safe). Its address is stable for the
  // source's lifetime: plans refer to it. Its values are those of the source's own value type,
  // converted: a float32 factor solved in float64 has its float32 values.
  template <class T>
  const any_factor<T>& get() const {
    return m_built.get<T>([&] {
      if (dsl::dtype_of<T>() == m_type) return build<T>();
      return dsl::with_dtype(m_type, [&](auto zero) { return convert_factor<T>(get<decltype(zero)>()); });
    });
  }

private:
  template <class T>
  any_factor<T> build() const;

  spec m_spec;
  dtype m_type;
  per_value_type<any_factor> m_built;
};

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
    } else if constexpr (std::is_same_v<S, identity>) {
      return identity_factor(s.n);
    } else {
      return dsl::with_dtype(s.from->type(), [&](auto zero) { return convert_factor<T>(s.from->template get<decltype(zero)>()); });
    }
  }, m_spec);
}

} // namespace kronex::python
