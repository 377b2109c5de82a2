#pragma once
// Plans as JSON (kronex explain --json): the same fields the printed plan shows, as numbers.
#include <nlohmann/json.hpp>

#include <kronex/plan/plan.hpp>

namespace kronex::dsl {

nlohmann::json to_json(const plan_description& p);

} // namespace kronex::dsl
