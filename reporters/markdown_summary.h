// The report as a short Markdown page for CI job summaries (GitHub's $GITHUB_STEP_SUMMARY,
// a GitLab artifact): verdict, code, stage, next action, the layer table, device and
// versions. Pure: rendered from the report JSON alone, unit-tested on strings.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

std::string render_markdown_summary(const nlohmann::json& report);

// Text as literal Markdown inside a table cell: no markup, no HTML, no cell breaks.
std::string markdown_text(const std::string& text);

}  // namespace kd
