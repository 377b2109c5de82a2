#include "factor_source.hpp"

#include <sstream>

namespace kronex::python {

factor_source::factor_source(spec s, dtype t) : m_spec(std::move(s)), m_type(t) {}

std::size_t factor_source::size() const noexcept {
  return std::visit([](const auto& s) { return s.n; }, m_spec);
}

std::string factor_source::storage() const {
  return dsl::with_dtype(m_type, [&](auto zero) -> std::string {
    using T = decltype(zero);
    return std::visit([](const auto& f) -> std::string {
      using F = std::decay_t<decltype(f)>;
      if constexpr (std::is_same_v<F, banded<T>>) {
        std::ostringstream os;
        os << (f.periodic() ? "periodic banded" : "banded") << " (kl=" << f.lower() << ", ku=" << f.upper() << ")";
        return os.str();
      } else if constexpr (std::is_same_v<F, diagonal_factor<T>>) {
        return "diagonal";
      } else if constexpr (std::is_same_v<F, identity_factor>) {
        return "identity";
      } else if constexpr (std::is_same_v<F, function_solver<T>>) {
        return "function";
      } else {
        return "dense";
      }
    }, get<T>().get());
  });
}

std::string factor_source::repr() const {
  std::ostringstream os;
  os << "Factor(n=" << size() << ", " << storage() << ", " << dsl::to_string(m_type) << ")";
  return os.str();
}

} // namespace kronex::python
