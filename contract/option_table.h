// Every option of kernodeck-diagnostic (and of its `aggregate` command), once: one row says how it is typed, checked, shown in --help,
// recorded in the report's "requested" and the bundle's command.json, and carried to the worker in the
// run plan. Adding an option is adding a row (docs/architecture.md "Adding an option").
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "options.h"

namespace kd {

// The command a row belongs to: the diagnostic, or `kernodeck-diagnostic aggregate` (many machines' reports).
enum class Command { Diagnostic, Aggregate };

enum class Audience {
  User,      // in --help
  TestOnly,  // in --help, marked TEST ONLY: recorded in the report, never a diagnosis
  Internal,  // set by this tool for a process it starts; never in --help
};

struct OptionRow {
  Command command = Command::Diagnostic;
  std::string flag;         // "--timeout"; "" for a run-plan field that has no command-line form, or an operand
  std::string alias;        // "-v", or ""
  std::string metavar;      // "S"; "" for a switch (or a plan-only field)
  std::string help;         // --help's text; "" when the row is shown under another's (help_label)
  std::string help_label;   // --help's left column when not "flag metavar" (options shown together)
  Audience audience = Audience::User;
  bool repeatable = false;  // --extension: given more than once, in order
  bool operand = false;     // aggregate's REPORT|FOLDER...: every argument that is not an option
  bool to_worker = true;    // travels in the run plan (the supervisor's own, e.g. --output, do not)
  bool always_in_command = false;  // command.json names it even at its default (what the run checked)
  std::string placeholder;  // command.json shows this instead of the value, requested only that it was given
  std::string key;          // its name in the run plan
  std::string report_key;   // its name in the report's "requested"; "" when it makes no report (--version)
  std::string example;      // a valid value, for the tests that give every option once
  // Reads VALUE ("" for a switch) into o; the error completes "FLAG must be ...": e.g. "a fraction from 0 to 1".
  std::function<std::optional<std::string>(const std::string& value, Options& o)> read;
  std::function<nlohmann::json(const Options&)> get;         // the plan's typed value
  std::function<void(const nlohmann::json&, Options&)> set;  // throws nlohmann::json::exception on a wrong type
  std::function<nlohmann::json(const Options&)> report;      // requested's value (see defaults in the .cpp)
  std::function<std::vector<std::string>(const Options&)> arguments;  // as typed again, for command.json
};

const std::vector<OptionRow>& option_table();
// By flag or alias, among the command's rows; nullptr if none.
const OptionRow* find_option(const std::string& flag, Command command = Command::Diagnostic);
const OptionRow* operand_row(Command command);  // the row that takes the command's operands; nullptr if none

// The report's "requested": every row's report_key (the run's own gtest_environment_ignored is the caller's).
nlohmann::json requested_options(const Options& o);

// The command as given, for the bundle's command.json: paths and addresses replaced by placeholders.
std::vector<std::string> command_arguments(const Options& o);

extern const std::vector<std::string> kFaults;  // --inject-fault's kinds

}  // namespace kd
