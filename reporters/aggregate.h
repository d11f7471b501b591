// Many machines' reports as one answer (README "Using it on many machines"): counts per code,
// the failing machines with layer and stage, the versions seen, and every report that could not
// be counted, named with why. Pure: the command (runner/aggregate_command.cpp) reads the files.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "aggregate_document.h"

namespace kd {

// Exit codes of `aggregate` (reserved: no verdict code uses them). Scripts can tell "a machine
// failed" from "a report is missing or bad" from both.
inline constexpr int kFleetMachineFailed = 20, kFleetReportNotCounted = 21, kFleetBoth = 22;

// One report as the command found it: parsed JSON, or why there is none.
struct ReportSource {
  enum class Problem { None, Missing, Unreadable, Invalid };
  std::string name;      // how the user named it: the path given, or FOLDER/FILE
  Problem problem = Problem::None;
  std::string message;   // why, when problem != None
  nlohmann::json report; // when problem == None: checked by aggregate_reports() itself
};

// The aggregate (schema/aggregate.schema.json). Each source is checked with report_problem(); a run_id seen before
// is a duplicate, counted once.
fleet::Aggregate aggregate(const std::vector<ReportSource>& sources);
// The same as its JSON document.
nlohmann::json aggregate_reports(const std::vector<ReportSource>& sources);

}  // namespace kd
