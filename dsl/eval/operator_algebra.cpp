#include "eval/operator_algebra.hpp"

#include <algorithm>

#include "core/format.hpp"
#include "eval/evaluator.hpp"

namespace kronex::dsl {

namespace {

using inversion = kronex::detail::inversion;

// The normalised tree's kind and depth once the inversion is applied (operator_tree.hpp's
// invert and pseudo_invert): a sum inverted is an inverse_sum, a Kronecker product pseudo-
// inverted one too, one level deeper.
std::pair<tree_shape, std::size_t> normalised(const operator_value& v) {
  if (!v.combined()) return {tree_shape::kron, 1};
  tree_shape k = v.normal;
  std::size_t depth = v.nesting;
  switch (v.inversion.s) {
    case inversion::state::none:
    case inversion::state::undefined: break;
    case inversion::state::inverse:
      if (k == tree_shape::sum) k = tree_shape::inverse_sum;
      else if (k == tree_shape::inverse_sum) k = tree_shape::sum;
      break;
    case inversion::state::pseudo:
      if (k == tree_shape::kron) depth += 1;
      if (k == tree_shape::kron || k == tree_shape::sum) k = tree_shape::inverse_sum;
      break;
  }
  return {k, depth};
}

std::string sizes_text(const operator_value& v) { return format_shape(v.sizes()); }

void check_limits(const operator_value& v, const operator_site& s) {
  if (v.built > max_operator_terms) {
    throw dsl_error(s.at, "too many terms: this operator would hold " + std::to_string(v.built) +
                              " Kronecker products and combinations (each use of a name counts), the limit is " +
                              std::to_string(max_operator_terms));
  }
  if (normalised(v).second > max_operator_nesting) {
    throw dsl_error(s.at, "operator nested too deeply: sums inside compositions inside sums ... more than " +
                              std::to_string(max_operator_nesting) + " levels");
  }
}

// Same value type (untyped identities take the other's), as kron requires of its factors.
std::optional<dtype> common_type(const operator_value& a, const operator_value& b, const char* what,
                                 const operator_site& s) {
  if (a.type && b.type && *a.type != *b.type) {
    throw dsl_error(s.at, std::string(what) + " of operators with different value types: " + a.text + " is " +
                              to_string(*a.type) + ", " + b.text + " is " + to_string(*b.type) +
                              "; give their factors one value type");
  }
  return a.type ? a.type : b.type;
}

void check_sizes(const operator_value& a, const operator_value& b, const char* what, const operator_site& s) {
  if (a.sizes() != b.sizes()) {
    throw dsl_error(s.at, std::string(what) + " of operators with different sizes: " + a.text + " has sizes " +
                              sizes_text(a) + ", " + b.text + " has sizes " + sizes_text(b));
  }
}

std::shared_ptr<operator_value> combination(operator_form form, std::vector<operator_ptr> operands,
                                            const operator_site& s) {
  auto v = std::make_shared<operator_value>();
  v->form = form;
  v->text = s.text;
  v->where = s.where;
  v->combined_sizes = operands.front()->sizes();
  v->type = operands.front()->type;
  v->built = 1;
  for (const auto& o : operands) {
    v->built += o->built;
    v->has_assembled = v->has_assembled || o->has_assembled;
  }
  // The tree before any inversion: a scalar multiple is its operand's; sums (products) take in
  // the sums (products) among their operands (operator_tree.hpp's flatten).
  if (form == operator_form::scaled) {
    std::tie(v->normal, v->nesting) = normalised(*operands.front());
  } else {
    v->normal = form == operator_form::sum ? tree_shape::sum : tree_shape::product;
    v->nesting = 0;
    for (const auto& o : operands) {
      const auto [k, depth] = normalised(*o);
      v->nesting = std::max(v->nesting, k == v->normal ? depth : depth + 1);
    }
  }
  v->operands = std::move(operands);
  check_limits(*v, s);
  return v;
}

} // namespace

operator_ptr assembled_leaf(const std::shared_ptr<const assembled_value>& a) {
  auto v = std::make_shared<operator_value>();
  v->form = operator_form::assembled;
  v->assembled = a;
  v->has_assembled = true;
  v->type = a->type;
  v->text = a->text;
  v->where = a->where;
  v->combined_sizes = a->shape;
  return v;
}

[[noreturn]] void refuse_direct_solve(const operator_value& a, const char* what, const source_range& at) {
  throw dsl_error(at, std::string("cannot ") + what + " " + a.text + ": " +
                          (a.form == operator_form::assembled ? "an assembled operator has"
                                                              : "it has an assembled operator, which has") +
                          " no Kronecker structure to solve with (it is applied, not solved); use a Krylov solver: "
                          "cg(A, b [, P]), bicgstab, gmres or minres");
}

operator_ptr add(const operator_ptr& a, const operator_ptr& b, double sign, const operator_site& s) {
  const char* what = sign > 0 ? "the sum" : "the difference";
  check_sizes(*a, *b, what, s);
  const auto type = common_type(*a, *b, what, s);
  auto v = combination(operator_form::sum, {a, b}, s);
  v->coefs = {1.0, sign};
  v->type = type;
  return v;
}

operator_ptr scale(const operator_ptr& a, double c, const operator_site& s) {
  auto v = combination(operator_form::scaled, {a}, s);
  v->coefs = {c, 1.0};
  return v;
}

operator_ptr compose(const operator_ptr& a, const operator_ptr& b, const operator_site& s) {
  check_sizes(*a, *b, "the composition", s);
  const auto type = common_type(*a, *b, "the composition", s);
  auto v = combination(operator_form::product, {a, b}, s);
  v->type = type;
  return v;
}

operator_ptr with_method(const operator_ptr& a, op_method m, const operator_site& s) {
  auto v = std::make_shared<operator_value>(*a);
  v->text = s.text;
  v->where = s.where;
  switch (m) {
    case op_method::transpose: v->transform = compose_transpose(a->transform); break;
    case op_method::adjoint: v->transform = compose_adjoint(a->transform); break;
    case op_method::inverse:
      if (a->has_assembled) refuse_direct_solve(*a, "invert", s.at);
      v->inversion = a->inversion.inverted();
      if (v->inversion.s == inversion::state::undefined) {
        throw dsl_error(s.at, "the inverse of a pseudo-inverse is not defined: " + a->text +
                                  " is a pseudo-inverse; use the operator itself");
      }
      break;
  }
  return v;
}

operator_ptr pseudo_inverse(const operator_ptr& a, double rtol, const operator_site& s) {
  if (a->has_assembled) refuse_direct_solve(*a, "pseudo-invert", s.at);
  const tree_shape k = normalised(*a).first;
  const bool inverted_kron = !a->combined() && std::count(a->methods.begin(), a->methods.end(), op_method::inverse) % 2;
  if (k == tree_shape::product || k == tree_shape::inverse_sum || inverted_kron) {
    throw dsl_error(s.at, "pseudo_inverse is defined for sums of Kronecker products and Kronecker products; " +
                              a->text + " is " + (k == tree_shape::product ? "a composition" : "an inverse"));
  }
  if (!a->combined()) {
    // As kron_expr::pseudo_inverse: the pseudo-inverse of the one-term sum.
    auto v = combination(operator_form::scaled, {a}, s);
    v->inversion = inversion{}.pseudo_inverted(rtol);
    check_limits(*v, s);  // one level deeper once normalised
    return v;
  }
  auto v = std::make_shared<operator_value>(*a);
  v->text = s.text;
  v->where = s.where;
  v->inversion = a->inversion.pseudo_inverted(rtol);
  if (v->inversion.s == inversion::state::undefined) {
    throw dsl_error(s.at, "the pseudo-inverse of " + a->text + " is not defined: it is already an inverse or a "
                              "pseudo-inverse");
  }
  check_limits(*v, s);
  return v;
}

bool solvable(const operator_value& a) {
  return !a.combined() || a.inversion.inverted().s != inversion::state::undefined;
}

} // namespace kronex::dsl

namespace kronex::dsl {

operator_value::~operator_value() {
  // While a combination holds the only reference to an operand, take that operand's own
  // operands before letting it go, so no destructor finds anything nested (result_value's
  // destructor does the same for chains of results). Operators are built only as non-const
  // objects (make_shared<operator_value>), so the const_cast writes to a non-const one.
  std::vector<std::shared_ptr<const operator_value>> pending = std::move(operands);
  while (!pending.empty()) {
    std::shared_ptr<const operator_value> next = std::move(pending.back());
    pending.pop_back();
    if (next.use_count() != 1) continue;
    auto& link = const_cast<operator_value&>(*next);
    for (auto& o : link.operands) pending.push_back(std::move(o));
    link.operands.clear();
  }
}

} // namespace kronex::dsl
