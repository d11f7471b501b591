// L6 under load in words: one line each for the host link, the sustained load and its results, and the memory
// integrity pass, as the terminal's L6 section and the Markdown summary show them. Pure: read from the report.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd {

std::vector<std::string> load_lines(const nlohmann::json& report);

}  // namespace kd
