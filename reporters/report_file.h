// Writes the JSON report to a new file only: an existing path (a symlink, a dangling
// one too) is never touched, and no partial file is ever left behind.
#pragma once
#include <optional>
#include <string>

namespace kd {

// Before the run: why FILE cannot be created, or nothing. Saves a run that could not be kept.
std::optional<std::string> check_new_file(const std::string& path);

// Writes content to a temporary file beside path, then link()s it into place, which
// fails when anything already exists there (a racing writer included). Returns the error.
std::optional<std::string> write_new_file(const std::string& path, const std::string& content);

}  // namespace kd
