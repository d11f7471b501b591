// The result bundle (--bundle DIR): a new folder with the command (redacted), versions,
// parameters, the minimal input, the last successful step, the first error, memory
// observations, the outputs and report.json: the comparison point before increasing load.
// Like the report file: an existing path is never touched; the folder appears whole or not at all.
#pragma once
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "contract/options.h"

namespace kd {

// Before the run: why DIR cannot be created, or nothing.
std::optional<std::string> check_new_folder(const std::string& path);

// The bundle's files (name -> content), from the finished report. Pure: unit-tested.
// input_spec: the --input file's JSON when given (the user's minimal input), else null.
std::map<std::string, std::string> bundle_files(const nlohmann::json& report, const Options& o, const nlohmann::json& input_spec);

// Writes the files into a temporary folder beside DIR, then renames it into place without
// replacing anything (RENAME_NOREPLACE). Returns the error.
std::optional<std::string> write_new_folder(const std::string& path, const std::map<std::string, std::string>& files);

}  // namespace kd
