#pragma once
// composite_plan<T, Ops>: a compiled operator_tree (sums, scalar multiples, compositions,
// inverses of sums), for any backend that provides the hooks below. Each Kronecker product in
// the tree is compiled by the backend's own plan (Ops::leaf_plan); the composite adds the
// combinations, and fast diagonalisation for inverses of sums (algebra/fast_diagonalisation.hpp):
// a transform by V^H (a Kronecker product of the eigenvector matrices, compiled like any other),
// the eigenvalue scaling, and the transform by V.
//
// Ops (one per backend and operand layout; backends/host/host_composite.hpp is the host's): an
// object made for the operand's (global) shape, holding what the backend needs (a
// communicator for distributed tensors). Tensors it handles are this process's part of the
// operand, local_size() values in the backend's memory.
//   shape(), local_size(), name()
//   leaf_plan, make_leaf(desc) -> unique_ptr<leaf_plan>, explain_leaf(desc) -> plan_description;
//                             a leaf plan has description() and run(b, x) (x may equal b)
//   buffer, allocate(), data(buffer&)   scratch tensors of local_size() values
//   axpy(a, x, y), scale(a, y), copy(x, y)
//   scaling_type, prepare_scaling(eigen_scaling), eigen_scale(scaling, x)
//   scaling_uploads(terms, axis_total)  host->device copies prepare_scaling makes: {count, bytes}
//   the pseudo-inverse's projections onto k rank-one tensors r_j (pseudo_projection):
//   rank_ones_type, prepare_rank_ones(r, G^{-1}) (r: [j][d][i_d], global), coefs_type,
//   allocate_coefs(k), projection_coefs(rs, x, c) (c = G^{-1} [r_j^H x]_j over the whole tensor),
//   subtract_rank_ones(rs, c, y) (y -= sum_j c_j r_j), projection_uploads(k) (host->device
//                             copies prepare_rank_ones makes on this block: {count, bytes}),
//                             reduction_transfers(k) (host<->device copies one
//                             projection_coefs makes: {count, bytes})
//   finish()                  called when run() is done (the device waits for its stream)
// and, optionally, for fast diagonalisation's two transforms:
//   make_fd_transforms(forward, backward, instantiate) -> fd_transforms<leaf_plan, Ops>: the
//                             transforms (compiled when instantiate) and their descriptions, and
//                             the hooks for the block the scaling and the eigenbasis projections
//                             run on when it is not the operand's (a distributed forward
//                             transform ends in its last layout, where the backward one starts).
//                             Without it: make_leaf / explain_leaf, all on the operand's block.
// Built in the phases every plan has: the check and plan phases (explain) read the factors'
// entries only to test separability; instantiation solves the eigenproblems, compiles the
// leaves and allocates the buffers; run() allocates nothing.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "../../algebra/fast_diagonalisation.hpp"
#include "../../plan/operator_tree.hpp"
#include "../../plan/plan.hpp"

namespace kronex::detail {

// Fast diagonalisation's transforms as an Ops' make_fd_transforms makes them.
template <class Leaf, class Ops>
struct fd_transforms {
  std::unique_ptr<Leaf> forward, backward;      // null when only planned (explain)
  plan_description forward_desc, backward_desc;
  std::optional<Ops> middle;  // the hooks for the block between them; none: the operand's block
};

template <class Ops, class T, class = void>
struct has_fd_transforms : std::false_type {};
template <class Ops, class T>
struct has_fd_transforms<Ops, T,
                         std::void_t<decltype(std::declval<const Ops&>().make_fd_transforms(
                             std::declval<const operator_desc<T>&>(), std::declval<const operator_desc<T>&>(), true))>>
    : std::true_type {};

// Whether a backend's composite plans run operators with no Kronecker structure (kind::flat: a
// sparse_operator or matrix_free, which act on the whole tensor). The host's hooks run their
// host actions (host_composite.hpp); the device's provide
//   flat_uploads(t) -> {count, bytes}   what instantiating the leaf uploads (a sparse_operator's
//                                        op(A) in CSR); throws for a leaf it cannot run
//   make_flat(t) -> function(x, y)       the leaf's action on the backend's buffers
// (has_flat_hooks). Elsewhere (distributed tensors) compiling such an expression is an error.
template <class Ops>
struct runs_flat_operators : std::false_type {};

template <class Ops, class T, class = void>
struct has_flat_hooks : std::false_type {};
template <class Ops, class T>
struct has_flat_hooks<Ops, T, std::void_t<decltype(std::declval<const Ops&>().make_flat(std::declval<const operator_tree<T>&>()))>>
    : std::true_type {};

template <class T, class Ops>
class composite_plan {
  using tree = operator_tree<T>;
  using kind = typename tree::kind;
  using leaf_plan = typename Ops::leaf_plan;

public:
  using value_type = T;

