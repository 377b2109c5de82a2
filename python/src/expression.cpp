#include "expression.hpp"

#include <algorithm>

namespace kronex::python {

namespace {
void check_same_sizes(const expression& a, const expression& b, const char* what) {
  if (a.sizes() != b.sizes())
    throw dimension_mismatch(kronex::detail::message("kronex: ", what, " of operators with different sizes: ",
                                                     kronex::detail::format_shape(a.sizes()), " and ", kronex::detail::format_shape(b.sizes())));
}
} // namespace

expression_ptr expression::kron(std::vector<factor_ptr> factors, dtype t) {
  if (factors.empty() || factors.size() > max_factors)
    throw invalid_operator(kronex::detail::message("kronex: kron() takes 1 to ", max_factors, " factors, got ",
                                                   factors.size()));
  shape_t sizes;
  for (const auto& f : factors) sizes.push_back(f->size());
  auto e = std::shared_ptr<expression>(new expression(form::kron, t, std::move(sizes)));
  e->m_factors = std::move(factors);
  return e;
}

expression_ptr expression::sparse(std::shared_ptr<const sparse_source> a) {
  auto e = std::shared_ptr<expression>(new expression(form::sparse, a->type(), a->shape()));
  e->m_sparse = std::move(a);
  return e;
}

expression_ptr expression::scaled(const expression_ptr& a, value c) {
  auto e = std::shared_ptr<expression>(new expression(form::scaled, a->m_type, a->m_sizes));
  if (a->m_form == form::scaled) {  // c (d A) = (c d) A: one node
    e->m_operands = a->m_operands;
    e->m_coefs = {c * a->m_coefs.front()};
  } else {
    e->m_operands = {a};
    e->m_coefs = {c};
  }
  return e;
}

expression_ptr expression::sum(const expression_ptr& a, const expression_ptr& b, value c) {
  check_same_sizes(*a, *b, "the sum");
  auto e = std::shared_ptr<expression>(new expression(form::sum, a->m_type, a->m_sizes));
  if (a->m_form == form::sum) {
    e->m_operands = a->m_operands;
    e->m_coefs = a->m_coefs;
  } else {
    e->m_operands = {a};
    e->m_coefs = {value(1)};
  }
  e->m_operands.push_back(b);
  e->m_coefs.push_back(c);
  return e;
}

expression_ptr expression::product(const expression_ptr& a, const expression_ptr& b) {
  check_same_sizes(*a, *b, "the composition");
  auto e = std::shared_ptr<expression>(new expression(form::product, a->m_type, a->m_sizes));
  for (const expression_ptr& x : {a, b}) {
    if (x->m_form == form::product) e->m_operands.insert(e->m_operands.end(), x->m_operands.begin(), x->m_operands.end());
    else e->m_operands.push_back(x);
  }
  return e;
}

expression_ptr expression::method(const expression_ptr& a, form m, double rtol) {
  if (m == form::pseudo_inverse && !(rtol >= 0))
    throw invalid_operator(kronex::detail::message("kronex: pseudo_inverse needs a relative tolerance >= 0, got ", rtol));
  // Twice the same involution is the operator itself: A.T.T is A (no node per call in a loop).
  if (m != form::pseudo_inverse && a->m_form == m) return a->m_operands.front();
  auto e = std::shared_ptr<expression>(new expression(m, a->m_type, a->m_sizes));
  e->m_operands = {a};
  e->m_rtol = rtol;
  return e;
}

expression_ptr expression::as_type(const expression_ptr& a, dtype t) {
  auto e = std::make_shared<expression>(*a);
  e->m_type = t;
  return e;
}

std::vector<factor_ptr> expression::factors() const {
  std::vector<factor_ptr> out;
  std::vector<const expression*> todo{this};
  while (!todo.empty()) {
    const expression* e = todo.back();
    todo.pop_back();
    for (const auto& f : e->m_factors)
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
    for (const auto& o : e->m_operands) todo.push_back(o.get());
  }
  return out;
}

std::string expression::text() const {
  return dsl::with_dtype(m_type, [&](auto zero) {
    using T = decltype(zero);
    return tree<T>().text();
  });
}

} // namespace kronex::python
