// `kernodeck-diagnostic aggregate REPORT|FOLDER... [--output FILE] [--summary-md FILE]`: many
// machines' reports as one answer. Never loads LibTorch and never starts a worker.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "reporters/aggregate.h"
#include "contract/options.h"

namespace kd {

struct AggregateOptions {
  std::vector<std::string> inputs;        // report files and folders, in the order given
  std::optional<std::string> output;      // a new file for the aggregate JSON
  std::optional<std::string> summary_md;  // a new file for the Markdown page
};

using AggregateParseResult = std::variant<AggregateOptions, UsageError, HelpRequested>;

// Pure: args are what follows the word "aggregate".
AggregateParseResult parse_aggregate_command_line(const std::vector<std::string>& args);

// Each input as a source: a file is one report; a folder is every *.json file directly in it
// (sorted; hidden files, e.g. a writer's temporary file, and subfolders are not read).
std::vector<ReportSource> load_report_sources(const std::vector<std::string>& inputs);

// The whole command; returns its exit code (README "Using it on many machines").
int run_aggregate_command(const std::vector<std::string>& args);

std::string aggregate_usage_text();

}  // namespace kd