  // Check, plan and instantiate, for operands of the shape `ops` was made for.
  composite_plan(const tree& t, Ops ops) : m_ops(std::move(ops)), m_shape(m_ops.shape()) {
    m_desc = header(t, m_ops);
    std::size_t next = 0;
    m_root = build(t, t.options, m_ops, true, next, "", m_desc);
    m_desc.instantiated = true;
  }
  // For backends whose hooks need only the shape (host, device).
  composite_plan(const tree& t, const shape_t& shape) : composite_plan(t, Ops(shape)) {}

  // Check and plan only.
  static plan_description explain(const tree& t, const Ops& ops) {
    plan_description desc = header(t, ops);
    std::size_t next = 0;
    build(t, t.options, ops, false, next, "", desc);
    return desc;
  }
  static plan_description explain(const tree& t, const shape_t& shape) { return explain(t, Ops(shape)); }

  const plan_description& description() const noexcept { return m_desc; }
  const shape_t& shape() const noexcept { return m_shape; }
  const shape_t& global_shape() const noexcept { return m_shape; }
  // Exchanges one run makes (distributed leaves), as the plan lists them.
  std::size_t exchanges() const noexcept {
    std::size_t n = 0;
    for (const step& s : m_desc.steps) {
      const auto* e = std::get_if<exchange_step>(&s);
      n += e && e->how != exchange_step::method::local_copy ? 1 : 0;
    }
    return n;
  }

  // x = op(b) on C-order arrays of shape(); x may equal b.
  void run(const T* b, T* x) {
    run_node(*m_root, b, x, true);
    m_ops.finish();
  }

private:
  struct fd_node {
    std::unique_ptr<leaf_plan> forward, backward;
    std::unique_ptr<Ops> middle;     // the hooks for the block between the transforms (none: m_ops)
    typename Ops::buffer between;    // ... and the tensor there (with middle only)
    typename Ops::scaling_type scaling;
    std::size_t dropped = 0;  // k: the rank-one tensors projected out (a pseudo-inverse)
    typename Ops::rank_ones_type physical, eigenbasis;
    typename Ops::coefs_type coefs;  // the projection's k coefficients, in the backend's memory
  };
  struct node {
    kind what = kind::kron;
    T coef = T(1);
    std::unique_ptr<leaf_plan> leaf;
    std::vector<std::unique_ptr<node>> terms;
    std::unique_ptr<fd_node> fd;
    typename Ops::buffer acc, tmp;
    std::function<void(const T*, T*)> flat;  // kind::flat: op(A), out of place (tmp when in place)
  };

  static plan_description header(const tree& t, const Ops& ops) {
    const shape_t shape = ops.shape();
    check_shape(shape, t.sizes(), t.what == kind::inverse_sum ? "right-hand side" : "operand", shape_source::factors);
    plan_description d;
    d.backend = ops.name();
    d.value_type = value_traits<T>::name;
    d.expression = t.text();
    d.shape = shape;
    return d;
  }

  static double size_of(const shape_t& s) { return double(product(s)); }

