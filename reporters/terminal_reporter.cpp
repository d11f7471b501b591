#include "terminal_reporter.h"

#include <algorithm>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>

#include "report_text.h"

namespace kd {
namespace {

using nlohmann::json;
using text::field;
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

std::string host_line(const json& h) {
  const std::string status = str(h, "status");
  if (status != "ok") {
    const std::string why = field(h, "message").is_string() ? ": " + field(h, "message").get<std::string>() : "";
    return fmt::format("Host (nvidia-smi): {}{}\n", status == "absent" ? "not installed" : status, why);
  }
  const size_t n = field(h, "gpus").size();
  std::string out = fmt::format("Host (nvidia-smi): {} GPU{}", n, n == 1 ? "" : "s");
  for (const auto& g : field(h, "gpus"))
    out += fmt::format(", driver {} with {} MiB", str(g, "driver_version"), field(g, "memory_total_mib").dump());
  return out + "\n";
}

std::string python_line(const json& p, const std::string& path) {
  const std::string who = path.empty() ? "Python" : fmt::format("Python ({})", path);
  if (str(p, "import") != "ok") return fmt::format("{} {}: import torch {}\n", who, str(p, "version"), str(p, "import"));
  const std::string cuda = field(p, "cuda").is_string() ? "CUDA " + field(p, "cuda").get<std::string>() : "no CUDA";
  return fmt::format("{} {}: torch {} ({})\n", who, str(p, "version"), str(p, "torch_version"), cuda);
}

std::string number(const json& v, const char* format = "{:.3g}") {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : "-";
}

// L6: the compute segment (cold apart from warm) and one line per device ceiling.
std::string timing_lines(const json& t) {
  std::string out;
  const json& seg = field(t, "segments");
  if (seg.is_object()) {
    const json& warm = field(seg, "warm");
    out += fmt::format("Timing: compute cold {} ms, warm median {} ms (p95 {}, n {}); load {} ms, apart\n",
                       number(field(field(seg, "cold"), "compute_ms")), number(field(field(warm, "compute_ms"), "median")),
                       number(field(field(warm, "compute_ms"), "p95")), field(warm, "n").dump(), number(field(seg, "load_ms")));
  }
  const json& ceilings = field(t, "ceilings");
  if (!ceilings.is_object() || ceilings.empty()) return out;
  const std::string ref = field(t, "reference_device").is_string() ? str(t, "reference_device") : "unknown device";
  out += fmt::format("  {:<12} {:>10} {:>10} {:>9} {:>6}   (reference: {})\n", "ceiling", "measured", "reference",
                     "fraction", "floor", ref);
  for (const auto& [key, c] : ceilings.items())
    out += fmt::format("  {:<12} {:>10} {:>10} {:>9} {:>6}   {}\n", key, number(field(c, "measured"), "{:.4g}"),
                       number(field(c, "reference"), "{:.4g}"), number(field(c, "fraction"), "{:.2f}"),
                       number(field(c, "floor"), "{:.2f}"), str(c, "unit"));
  return out;
}

std::string gib(const json& v) { return v.is_number() ? fmt::format("{:.2f}", v.get<double>() / (1024.0 * 1024 * 1024)) : "-"; }

// L5: the operating range, one line per point in the order of the axis, then its result.
std::string range_lines(const json& range) {
  const std::string axis = str(range, "axis");
  std::string out = fmt::format("Operating range ({}; {}): largest pass {}, first failure {} ({}), {} s\n", axis,
                                str(range, "workload"), field(range, "largest_pass").dump(), field(range, "first_fail").dump(),
                                str(range, "stop_reason"), number(field(range, "seconds"), "{:.1f}"));
  std::vector<json> points;
  if (field(range, "points").is_array()) points.assign(field(range, "points").begin(), field(range, "points").end());
  const auto value = [](const json& p) { return field(p, "value").is_number() ? field(p, "value").get<double>() : 0.0; };
  std::stable_sort(points.begin(), points.end(), [&](const json& a, const json& b) { return value(a) < value(b); });
  // On a GPU the allocator's measured peak and reserve; on the CPU only the workload's estimate.
  const bool gpu = str(range, "memory_limit") == "allocator";
  out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", axis, "result", "warm ms", "cold ms",
                     gpu ? "peak GiB" : "est. GiB", gpu ? fmt::format(" {:>12}", "reserved GiB") : "");
  for (const auto& p : points)
    out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", field(p, "value").dump(), str(p, "result"),
                       number(field(p, "warm_median_ms"), "{:.4g}"), number(field(p, "cold_ms"), "{:.4g}"),
                       gib(field(p, gpu ? "peak_allocated_bytes" : "estimated_bytes")),
                       gpu ? fmt::format(" {:>12}", gib(field(p, "reserved_bytes"))) : "");
  return out;
}

}  // namespace

std::string render_terminal(const json& r, bool colour, const std::string& python_path) {
  std::string out = "\n";
  out += fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", str(field(r, "runtime"), "suite_version"),
                     str(r, "run_id"), text::target(field(r, "requested")));
  out += "LibTorch: " + text::libtorch(field(r, "pytorch")) + "\n";
  if (field(r, "device").is_object()) out += "Device: " + text::device(field(r, "device")) + "\n";
  if (field(r, "python").is_object()) out += python_line(field(r, "python"), python_path);
  if (field(r, "host").is_object()) out += host_line(field(r, "host"));
  for (const auto& l : field(r, "layers"))
    if (str(l, "status") != "not_run") out += layer_line(l, colour);
  if (field(r, "timing").is_object()) out += timing_lines(field(r, "timing"));
  if (field(field(r, "memory"), "range").is_object()) out += range_lines(field(field(r, "memory"), "range"));

  const bool passed = str(r, "status") == "passed";
  const std::string verdict = fmt::format("{} (exit {})", str(r, "code"), r.value("exit_code", -1));
  out += fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (!passed && field(r, "stage").is_string()) out += fmt::format(" at stage {}", field(r, "stage").get<std::string>());
  out += "\n";
  const json& error = field(r, "error");
  if (!str(error, "message", "").empty()) out += fmt::format("  error: {}\n", str(error, "message"));
  if (field(error, "cause").is_string()) out += fmt::format("  cause: {}\n", str(error, "cause"));
  const json& ex = field(r, "execution");
  if (passed && field(ex, "product_verified") == true)
    out += fmt::format("  product and gradient verified on {}, loss {}\n", str(ex, "device"), field(ex, "loss").dump());
  // The specific next action of a recognised error, else the code's own.
  out += fmt::format("  next:  {}\n", str(error, "next_action", str(r, "next_action").c_str()));
  for (const auto& w : field(r, "warnings")) out += fmt::format("  warning: {}\n", w.get<std::string>());
  return out;
}

}  // namespace kd
