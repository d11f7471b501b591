#include "terminal_reporter.h"

#include <fmt/color.h>
#include <fmt/format.h>

#include "report_text.h"

namespace kd {
namespace {

using nlohmann::json;
using text::str;

std::string paint(bool colour, fmt::terminal_color c, const std::string& text) {
  return colour ? fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text) : text;
}

std::string layer_line(const json& l, bool colour) {
  const std::string status = str(l, "status");
  const text::LayerCounts c = text::count_layer(l);
  const std::string detail = c.first_failure.empty() ? "" : "  " + c.first_failure;
  const auto colour_of = status == "passed"   ? fmt::terminal_color::green
                         : status == "failed" ? fmt::terminal_color::red
                                              : fmt::terminal_color::yellow;
  const std::string counts = c.total ? fmt::format(" ({}/{} passed)", c.passed, c.total) : "";
  return fmt::format("  {:<3} {:<20} {}{}{}\n", str(l, "id"), str(l, "title"),
                     paint(colour, colour_of, fmt::format("{:<8}", status)), counts, detail);
}

}  // namespace

std::string render_terminal(const json& r, bool colour) {
  std::string out = "\n";
  const json& req = r["requested"];
  out += fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", str(r["runtime"], "suite_version"), str(r, "run_id"),
                     text::target(req));
  out += "LibTorch: " + text::libtorch(r["pytorch"]) + "\n";
  if (r["device"].is_object()) out += "Device: " + text::device(r["device"]) + "\n";
  for (const auto& l : r["layers"])
    if (str(l, "status") != "not_run") out += layer_line(l, colour);

  const bool passed = str(r, "status") == "passed";
  const std::string verdict = fmt::format("{} (exit {})", str(r, "code"), r.value("exit_code", -1));
  out += fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (!passed && r["stage"].is_string()) out += fmt::format(" at stage {}", r["stage"].get<std::string>());
  out += "\n";
  if (r["error"].is_object() && !str(r["error"], "message", "").empty())
    out += fmt::format("  cause: {}\n", str(r["error"], "message"));
  if (passed && r["execution"].value("product_verified", false))
    out += fmt::format("  product and gradient verified on {}, loss {}\n", str(r["execution"], "device"),
                       r["execution"]["loss"].dump());
  out += fmt::format("  next:  {}\n", str(r, "next_action"));
  for (const auto& w : r["warnings"]) out += fmt::format("  warning: {}\n", w.get<std::string>());
  return out;
}

}  // namespace kd