  // A step over the whole tensor (combine, scale, project).
  template <class S>
  static S whole_step(const shape_t& shape, double flops, double passes, const std::string& part) {
    S s;
    s.view = {1, product(shape), 1};
    s.view_strides = {product(shape), 1, 1};
    s.flops = flops;
    s.bytes = passes * size_of(shape) * sizeof(T);
    s.part = part;
    return s;
  }

  static combine_step combine(const shape_t& shape, const T& c, bool accumulate, const std::string& part) {
    const double mul = value_traits<T>::is_complex ? 6.0 : 1.0, madd = value_traits<T>::is_complex ? 8.0 : 2.0;
    auto s = whole_step<combine_step>(shape, size_of(shape) * (accumulate ? madd : mul), accumulate ? 3 : 2, part);
    s.accumulate = accumulate;
    s.coef = format_coefficient(c);
    return s;
  }

  // The leaf plan's description merged in: factors renumbered from `first`, steps labelled.
  static void merge(const plan_description& leaf, std::size_t first, const std::string& part, const std::string& factor_prefix,
                    bool with_setup, plan_description& out) {
    if (with_setup)
      for (factor_setup f : leaf.setup) {
        f.name = factor_prefix + std::to_string(first + f.mode);
        out.setup.push_back(f);
      }
    for (step s : leaf.steps) {
      step_base& b = step_info(s);
      if (b.factor >= 0) {
        if (factor_prefix == "f") b.factor += long(first);
        else b.factor_name = factor_prefix + std::to_string(b.factor);
      }
      b.part = part;
      out.steps.push_back(s);
    }
    out.workspace_bytes += leaf.workspace_bytes;
    out.factor_bytes += leaf.factor_bytes;
    out.threads = std::max(out.threads, leaf.threads);  // the Kronecker products' steps are threaded
    out.counts_transfers = out.counts_transfers || leaf.counts_transfers;
    out.setup_transfers += leaf.setup_transfers;
    out.setup_transfer_bytes += leaf.setup_transfer_bytes;
  }

  static std::unique_ptr<leaf_plan> leaf_or_explain(const operator_desc<T>& d, const Ops& ops, bool inst,
                                                    std::size_t first, const std::string& part, const std::string& prefix,
                                                    bool with_setup, plan_description& out) {
    if (!inst) {
      merge(ops.explain_leaf(d), first, part, prefix, with_setup, out);
      return nullptr;
    }
    auto p = ops.make_leaf(d);
    merge(p->description(), first, part, prefix, with_setup, out);
    return p;
  }

  static std::string join(const std::string& part, const std::string& sub) {
    return part.empty() ? sub : part + ", " + sub;
  }

