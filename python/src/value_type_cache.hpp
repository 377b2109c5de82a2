#pragma once
// per_value_type<Slot>: one Slot<T> for each of kronex's four value types, built on first use and
// kept (thread-safe). What factor_source and sparse_source hold: the form Python handed them,
// built in whichever value type an operand asks for. A build runs outside the lock (it may read
// another value type's slot of the same owner); if two threads build at once, the first one kept
// wins. A slot's address is stable for the owner's lifetime: plans refer to it.
#include <complex>
#include <mutex>
#include <optional>
#include <tuple>

namespace kronex::python {

template <template <class> class Slot>
class per_value_type {
public:
  template <class T, class Build>
  const Slot<T>& get(Build&& build) const {
    auto& slot = std::get<std::optional<Slot<T>>>(m_slots);
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (slot) return *slot;
    }
    Slot<T> made = build();
    std::lock_guard<std::mutex> lock(m_mutex);
    if (!slot) slot.emplace(std::move(made));
    return *slot;
  }

private:
  mutable std::mutex m_mutex;
  mutable std::tuple<std::optional<Slot<float>>, std::optional<Slot<double>>, std::optional<Slot<std::complex<float>>>,
                     std::optional<Slot<std::complex<double>>>>
      m_slots;
};

} // namespace kronex::python
