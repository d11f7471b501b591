// `kernodeck-diagnostic aggregate REPORT|FOLDER... [--output FILE] [--summary-md FILE]`: many
// machines' reports as one answer. Never loads LibTorch and never starts a worker.
#pragma once
#include <string>
#include <vector>

namespace kd {

struct ReportSource;  // reporters/aggregate.h (declared only, so that runner/main.cpp parses no JSON header)

// Each input as a source: a file is one report; a folder is every *.json file directly in it
// (sorted; hidden files, e.g. a writer's temporary file, and subfolders are not read).
std::vector<ReportSource> load_report_sources(const std::vector<std::string>& inputs);

// The whole command (its arguments: contract/options.h parse_aggregate_command_line); returns its exit code.
int run_aggregate_command(const std::vector<std::string>& args);

}  // namespace kd
