// The verdict as a person reads it on the terminal: the layers, the verdict with its
// stage and next action, the LibTorch that was used. Colour only when asked (a TTY).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

// python_path: the --python interpreter as given; the terminal may show it, the report never does.
std::string render_terminal(const nlohmann::json& report, bool colour, const std::string& python_path = "");

}  // namespace kd
