#include "exec/plan_json.hpp"

namespace kronex::dsl {

nlohmann::json to_json(const plan_description& p) {
  using nlohmann::json;
  json setup = json::array();
  for (const auto& f : p.setup) {
    json entry = {{"mode", f.mode}, {"factor", f.factor}, {"method", f.method}, {"result", f.result}};
    if (f.rcond >= 0) entry["rcond"] = f.rcond;
    setup.push_back(std::move(entry));
  }
  json steps = json::array();
  for (const step& st : p.steps) {
    const step_base& b = step_info(st);
    const step_kind k = kind_of(st);
    json s = {{"kind", to_string(k)}, {"method", step_method(st)}, {"view", b.view},
              {"view_strides", b.view_strides}, {"flops", b.flops}, {"bytes", b.bytes}};
    if (k != step_kind::copy && k != step_kind::exchange) {
      s["mode"] = b.mode;
      s["factor"] = b.factor;
      s["trans"] = std::string(1, trans_letter(b.trans));
    }
    if (fused_with_next(st)) s["fused_with_next"] = true;
    if (b.model_subst_s >= 0) s["model_seconds"] = {{"lu_subst", b.model_subst_s}, {"gemm", b.model_gemm_s}};
    if (step_transfers(st)) {
      s["transfers"] = step_transfers(st);
      s["transfer_bytes"] = step_transfer_bytes(st);
    }
    if (const auto* e = std::get_if<exchange_step>(&st)) {
      s["comm"] = e->comm;
      s["messages"] = e->messages;
      s["message_bytes"] = e->message_bytes;
      s["own_bytes"] = e->own_bytes;
      s["chunks"] = e->chunks;
      s["read_by_next"] = e->read_by_next;
    }
    steps.push_back(std::move(s));
  }
  json j = {{"backend", p.backend},           {"value_type", p.value_type}, {"expression", p.expression},
            {"shape", p.shape},               {"setup", setup},             {"steps", steps},
            {"flops", p.flops()},             {"bytes", p.bytes()},         {"workspace_bytes", p.workspace_bytes},
            {"factor_bytes", p.factor_bytes}, {"threads", p.threads},       {"instantiated", p.instantiated},
            {"text", to_string(p)}};
  if (p.counts_transfers) {
    j["transfers"] = {{"setup", p.setup_transfers}, {"setup_bytes", p.setup_transfer_bytes},
                      {"per_run", p.run_transfers()}, {"per_run_bytes", p.run_transfer_bytes()}};
  }
  return j;
}

} // namespace kronex::dsl
