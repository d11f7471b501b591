// The run plan: what a process this tool starts is (its role: the worker, or a job that a step starts) and what it
// is to do, as one typed JSON document. The starting process writes it into a file of the run's own scratch folder
// and passes only `--kd-plan FILE`; the child reads it instead of parsing a re-created command line, and main()
// switches on its role. The options' fields are the option table's keys (contract/option_table.h).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "options.h"
#include "process_role.h"

namespace kd {

inline constexpr int kPlanVersion = 2;

// A planned role and what it needs besides the options.
struct Role {
  ProcessRole kind = ProcessRole::Worker;
  int event_fd = -1;               // the worker: its end of the supervisor's event pipe (a job's events go to stdout)
  std::string run_id;              // the worker: the supervisor's run id, which its markers carry
  bool across_devices = false;     // the worker: GPU 0's of --device-index all, which also splits L4 over every GPU
  std::string job_folder;          // the batch job: the private kd-resume-* folder its step made
  bool standby = false;            // the batch job: loads LibTorch, then waits for a word on stdin to begin
  double allocator_share = 0;      // a range job: its share of the caching allocator's cap
  std::vector<int64_t> shard_ids;  // a shard job: the input ids it computes
  nlohmann::json floors;           // the worker: --floors FILE's table, checked by the supervisor (verdict/floors.h)
};

struct Plan {
  Role role;
  Options options;
};

// {"plan_version": 2, "role": {...}, "options": {key: value, ...}}: the role, and every option row that travels.
nlohmann::json plan_document(const Plan& plan);

// The plan a document describes (an option it leaves out keeps its default); an error names the field of the
// wrong type.
std::variant<Plan, std::string> plan_from_document(const nlohmann::json& document);

// Writes the plan as a new file, mode 0600 (an existing file is never replaced); the error says why.
std::optional<std::string> write_plan(const Plan& plan, const std::string& path);
// content as a new file of this user's only (0600; an existing file or a link is never written through).
bool write_private_file(const std::string& path, const std::string& content);
std::variant<Plan, std::string> read_plan(const std::string& path);

}  // namespace kd