  // Builds node t (instantiated when inst), appending its setup and steps to desc.
  static std::unique_ptr<node> build(const tree& t, const compile_options& o, const Ops& ops, bool inst,
                                     std::size_t& next, const std::string& part, plan_description& desc) {
    const shape_t shape = ops.shape();
    auto n = inst ? std::make_unique<node>() : nullptr;
    if (n) {
      n->what = t.what;
      n->coef = t.coef;
    }
    const std::size_t N = ops.local_size();
    switch (t.what) {
      case kind::kron: {
        operator_desc<T> d = t.leaf;
        d.options = o;
        auto leaf = leaf_or_explain(d, ops, inst, next, part, "f", true, desc);
        if (n) n->leaf = std::move(leaf);
        next += t.leaf.factors.size();
        if (t.coef != T(1)) desc.steps.push_back(combine(shape, t.coef, false, part));
        break;
      }
      case kind::sum: {
        for (std::size_t k = 0; k < t.terms.size(); ++k) {
          const std::string p = join(part, "term " + std::to_string(k));
          tree term = t.terms[k];
          const T c = term.coef;
          term.coef = T(1);  // applied by the combination below, not by the term
          auto child = build(term, o, ops, inst, next, p, desc);
          if (n) {
            child->coef = c;
            n->terms.push_back(std::move(child));
          }
          if (k == 0) {
            if (c != T(1)) desc.steps.push_back(combine(shape, c, false, p));
          } else {
            desc.steps.push_back(combine(shape, c, true, p));
          }
        }
        if (n) {
          n->acc = ops.allocate();
          n->tmp = ops.allocate();
        }
        desc.workspace_bytes += 2 * N * sizeof(T);
        if (t.coef != T(1)) desc.steps.push_back(combine(shape, t.coef, false, part));
        break;
      }
      case kind::product: {
        // Applied last to first.
        std::vector<std::unique_ptr<node>> built(t.terms.size());
        for (std::size_t k = t.terms.size(); k-- > 0;)
          built[k] = build(t.terms[k], o, ops, inst, next, join(part, "factor " + std::to_string(k)), desc);
        if (n) n->terms = std::move(built);
        if (t.coef != T(1)) desc.steps.push_back(combine(shape, t.coef, false, part));
        break;
      }
      case kind::inverse_sum: {
        auto fd = build_fd(t, o, ops, inst, next, part, desc);
        if (n) n->fd = std::move(fd);
        break;
      }
      case kind::flat: {
        if constexpr (!runs_flat_operators<Ops>::value) {
          throw backend_unavailable(message("kronex: ", t.text(), " (an operator with no Kronecker structure) runs on "
                                            "host and device tensors only, not on the ", ops.name(), " backend"));
        } else {
          // A transpose the operator cannot give is refused here, when planning.
          std::function<void(const T*, T*)> f;
          if constexpr (has_flat_hooks<Ops, T>::value) {
            const auto uploads = ops.flat_uploads(t);
            desc.setup_transfers += uploads.first;
            desc.setup_transfer_bytes += uploads.second;
            desc.factor_bytes += uploads.second;
            if (n) f = ops.make_flat(t);
          } else {
            f = flat_function(t);
          }
          flat_step s = whole_step<flat_step>(shape, t.flat->flops, 0, part);
          s.bytes = t.flat->bytes;
          s.trans = t.flat_op;
          s.method = t.flat->method;
          s.name = t.text();
          desc.steps.push_back(s);
          desc.workspace_bytes += N * sizeof(T);
          if (n) {
            n->flat = std::move(f);
            n->tmp = ops.allocate();
          }
          if (t.coef != T(1)) desc.steps.push_back(combine(shape, t.coef, false, part));
        }
        break;
      }
    }
    return n;
  }

