// The aggregate (reporters/aggregate.h) for people: a terminal summary and a Markdown page
// (e.g. for $GITHUB_STEP_SUMMARY). Pure: rendered from the aggregate JSON alone.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

// Ends with one line scripts can read: "Aggregate: PASSED (exit 0): ..." or "Aggregate: FAILED (exit N): ...".
std::string render_aggregate_terminal(const nlohmann::json& aggregate);

std::string render_aggregate_markdown(const nlohmann::json& aggregate);

}  // namespace kd
