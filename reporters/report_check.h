// Is a JSON document a kernodeck report that `aggregate` can count? Checks what aggregation
// relies on (README "Using it on many machines"): the schema's major version, the verdict fields
// and their agreement, and the types of the facts it summarises. Fields it does not read are not
// checked, so a report from a newer 1.x minor version, with fields this build does not know, counts.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

// Why the report cannot be counted ("'exit_code' is 6 but 'code' GPU_CHECK_PASSED means 0"), or nothing.
std::optional<std::string> report_problem(const nlohmann::json& report);

}  // namespace kd
