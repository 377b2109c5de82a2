#pragma once
// factor_store: setup work that compiled operators share. Several operators compiled from the
// same factors (K.solve, then K^T.solve, then K.apply, ...) each factor and copy every factor
// again unless they are given one store (compile_options::store): then each banded or dense
// factor is factored once (the host's LU serves N, T and C solves alike), and each compiled form
// of it (a host row program per op, a device matrix per op) is built, or uploaded, once and held
// by every operator that uses it.
//
// A factor is known to the store by its storage (the address of its entries), kind, size, band
// and strides, not by its values: the factors must stay alive and unchanged while a store that
// has seen them is used. Drop the store (or clear() it) when they change. The store is what
// holds a factorization between compiles; compiled operators keep only the forms they run, so
// dropping the store after compiling frees the LU factors. Safe to share between threads.
#include <cstddef>
#include <memory>
#include <mutex>
#include <typeindex>
#include <utility>
#include <vector>

#include "../core/op.hpp"
#include "../factors/factor_view.hpp"

namespace kronex {

class factor_store {
public:
  // What is stored for a factor: its LU factors, or a backend's compiled form of op(A) or
  // op(A)^{-1} (host_gemm: the dense entries the host's GEMMs read, keyed by op::none or, for the
  // conjugated copy, op::conjugate).
  enum class form { lu, host_solve, host_apply, host_gemm, device_solve, device_apply };

  // Entries held, and how many lookups were answered by an entry already held (shared work).
  std::size_t size() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_entries.size();
  }
  std::size_t hits() const {
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_hits;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_entries.clear();
  }

  // The stored V for (factor f, form, trans), made by make() if there is none: the value and
  // whether it was shared (found). make() runs without the lock (it may itself use the store);
  // when two threads make the same entry at once, the first one stored wins.
  template <class V, class T, class Make>
  std::pair<std::shared_ptr<const V>, bool> get(const factor_view<T>& f, form what, op trans, Make&& make) {
    const key k = key_of(f, what, trans, typeid(V));
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      if (auto v = find(k)) {
        ++m_hits;
        return {std::static_pointer_cast<const V>(v), true};
      }
    }
    std::shared_ptr<const V> made = std::make_shared<const V>(make());
    std::lock_guard<std::mutex> lock(m_mutex);
    if (auto v = find(k)) return {std::static_pointer_cast<const V>(v), true};
    m_entries.push_back({k, made});
    return {made, false};
  }

private:
  struct key {
    const void* data;
    factor_kind kind;
    std::size_t n, kl, ku;
    boundary bc;
    std::ptrdiff_t row_stride, col_stride;
    form what;
    op trans;
    std::type_index type;  // of the stored value (which includes the factor's value type)

    bool operator==(const key& o) const {
      return data == o.data && kind == o.kind && n == o.n && kl == o.kl && ku == o.ku && bc == o.bc &&
             row_stride == o.row_stride && col_stride == o.col_stride && what == o.what && trans == o.trans &&
             type == o.type;
    }
  };
  struct entry {
    key k;
    std::shared_ptr<const void> value;
  };

  template <class T>
  static key key_of(const factor_view<T>& f, form what, op trans, std::type_index type) {
    return {f.data, f.kind, f.n, f.kl, f.ku, f.bc, f.row_stride, f.col_stride, what, trans, type};
  }

  // A linear search: a program has few distinct factors (one to a few per mode).
  std::shared_ptr<const void> find(const key& k) const {
    for (const entry& e : m_entries)
      if (e.k == k) return e.value;
    return nullptr;
  }

  mutable std::mutex m_mutex;
  std::vector<entry> m_entries;
  std::size_t m_hits = 0;
};

} // namespace kronex
