#include "terminal_reporter.h"

#include <fmt/color.h>
#include <fmt/format.h>

namespace kd {
namespace {

using nlohmann::json;

// A member or null: const operator[] on a missing key is undefined behaviour in nlohmann::json.
const json& field(const json& j, const char* key) {
  static const json null;
  if (!j.is_object()) return null;
  const auto it = j.find(key);
  return it == j.end() ? null : *it;
}

std::string str(const json& j, const char* key, const char* fallback = "?") {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

std::string paint(bool colour, fmt::terminal_color c, const std::string& text) {
  return colour ? fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text) : text;
}

std::string libtorch_line(const json& pt) {
  if (field(pt, "loaded") != true) return "LibTorch: not loaded";
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
  for (const auto& t : field(l, "tests")) {
    ++total;
    if (t.value("status", "") == "passed") ++passed;
    if (t.value("status", "") == "failed" && detail.empty())
      detail = fmt::format("  {} at {}", str(t, "code"), str(t, "stage"));
  }
  const auto colour_of = status == "passed"   ? fmt::terminal_color::green
                         : status == "failed" ? fmt::terminal_color::red
                                              : fmt::terminal_color::yellow;
  const std::string counts = total ? fmt::format(" ({}/{} passed)", passed, total) : "";
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

}  // namespace

std::string render_terminal(const json& r, bool colour, const std::string& python_path) {
  std::string out = "\n";
  const json& req = field(r, "requested");
  const std::string target = str(req, "device") == "cpu" ? "cpu" : fmt::format("cuda:{}", field(req, "device_index").dump());
  out += fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", str(field(r, "runtime"), "suite_version"), str(r, "run_id"),
                     target);
  out += libtorch_line(field(r, "pytorch")) + "\n";
  if (field(r, "device").is_object())
    out += fmt::format("Device: {} (compute capability {}, {:.1f} GiB)\n", str(field(r, "device"), "name"),
                       str(field(r, "device"), "capability"),
                       field(field(r, "device"), "total_memory_bytes").get<double>() / (1024.0 * 1024 * 1024));
  if (field(r, "python").is_object()) out += python_line(field(r, "python"), python_path);
  if (field(r, "host").is_object()) out += host_line(field(r, "host"));
  for (const auto& l : field(r, "layers"))
    if (str(l, "status") != "not_run") out += layer_line(l, colour);

  const bool passed = str(r, "status") == "passed";
  const std::string verdict = fmt::format("{} (exit {})", str(r, "code"), r.value("exit_code", -1));
  out += fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (!passed && field(r, "stage").is_string()) out += fmt::format(" at stage {}", field(r, "stage").get<std::string>());
  out += "\n";
  if (field(r, "error").is_object() && !str(field(r, "error"), "message", "").empty())
    out += fmt::format("  error: {}\n", str(field(r, "error"), "message"));
  if (field(r, "error").is_object() && field(field(r, "error"), "cause").is_string())
    out += fmt::format("  cause: {}\n", str(field(r, "error"), "cause"));
  if (passed && field(field(r, "execution"), "product_verified") == true)
    out += fmt::format("  product and gradient verified on {}, loss {}\n", str(field(r, "execution"), "device"),
                       field(field(r, "execution"), "loss").dump());
  const json& error = field(r, "error");
  out += fmt::format("  next:  {}\n", error.is_object() ? str(error, "next_action", str(r, "next_action").c_str())
                                                        : str(r, "next_action"));
  for (const auto& w : field(r, "warnings")) out += fmt::format("  warning: {}\n", w.get<std::string>());
  return out;
}

}  // namespace kd
