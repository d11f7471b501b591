// The verdict as a person reads it on the terminal: the layers, the verdict with its
// stage and next action, the LibTorch that was used. Colour only when asked (a TTY).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

struct TerminalView {
  bool colour = false;
  std::string python_path;  // the --python interpreter as given; the terminal may show it, the report never does
  bool header = true;       // the first line (suite, run id, target); false when it was printed as the run began
  bool layers = true;       // one line per layer; false when they were printed live as each layer finished
};

std::string render_terminal(const nlohmann::json& report, const TerminalView& view);
std::string render_terminal(const nlohmann::json& report, bool colour, const std::string& python_path = "");

// The pieces, for the live lines of a run in progress (reporters/live_layers.h) and for --quiet.
std::string render_header(const std::string& suite_version, const std::string& run_id, const std::string& target);
std::string render_layer_line(const nlohmann::json& layer, bool colour);  // a report "layers" item
std::string render_verdict_line(const nlohmann::json& report, bool colour);  // "Verdict: CODE (exit N) at stage S"

}  // namespace kd
