// Writes the JSON report to a new file only: an existing path (a symlink, a dangling
// one too) is never touched, and no partial file is ever left behind.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kd {

// Before the run: why FILE cannot be created, or nothing. Saves a run that could not be kept.
// Two of the outputs (name, path: "--output", "r.json") that are one path once normalized
// ("x" and "./x", or through a linked folder): why, naming both options; or nothing.
std::optional<std::string> same_output_paths(const std::vector<std::pair<std::string, std::string>>& outputs);
std::optional<std::string> check_new_file(const std::string& path);

// Writes content to a temporary file beside path, then link()s it into place, which
// fails when anything already exists there (a racing writer included). Returns the error.
std::optional<std::string> write_new_file(const std::string& path, const std::string& content);

}  // namespace kd
