// The run plan: what a process this tool starts (the worker, L4's batch job and shards, L5's range jobs,
// the CPU re-run) is to do, as one typed JSON document. The starting process writes it into a file of the
// run's own scratch folder and passes only `--kd-plan FILE`; the child reads the options from it instead
// of parsing a re-created command line. Its fields are the option table's keys (contract/option_table.h).
#pragma once
#include <optional>
#include <string>
#include <variant>

#include <nlohmann/json.hpp>

#include "options.h"

namespace kd {

inline constexpr int kPlanVersion = 1;

// {"plan_version": 1, "options": {key: value, ...}}: every row that travels to the worker.
nlohmann::json plan_document(const Options& o);

// The options a plan describes (a field it leaves out keeps its default); an error names the field of the
// wrong type.
std::variant<Options, std::string> options_from_plan(const nlohmann::json& plan);

// Writes the plan as a new file, mode 0600 (an existing file is never replaced); the error says why.
std::optional<std::string> write_plan(const Options& o, const std::string& path);
// content as a new file of this user's only (0600; an existing file or a link is never written through).
bool write_private_file(const std::string& path, const std::string& content);
std::variant<Options, std::string> read_plan(const std::string& path);

}  // namespace kd
