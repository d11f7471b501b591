#include "markdown_summary.h"

#include <cctype>
#include <string_view>

#include <fmt/format.h>

#include "load_text.h"
#include "report_text.h"

namespace kd {
namespace {

using nlohmann::json;

// Codes and stages are [A-Za-z0-9_.] by the schema: safe in a code span; anything else is text.
std::string code_span(const std::string& s) {
  if (s.empty()) return "—";
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') return markdown_text(s);
  return "`" + s + "`";
}

std::string row(const std::string& name, const std::string& value) { return fmt::format("| {} | {} |\n", name, value); }

std::string runtime_line(const json& r) {
  std::string line;
  for (const auto& f : {report::runtime_os_name, report::runtime_arch, report::runtime_libc, report::runtime_compiler})
    if (const std::string v = report::read(r, f).value_or(""); !v.empty()) line += (line.empty() ? "" : ", ") + v;
  return line.empty() ? "—" : markdown_text(line);
}

std::string device_line(const json& r) {
  if (const std::string d = text::device(r); !d.empty()) return markdown_text(d);
  return report::read(report::read(r, report::requested), report::requested_device) == "cpu" ? "not queried (CPU run)" : "—";
}

std::string layer_table(const json& layers) {
  std::string out = "| Layer | | Status | Tests passed | First failure |\n|---|---|---|---|---|\n";
  for (const auto& l : layers) {
    const text::LayerCounts c = text::count_layer(l);
    const std::string status = report::read(l, report::layer_status).value_or("?");
    out += fmt::format("| {} | {} | {} | {} | {} |\n", markdown_text(report::read(l, report::layer_id).value_or("?")),
                       markdown_text(report::read(l, report::layer_title).value_or("?")),
                       markdown_text(status == "not_run" ? "not run" : status), c.total ? fmt::format("{}/{}", c.passed, c.total) : "—",
                       c.first_failure.empty() ? "" : markdown_text(c.first_failure));
  }
  return out;
}

// --device-index all: each GPU's own verdict.
std::string device_table(const json& devices) {
  std::string out = "| GPU | Name | Verdict | Stage | Message |\n|---|---|---|---|---|\n";
  using report::read, report::to_value;
  for (const auto& d : devices)
    out += fmt::format("| {} | {} | {} (exit {}) | {} | {} |\n", to_value(read(d, report::gpu_index)).dump(),
                       markdown_text(read(d, report::gpu_name).value_or("")), code_span(read(d, report::gpu_code).value_or("")),
                       to_value(read(d, report::gpu_exit_code)).dump(), code_span(read(d, report::gpu_stage).value_or("")),
                       markdown_text(read(d, report::gpu_message).value_or("")));
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
  const bool passed = report::read(r, report::status) == "passed";
  const std::string code = report::read(r, report::code).value_or("");
  const std::string injected = text::injected_fault(r);
  std::string out = fmt::format("### kernodeck-diagnostic: {} {}{}\n\n", passed ? "✅" : "❌", code_span(code),
                                injected.empty() ? "" : " — " + markdown_text(injected));
  out += "| Field | Value |\n|---|---|\n";
  out += row("Verdict", fmt::format("{} (exit {}), {}{}", code_span(code), report::read(r, report::exit_code).value_or(-1),
                                    passed ? "passed" : "**failed**",
                                    injected.empty() ? "" : " — **" + markdown_text(injected) + "**"));
  out += row("Stage", code_span(report::read(r, report::stage).value_or("")));
  if (const auto gpu = report::read(r, report::device_index)) out += row("Failing GPU", std::to_string(*gpu));
  // As on the terminal: the error's first line, the recognised cause, the report's one next action.
  if (const std::string m = report::read(r, report::error_message).value_or(""); !m.empty()) out += row("Error", markdown_text(m));
  if (const auto cause = report::read(r, report::error_cause)) out += row("Cause", markdown_text(*cause));
  if (const auto id = report::read(r, report::error_signature)) out += row("Signature", code_span(*id));  // docs/signatures.md
  out += row("Next action", markdown_text(report::read(r, report::next_action).value_or("?")));
  if (const auto action = report::read(r, report::error_action)) out += row("Action", code_span(*action));  // fleets.md
  out += row("Target", markdown_text(text::target(report::read(r, report::requested))));
  if (const std::string v = text::verified(r); passed && !v.empty()) out += row("Check", markdown_text(v));
  out += row("Device", device_line(r));
  out += row("LibTorch", markdown_text(text::libtorch(r)));
  out += row("Runtime", runtime_line(r));
  out += row("Suite", fmt::format("kernodeck-conformance {}, run {}", markdown_text(text::suite_version(r)),
                                  code_span(report::read(r, report::run_id).value_or(""))));
  out += "\n" + layer_table(report::read(r, report::layers));
  if (const json& devices = report::read(r, report::devices); devices.is_array() && !devices.empty()) out += "\n" + device_table(devices);
  if (const std::vector<std::string> load = load_lines(r); !load.empty()) {  // L6 under load
    out += "\n**Under load (L6)**\n\n";
    for (const std::string& line : load) out += "- " + markdown_text(line) + "\n";
  }
  if (const auto warnings = report::read(r, report::warnings); warnings && !warnings->empty()) {
    out += "\n";
    for (const std::string& w : *warnings) out += "- ⚠️ " + markdown_text(w) + "\n";
  }
  return out;
}

}  // namespace kd