  static std::unique_ptr<fd_node> build_fd(const tree& t, const compile_options& o, const Ops& ops, bool inst,
                                           std::size_t& next, const std::string& part, plan_description& desc) {
    const shape_t shape = ops.shape();
    separable_sum<T> sum = analyse_separable(t);
    const std::size_t D = sum.axes.size();
    next += t.terms.size() * D;
    std::optional<fd_setup<T>> fd;
    if (inst) fd = make_fd_setup(t, sum, o);
    // Set-up lines: one per axis, then the eigenvalue sums.
    for (std::size_t d = 0; d < D; ++d) {
      const separable_axis<T>& a = sum.axes[d];
      factor_setup s;
      s.mode = d;
      s.name = "axis " + std::to_string(d);
      // The set-up's names when it ran (it may have swapped the roles), else the analysis's.
      const std::string& m = fd ? fd->axes[d].m_name : a.m_name;
      const std::string& k = fd ? fd->axes[d].k_name : a.k_name;
      s.factor = "M=" + (a.m_identity ? std::string("I") : m) + (a.has_k ? " K=" + k : std::string());
      if (!a.has_k) {
        s.method = "none (V=I)";
      } else {
        s.method = message(value_traits<T>::is_complex ? "hegv" : "sygv", " n=", a.n);
        if (fd) {
          const auto& l = fd->axes[d].lambda;
          s.result = "lambda in [" + format_rcond(double(l.front())) + ", " + format_rcond(double(l.back())) + "]";
        }
      }
      desc.setup.push_back(s);
      desc.factor_bytes += a.has_k ? a.n * a.n * sizeof(T) : 0;
    }
    factor_setup sums;
    sums.name = "sums";
    sums.factor = message("eigenvalue sums of ", t.terms.size(), " terms");
    sums.method = t.rtol >= 0 ? message("pseudo-inverse rtol=", t.rtol) : std::string("inverse");
    if (fd)
      sums.result = message("min |s|=", format_rcond(fd->min_abs), " at ", format_shape(fd->min_index), " max |s|=",
                            format_rcond(fd->max_abs));
    desc.setup.push_back(sums);

    // The transforms: Kronecker products of the V_d (identity where V = I), as apply plans.
    operator_desc<T> forward;
    for (std::size_t d = 0; d < D; ++d) {
      factor_view<T> v;
      v.n = sum.axes[d].n;
      if (!sum.axes[d].has_k) {
        v.kind = factor_kind::identity;
      } else {
        v.kind = factor_kind::dense;
        v.row_stride = std::ptrdiff_t(v.n);
        v.col_stride = 1;
        v.data = fd ? fd->axes[d].v.data() : nullptr;  // explain: entries unknown, counted as full
      }
      forward.factors.push_back(v);
    }
    // The user's threads, exchanges and pipelining; not the store, which knows factors by their
    // address: the V are this plan's, freed with it, and another plan's could reuse the address.
    forward.options = o;
    forward.options.store = nullptr;
    operator_desc<T> backward = forward;
    forward.trans = op::adjoint;
    const std::size_t k = fd ? fd->projection.rank() : 0;
    const std::string& p = part;
    auto make = inst ? std::make_unique<fd_node>() : nullptr;
    if (k > 0) desc.steps.push_back(project(ops, k, false, true, p));  // dots only: alpha = G^{-1} N^H b
    fd_transforms<leaf_plan, Ops> tr = transforms(ops, forward, backward, inst);
    const Ops& mid = tr.middle ? *tr.middle : ops;
    merge(tr.forward_desc, 0, p, "V", false, desc);
    if (k > 0) desc.steps.push_back(project(mid, k, true, false, p));
    eigen_scale_step es = whole_step<eigen_scale_step>(
        shape, size_of(shape) * double(t.terms.size()) * (value_traits<T>::is_complex ? 8.0 : 2.0), 2, p);
    es.terms = t.terms.size();
    es.dropped = k;
    desc.steps.push_back(es);
    if (k > 0) desc.steps.push_back(project(mid, k, true, true, p));
    merge(tr.backward_desc, 0, p, "V", false, desc);
    if (k > 0) desc.steps.push_back(project(ops, k, false, false, p));
    if (tr.middle) desc.workspace_bytes += tr.middle->local_size() * sizeof(T);
    std::size_t axis_total = 0;
    for (std::size_t n : shape) axis_total += n;
    desc.factor_bytes += sum.coefs.size() * (sizeof(T) + axis_total * sizeof(real_t<T>));  // the scaling's data
    const auto uploads = ops.scaling_uploads(sum.coefs.size(), axis_total);
    desc.setup_transfers += uploads.first;
    desc.setup_transfer_bytes += uploads.second;
    if (k > 0) {  // the rank-one tensors in both bases, each on its block
      for (const Ops* o : {&ops, &mid}) {
        const auto p_uploads = o->projection_uploads(k);
        desc.setup_transfers += p_uploads.first;
        desc.setup_transfer_bytes += p_uploads.second;
      }
      desc.factor_bytes += 2 * k * (axis_total + k) * sizeof(T);
    }
    if (!make) return make;
    make->forward = std::move(tr.forward);
    make->backward = std::move(tr.backward);
    make->scaling = mid.prepare_scaling(fd->scaling);
    make->dropped = k;
    if (k > 0) {
      make->physical = ops.prepare_rank_ones(fd->projection.physical, fd->projection.gram_inverse);
      make->eigenbasis = mid.prepare_rank_ones(fd->projection.eigenbasis, fd->projection.gram_inverse);
      make->coefs = ops.allocate_coefs(k);
    }
    if (tr.middle) {
      make->middle = std::make_unique<Ops>(std::move(*tr.middle));
      make->between = make->middle->allocate();
    }
    return make;
  }

