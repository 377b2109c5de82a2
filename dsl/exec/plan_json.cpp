#include "exec/plan_json.hpp"

namespace kronex::dsl {

nlohmann::json to_json(const plan_description& p) {
  using nlohmann::json;
  json setup = json::array();
  for (const auto& f : p.setup) {
    setup.push_back({{"mode", f.mode}, {"factor", f.factor}, {"method", f.method}, {"result", f.result}});
  }
  json steps = json::array();
  for (const auto& st : p.steps) {
    json s = {{"kind", to_string(st.kind)}, {"method", st.method}, {"view", st.view},
              {"view_strides", st.view_strides}, {"flops", st.flops}, {"bytes", st.bytes}};
    if (st.kind != step_kind::copy && st.kind != step_kind::exchange) {
      s["mode"] = st.mode;
      s["factor"] = st.factor;
      s["trans"] = std::string(1, trans_letter(st.trans));
    }
    if (st.fused_with_next) s["fused_with_next"] = true;
    if (st.transfers) { s["transfers"] = st.transfers; s["transfer_bytes"] = st.transfer_bytes; }
    if (st.kind == step_kind::exchange) {
      s["comm"] = st.comm;
      s["messages"] = st.messages;
      s["message_bytes"] = st.message_bytes;
    }
    steps.push_back(std::move(s));
  }
  json j = {{"backend", p.backend},           {"value_type", p.value_type}, {"expression", p.expression},
            {"shape", p.shape},               {"setup", setup},             {"steps", steps},
            {"flops", p.flops()},             {"bytes", p.bytes()},         {"workspace_bytes", p.workspace_bytes},
            {"factor_bytes", p.factor_bytes}, {"text", to_string(p)}};
  if (p.counts_transfers) {
    j["transfers"] = {{"setup", p.setup_transfers}, {"setup_bytes", p.setup_transfer_bytes},
                      {"per_run", p.run_transfers()}, {"per_run_bytes", p.run_transfer_bytes()}};
  }
  return j;
}

} // namespace kronex::dsl
