// The aggregate document (schema/aggregate.schema.json) as types: built by aggregate_reports(), written as JSON,
// read back from JSON to be rendered. One place names its keys: aggregate_document.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd::fleet {

using Text = std::optional<std::string>;  // null: the report does not say

// One counted report.
struct Machine {
  std::string report, run_id, status, code;
  int exit_code = 0;
  Text layer, stage, message;  // the first failed layer, its stage, the error's message
  std::string target;
  Text device, libtorch, cuda, hip, driver, suite;
  std::optional<int64_t> rank, world_size;  // L8: this report's rank of its job
  Text action;                              // error.action: what automation does (null for a pass, or an older report)
};

// What the versions table shows: one value of the machines' with its label and what null means there.
struct VersionRow {
  const char* key;
  Text Machine::*value;
  const char* label;
  const char* none;
};
inline const VersionRow kVersionRows[] = {{"libtorch", &Machine::libtorch, "LibTorch", "not loaded"},
                                          {"cuda", &Machine::cuda, "CUDA", "none"},
                                          {"hip", &Machine::hip, "HIP", "none"},
                                          {"driver", &Machine::driver, "driver", "not reported (no --host-check)"},
                                          {"device", &Machine::device, "device", "none (CPU run or no GPU)"},
                                          {"suite", &Machine::suite, "suite", "not reported"}};

struct Seen {
  Text value;
  int count = 0;
};

struct CodeCount {
  std::string code;
  int exit_code = 0, count = 0;
};

// The failing machines by their error.action (verdict/actions.h), in the vocabulary's order; "unknown" last for a
// report that has none.
struct ActionCount {
  std::string action;
  bool node_at_fault = false;
  int count = 0;
};

struct NotCounted {
  std::string report, problem, message;
};

struct Injected {
  std::string report, run_id, fault, code;
};

struct RankRow {
  int64_t rank = 0;
  std::string report, status, code;
  Text stage;
};

// L8's job, when the reports are ranks of one.
struct Job {
  int64_t world_size = 0;
  int reported = 0;
  std::vector<int64_t> unreported_ranks;
  std::string status;
  std::optional<RankRow> first_failing;
  std::vector<RankRow> ranks;
};

struct Counts {
  int reports = 0, counted = 0, passed = 0, failed = 0, not_counted = 0, injected = 0;
};

struct Aggregate {
  std::string status;
  int exit_code = 0;
  Counts counts;
  std::vector<CodeCount> codes;
  std::vector<ActionCount> actions;
  std::vector<Machine> failing, machines;
  std::vector<NotCounted> not_counted;
  std::vector<Injected> injected;
  std::map<std::string, std::vector<Seen>> versions;  // by VersionRow::key
  std::optional<Job> job;
};

inline constexpr const char* kSchemaVersion = "1.3";  // what each version added: CHANGELOG.md

nlohmann::json to_json(const Aggregate& a);
// The document back from its JSON (ours: what to_json wrote, its strings maybe made printable); a field that is
// absent or of another type reads as empty.
Aggregate from_json(const nlohmann::json& j);

}  // namespace kd::fleet