  // The transforms by V^H and V: the Ops' own when it has them, else two leaves on the operand's block.
  static fd_transforms<leaf_plan, Ops> transforms(const Ops& ops, const operator_desc<T>& forward,
                                                  const operator_desc<T>& backward, bool inst) {
    if constexpr (has_fd_transforms<Ops, T>::value) {
      return ops.make_fd_transforms(forward, backward, inst);
    } else {
      fd_transforms<leaf_plan, Ops> r;
      if (inst) {
        r.forward = ops.make_leaf(forward);
        r.backward = ops.make_leaf(backward);
        r.forward_desc = r.forward->description();
        r.backward_desc = r.backward->description();
      } else {
        r.forward_desc = ops.explain_leaf(forward);
        r.backward_desc = ops.explain_leaf(backward);
      }
      return r;
    }
  }

  // dots: the step computing the coefficients (dot products summed over the whole tensor), not
  // the one subtracting the rank-one tensors.
  static project_step project(const Ops& ops, std::size_t k, bool eigenbasis, bool dots, const std::string& part) {
    const shape_t shape = ops.shape();
    auto s = whole_step<project_step>(shape, size_of(shape) * double(k) * (value_traits<T>::is_complex ? 8.0 : 2.0),
                                      double(k), part);
    s.rank = k;
    s.eigenbasis = eigenbasis;
    if (dots) {
      const auto t = ops.reduction_transfers(k);
      s.transfers = t.first;
      s.transfer_bytes = double(t.second);
    }
    return s;
  }

  void run_node(node& n, const T* b, T* x, bool with_coef) {
    switch (n.what) {
      case kind::kron:
        n.leaf->run(b, x);
        if (with_coef && n.coef != T(1)) m_ops.scale(n.coef, x);
        return;
      case kind::flat:
        if (x == b) {  // the action is out of place
          n.flat(b, m_ops.data(n.tmp));
          m_ops.copy(m_ops.data(n.tmp), x);
        } else {
          n.flat(b, x);
        }
        if (with_coef && n.coef != T(1)) m_ops.scale(n.coef, x);
        return;
      case kind::sum: {
        T* out = x == b ? m_ops.data(n.acc) : x;
        T* tmp = m_ops.data(n.tmp);
        for (std::size_t k = 0; k < n.terms.size(); ++k) {
          node& c = *n.terms[k];
          if (k == 0) {
            run_node(c, b, out, false);
            if (c.coef != T(1)) m_ops.scale(c.coef, out);
          } else {
            run_node(c, b, tmp, false);
            m_ops.axpy(c.coef, tmp, out);
          }
        }
        if (with_coef && n.coef != T(1)) m_ops.scale(n.coef, out);
        if (out != x) m_ops.copy(out, x);
        return;
      }
      case kind::product: {
        const T* src = b;
        for (std::size_t k = n.terms.size(); k-- > 0;) {
          run_node(*n.terms[k], src, x, true);
          src = x;
        }
        if (with_coef && n.coef != T(1)) m_ops.scale(n.coef, x);
        return;
      }
      case kind::inverse_sum: {
        fd_node& f = *n.fd;
        const bool project = f.dropped > 0;
        if (project) m_ops.projection_coefs(f.physical, b, f.coefs);  // G^{-1} N^H b, before b may be overwritten
        // Between the transforms: x itself, or the tensor on the middle block.
        Ops& mid = f.middle ? *f.middle : m_ops;
        T* y = f.middle ? mid.data(f.between) : x;
        f.forward->run(b, y);
        if (project) mid.subtract_rank_ones(f.eigenbasis, f.coefs, y);
        mid.eigen_scale(f.scaling, y);  // includes the inverse's coefficient
        if (project) mid.projection_coefs(f.eigenbasis, y, f.coefs);
        f.backward->run(y, x);
        if (project) m_ops.subtract_rank_ones(f.physical, f.coefs, x);
        return;
      }
    }
  }

  Ops m_ops;
  shape_t m_shape;
  plan_description m_desc;
  std::unique_ptr<node> m_root;
};

} // namespace kronex::detail
