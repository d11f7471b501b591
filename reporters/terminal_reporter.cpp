#include "terminal_reporter.h"

#include <fmt/color.h>
#include <fmt/format.h>

namespace kd {
namespace {

using nlohmann::json;

std::string str(const json& j, const char* key, const char* fallback = "?") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

// The report's facts come from the worker: a value of an unexpected type reads as absent.
bool is_true(const json& j, const char* key) { return j.contains(key) && j[key] == true; }
double number(const json& j, const char* key) { return j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0; }

std::string paint(bool colour, fmt::terminal_color c, const std::string& text) {
  return colour ? fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text) : text;
}

std::string libtorch_line(const json& pt) {
  if (!is_true(pt, "loaded")) return "LibTorch: not loaded";
  const std::string backend = str(pt, "backend", "none");
  std::string kind = backend == "cuda"   ? fmt::format("CUDA {} build", str(pt, "cuda_compiled"))
                     : backend == "rocm" ? fmt::format("ROCm/HIP {} build", str(pt, "hip_compiled"))
                                         : "CPU-only build";
  return fmt::format("LibTorch: {} ({}, found via {})", str(pt, "version"), kind, str(pt, "source"));
}

std::string layer_line(const json& l, bool colour) {
  const std::string status = str(l, "status");
  int passed = 0, total = 0;
  std::string detail;
  for (const auto& t : l["tests"]) {
    ++total;
    if (str(t, "status") == "passed") ++passed;
    if (str(t, "status") == "failed" && detail.empty())
      detail = fmt::format("  {} at {}", str(t, "code"), str(t, "stage"));
  }
  const auto colour_of = status == "passed"   ? fmt::terminal_color::green
                         : status == "failed" ? fmt::terminal_color::red
                                              : fmt::terminal_color::yellow;
  const std::string counts = total ? fmt::format(" ({}/{} passed)", passed, total) : "";
  return fmt::format("  {:<3} {:<20} {}{}{}\n", str(l, "id"), str(l, "title"),
                     paint(colour, colour_of, fmt::format("{:<8}", status)), counts, detail);
}

}  // namespace

std::string render_terminal(const json& r, bool colour) {
  std::string out = "\n";
  const json& req = r["requested"];
  const std::string target = str(req, "device") == "cpu" ? "cpu" : fmt::format("cuda:{}", req["device_index"].dump());
  out += fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", str(r["runtime"], "suite_version"), str(r, "run_id"),
                     target);
  out += libtorch_line(r["pytorch"]) + "\n";
  if (r["device"].is_object())
    out += fmt::format("Device: {} (compute capability {}, {:.1f} GiB)\n", str(r["device"], "name"),
                       str(r["device"], "capability"),
                       number(r["device"], "total_memory_bytes") / (1024.0 * 1024 * 1024));
  for (const auto& l : r["layers"])
    if (str(l, "status") != "not_run") out += layer_line(l, colour);

  const bool passed = str(r, "status") == "passed";
  const std::string verdict = fmt::format("{} (exit {})", str(r, "code"), r.value("exit_code", -1));
  out += fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (!passed && r["stage"].is_string()) out += fmt::format(" at stage {}", r["stage"].get<std::string>());
  out += "\n";
  if (r["error"].is_object() && !str(r["error"], "message", "").empty())
    out += fmt::format("  cause: {}\n", str(r["error"], "message"));
  if (passed && is_true(r["execution"], "product_verified"))
    out += fmt::format("  product and gradient verified on {}, loss {}\n", str(r["execution"], "device"),
                       r["execution"]["loss"].dump());
  out += fmt::format("  next:  {}\n", str(r, "next_action"));
  for (const auto& w : r["warnings"]) out += fmt::format("  warning: {}\n", w.get<std::string>());
  return out;
}

}  // namespace kd
