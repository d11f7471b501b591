#include "markdown_summary.h"

#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "report_text.h"
#include "verdict/json_read.h"

namespace kd {
namespace {

using nlohmann::json;
using json_read::field;
using text::str;

// Codes and stages are [A-Za-z0-9_.] by the schema: safe in a code span; anything else is text.
std::string code_span(const json& j, const char* key) {
  const std::string s = str(j, key, "");
  if (s.empty()) return "—";
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return markdown_text(s);
  return "`" + s + "`";
}

std::string row(const std::string& name, const std::string& value) { return fmt::format("| {} | {} |\n", name, value); }

std::string runtime_line(const json& rt) {
  std::string line;
  for (const char* key : {"os_name", "arch", "libc", "compiler"})
    if (const std::string v = str(rt, key, ""); !v.empty()) line += (line.empty() ? "" : ", ") + v;
  return line.empty() ? "—" : markdown_text(line);
}

std::string device_line(const json& r) {
  if (r["device"].is_object()) return markdown_text(text::device(r["device"]));
  return str(r["requested"], "device") == "cpu" ? "not queried (CPU run)" : "—";
}

std::string layer_table(const json& layers) {
  std::string out = "| Layer | | Status | Tests passed | First failure |\n|---|---|---|---|---|\n";
  for (const auto& l : layers) {
    const text::LayerCounts c = text::count_layer(l);
    const std::string status = str(l, "status") == "not_run" ? "not run" : str(l, "status");
    out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_text(str(l, "id")), markdown_text(str(l, "title")),
                       markdown_text(status), c.total ? fmt::format("{}/{}", c.passed, c.total) : "—",
                       c.first_failure.empty() ? "" : markdown_text(c.first_failure));
  }
  return out;
}

// --device-index all: each GPU's own verdict.
std::string device_table(const json& devices) {
  std::string out = "| GPU | Name | Verdict | Stage | Message |\n|---|---|---|---|---|\n";
  for (const auto& d : devices)
    out += fmt::format("| {} | {} | {} (exit {}) | {} | {} |\n", field(d, "index").dump(),
                       markdown_text(str(d, "name", "")), code_span(d, "code"), field(d, "exit_code").dump(),
                       code_span(d, "stage"), markdown_text(str(d, "message", "")));
  return out;
}

}  // namespace

std::string markdown_text(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      out += ' ';
      continue;
    }
    if (std::string_view("\\`*_[]<>|~#&!").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string render_markdown_summary(const json& r) {
  const bool passed = str(r, "status") == "passed";
  std::string out = fmt::format("### kernodeck-diagnostic: {} {}\n\n", passed ? "✅" : "❌", code_span(r, "code"));
  out += "| Field | Value |\n|---|---|\n";
  out += row("Verdict", fmt::format("{} (exit {}), {}", code_span(r, "code"), r.value("exit_code", -1),
                                    passed ? "passed" : "**failed**"));
  out += row("Stage", code_span(r, "stage"));
  if (field(r, "device_index").is_number()) out += row("Failing GPU", r["device_index"].dump());
  // As on the terminal: the error's first line, the recognised cause, the report's one next action.
  const json& error = field(r, "error");
  if (!str(error, "message", "").empty()) out += row("Error", markdown_text(str(error, "message")));
  if (field(error, "cause").is_string()) out += row("Cause", markdown_text(str(error, "cause")));
  out += row("Next action", markdown_text(str(r, "next_action")));
  out += row("Target", markdown_text(text::target(r["requested"])));
  const json& ex = r["execution"];
  if (passed && ex.value("product_verified", false))
    out += row("Check", markdown_text(fmt::format("product and gradient verified on {}, loss {}", str(ex, "device"),
                                                  ex["loss"].dump())));
  out += row("Device", device_line(r));
  out += row("LibTorch", markdown_text(text::libtorch(r["pytorch"])));
  out += row("Runtime", runtime_line(r["runtime"]));
  out += row("Suite", fmt::format("kernodeck-conformance {}, run {}", markdown_text(str(r["runtime"], "suite_version")),
                                  code_span(r, "run_id")));
  out += "\n" + layer_table(r["layers"]);
  if (field(r, "devices").is_array() && !r["devices"].empty()) out += "\n" + device_table(r["devices"]);
  if (!r["warnings"].empty()) {
    out += "\n";
    for (const auto& w : r["warnings"]) out += "- ⚠️ " + markdown_text(w.is_string() ? w.get<std::string>() : w.dump()) + "\n";
  }
  return out;
}

}  // namespace kd
