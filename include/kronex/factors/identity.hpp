#pragma once
// kronex::identity(n): a factor that the plan compiler skips entirely (no step, no memory traffic).
#include <cstddef>

#include "../core/error.hpp"

namespace kronex {

class identity_factor {
public:
  explicit identity_factor(std::size_t n) : m_n(n) {
    if (n == 0) throw invalid_factor("kronex::identity: size n must be at least 1");
  }
  std::size_t size() const noexcept { return m_n; }

private:
  std::size_t m_n;
};

inline identity_factor identity(std::size_t n) { return identity_factor(n); }

} // namespace kronex
