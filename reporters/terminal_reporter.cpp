#include "terminal_reporter.h"

#include <algorithm>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>

#include "report_text.h"
#include "verdict/json_read.h"
#include "verdict/memory_checks.h"

namespace kd {
namespace {

using nlohmann::json;
using json_read::field;
using text::str;

std::string paint(bool colour, fmt::terminal_color c, const std::string& text) {
  return colour ? fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text) : text;
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

// A fact as text, "?" when this driver does not report it.
std::string fact(const json& g, const char* key) {
  const json& v = field(g, key);
  return v.is_null() ? "?" : v.is_string() ? v.get<std::string>() : v.dump();
}

// One compact line per GPU: identity, health, then the facts that explain speed.
std::string nvml_lines(const json& nvml) {
  const std::string status = str(nvml, "status");
  if (status != "ok") {
    const std::string why = field(nvml, "message").is_string() ? ": " + field(nvml, "message").get<std::string>() : "";
    return fmt::format("Host (NVML): {}{}\n", status == "absent" ? "not installed" : status, why);
  }
  std::string out = fmt::format("Host (NVML): driver {}, CUDA {}\n", fact(nvml, "driver_version"),
                                fact(nvml, "cuda_driver_version"));
  for (const auto& g : field(nvml, "gpus")) {
    const bool sick = !field(g, "problems").empty();
    std::string reasons = "?";
    if (field(g, "clock_event_reasons").is_array())
      reasons = field(g, "clock_event_reasons").empty() ? "none" : fmt::format("{}", fmt::join(field(g, "clock_event_reasons"), ","));
    out += fmt::format("  GPU {} {} {}: {}; ECC {} uncorr {}; PCIe gen{} x{} (max gen{} x{}); SM {}/{} MHz; events {}; {} C; "
                       "{}/{} W\n",
                       fact(g, "index"), fact(g, "name"), fact(g, "pci_bus_id"), sick ? "UNHEALTHY" : "healthy",
                       fact(g, "ecc_mode"), fact(g, "ecc_volatile_uncorrected"), fact(g, "pcie_gen"), fact(g, "pcie_width"),
                       fact(g, "pcie_gen_max"), fact(g, "pcie_width_max"), fact(g, "sm_clock_mhz"),
                       fact(g, "sm_clock_max_mhz"), reasons, fact(g, "temperature_c"), fact(g, "power_draw_w"),
                       fact(g, "power_limit_w"));
    for (const auto& p : field(g, "problems")) out += "    problem: " + p.get<std::string>() + "\n";
    for (const auto& w : field(g, "warnings")) out += "    warning: " + w.get<std::string>() + "\n";
  }
  return out;
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

std::string bytes(const json& v) { return v.is_number() ? memory::bytes_text(v.get<double>()) : "-"; }

// L5: the allocator's counters at each named step, the growth per iteration, what emptyCache returned.
std::string memory_lines(const json& m) {
  std::string out;
  const json& steps = field(m, "steps");
  const json& it = field(m, "iterations");
  if (!steps.is_array()) {
    out += fmt::format("Memory ({}): the workload ran {} iterations; no allocator counters on this device\n", str(m, "device"),
                       field(it, "n").dump());
    return out;
  }
  out += fmt::format("Memory ({}): {:<20} {:>11} {:>11} {:>11}\n", str(m, "device"), "step", "allocated", "reserved", "peak");
  const std::string pad(fmt::format("Memory ({}): ", str(m, "device")).size(), ' ');
  for (const auto& s : steps)
    out += fmt::format("{}{:<20} {:>11} {:>11} {:>11}\n", pad, str(s, "name"), bytes(field(s, "allocated_bytes")),
                       bytes(field(s, "reserved_bytes")), bytes(field(s, "peak_allocated_bytes")));
  if (field(it, "growth_per_iteration_bytes").is_number())
    out += fmt::format("  growth {} per iteration over {} iterations (tolerance {})\n", bytes(field(it, "growth_per_iteration_bytes")),
                       field(it, "n").dump(), bytes(field(it, "tolerance_bytes")));
  const json& ec = field(m, "empty_cache");
  if (ec.is_object())
    out += fmt::format("  emptyCache returned {} of {} cached; allocated {} before, {} after\n", bytes(field(ec, "returned_bytes")),
                       bytes(field(ec, "cached_before_bytes")), bytes(field(ec, "allocated_before_bytes")),
                       bytes(field(ec, "allocated_after_bytes")));
  return out;
}

// --device-index all: one line per GPU.
std::string device_lines(const json& devices, bool colour) {
  std::string out;
  for (const auto& d : devices) {
    const bool ok = field(d, "exit_code") == 0;
    const std::string verdict = fmt::format("{} (exit {})", str(d, "code"), field(d, "exit_code").dump());
    out += fmt::format("  GPU {:<3} {:<24} {}", field(d, "index").dump(), str(d, "name", "(unknown)"),
                       paint(colour, ok ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
    if (!ok && field(d, "stage").is_string()) out += " at stage " + str(d, "stage");
    if (!ok && field(d, "message").is_string()) out += ": " + str(d, "message");
    out += "\n";
  }
  return out;
}

// L7: the copy bandwidth of every ordered pair as a matrix (row: from, column: to), then the all-reduce.
std::string peer_lines(const json& p) {
  std::string out;
  const json& bw = field(p, "bandwidth");
  const json& access = field(p, "access");
  const json& matrix = field(bw, "matrix").is_array() ? field(bw, "matrix") : access;
  if (matrix.is_array() && !matrix.empty()) {
    out += fmt::format("Peer copies ({}; * no peer access: through host memory):\n  {:>8}",
                       field(bw, "matrix").is_array() ? "GB/s, median, row to column" : "verified, row to column", "from\\to");
    const json& gpus = field(p, "devices");  // a --device-index list's GPUs; else 0, 1, ...
    auto gpu = [&](size_t i) { return gpus.is_array() && i < gpus.size() ? gpus[i].dump() : std::to_string(i); };
    for (size_t j = 0; j < matrix.size(); ++j) out += fmt::format(" {:>9}", gpu(j));
    out += "\n";
    for (size_t i = 0; i < matrix.size(); ++i) {
      out += fmt::format("  {:>8}", gpu(i));
      for (size_t j = 0; j < matrix[i].size(); ++j) {
        const json& v = matrix[i][j];
        const bool no_peer = access.is_array() && i < access.size() && j < access[i].size() && access[i][j] == false;
        const std::string cell = i == j ? "-" : v.is_number() ? fmt::format("{:.1f}", v.get<double>()) : v.is_boolean() ? "ok" : "?";
        out += fmt::format(" {:>9}", cell + (no_peer ? "*" : ""));
      }
      out += "\n";
    }
  }
  const json& ar = field(p, "all_reduce");
  if (ar.is_object()) {
    out += str(ar, "status") == "not_supported"
               ? fmt::format("All-reduce: not supported: {}\n", str(ar, "message"))
               : fmt::format("All-reduce (NCCL, {} GPUs): {}, {} ms\n", field(ar, "ranks").dump(), str(ar, "status"),
                             number(field(ar, "ms")));
  }
  return out;
}

std::string gib(const json& v) { return v.is_number() ? fmt::format("{:.2f}", v.get<double>() / (1024.0 * 1024 * 1024)) : "-"; }

// The concurrency axis: throughput and latency per N, then the knee; the processes axis: time and
// memory per N (the largest process), then the limit (the first process out of memory, by phase).
std::string range_axis_lines(const json& range, const std::vector<json>& points, bool gpu) {
  const bool conc = str(range, "axis") == "concurrency";
  std::string out;
  if (conc) {
    out += fmt::format("  {:>11} {:<16} {:>12} {:>9} {:>9} {:>10}\n", "executions", "result", "per s", "p50 ms", "p95 ms",
                       gpu ? "peak GiB" : "est. GiB");
    for (const auto& p : points)
      out += fmt::format("  {:>11} {:<16} {:>12} {:>9} {:>9} {:>10}\n", field(p, "value").dump(), str(p, "result"),
                         number(field(p, "throughput_per_s"), "{:.4g}"), number(field(p, "p50_ms"), "{:.4g}"),
                         number(field(p, "p95_ms"), "{:.4g}"), gib(field(p, gpu ? "peak_allocated_bytes" : "estimated_bytes")));
    const json &knee = field(range, "knee"), &gain = field(range, "knee_min_gain");
    out += knee.is_number() ? fmt::format("  knee: {} executions (the next doubling gained under {:.0f}%)\n", knee.dump(),
                                          gain.is_number() ? gain.get<double>() * 100 : 0.0)
                            : "  knee: not reached (throughput still grew at every doubling)\n";
    return out;
  }
  out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", "processes", "result", "seconds", "warm ms", "RSS GiB",
                     gpu ? fmt::format(" {:>12}", "device GiB") : "");
  for (const auto& p : points)
    out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", field(p, "value").dump(), str(p, "result"),
                       number(field(p, "seconds"), "{:.3g}"), number(field(p, "warm_median_ms"), "{:.4g}"),
                       gib(field(p, "rss_peak_bytes")), gpu ? fmt::format(" {:>12}", gib(field(p, "peak_allocated_bytes"))) : "");
  const json& limit = field(range, "limit");
  out += limit.is_object() ? fmt::format("  limit: at {} processes, process {} ran out of memory first, in phase {}\n",
                                         field(limit, "processes").dump(), field(limit, "process").dump(), str(limit, "phase"))
                           : "  limit: no process ran out of memory\n";
  return out;
}

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
  if (!gpu && field(range, "host_memory_share").is_number())  // a shared node keeps the rest (docs/limits.md)
    out += fmt::format("  CPU: points estimated over {:g} % of the host's available memory ({} GiB) are not run\n",
                       field(range, "host_memory_share").get<double>() * 100, gib(field(range, "memory_cap_bytes")));
  if (axis == "concurrency" || axis == "processes") return out + range_axis_lines(range, points, gpu);
  out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", axis, "result", "warm ms", "cold ms",
                     gpu ? "peak GiB" : "est. GiB", gpu ? fmt::format(" {:>12}", "reserved GiB") : "");
  for (const auto& p : points)
    out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", field(p, "value").dump(), str(p, "result"),
                       number(field(p, "warm_median_ms"), "{:.4g}"), number(field(p, "cold_ms"), "{:.4g}"),
                       gib(field(p, gpu ? "peak_allocated_bytes" : "estimated_bytes")),
                       gpu ? fmt::format(" {:>12}", gib(field(p, "reserved_bytes"))) : "");
  return out;
}

// A layer whose tests all skipped says why: the failure that blocked it, or why it does not apply here (the head
// of its first test's reason, before the explanation after ": "; the report and --verbose have all of it).
std::string skip_note(const json& l) {
  const std::string kind = str(l, "skip_kind", "");
  if (kind == "blocked") {
    const json& by = field(l, "blocked_by");
    return by.is_object() ? fmt::format("blocked: {} failed ({})", str(by, "stage"), str(by, "code")) : "blocked";
  }
  if (kind != "not_applicable") return "";
  const json& tests = field(l, "tests");
  const std::string why = tests.is_array() && !tests.empty() ? str(tests[0], "message", "") : "";
  return why.empty() ? "not applicable" : "not applicable: " + why.substr(0, why.find(": "));
}

}  // namespace

std::string render_layer_line(const json& l, bool colour) {
  const std::string status = str(l, "status");
  const text::LayerCounts c = text::count_layer(l);
  const std::string note = c.first_failure.empty() ? skip_note(l) : c.first_failure;
  const std::string detail = note.empty() ? "" : "  " + note;
  const auto colour_of = status == "passed"   ? fmt::terminal_color::green
                         : status == "failed" ? fmt::terminal_color::red
                                              : fmt::terminal_color::yellow;
  const std::string counts = c.total ? fmt::format(" ({}/{} passed)", c.passed, c.total) : "";
  double ms = 0;
  for (const auto& t : field(l, "tests"))
    if (field(t, "duration_ms").is_number()) ms += field(t, "duration_ms").get<double>();
  return fmt::format("  {:<3} {:<20} {}{:<16} {:>6.2f} s{}\n", str(l, "id"), str(l, "title"),
                     paint(colour, colour_of, fmt::format("{:<8}", status)), counts, ms / 1000, detail);
}

std::string render_header(const std::string& suite_version, const std::string& run_id, const std::string& target) {
  return fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", suite_version, run_id, target);
}

std::string render_verdict_line(const json& r, bool colour) {
  const bool passed = str(r, "status") == "passed";
  const std::string verdict = fmt::format("{} (exit {})", str(r, "code"), r.value("exit_code", -1));
  std::string out = fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (!passed && field(r, "stage").is_string()) out += fmt::format(" at stage {}", field(r, "stage").get<std::string>());
  if (!passed && field(r, "device_index").is_number()) out += fmt::format(" on GPU {}", field(r, "device_index").dump());
  return out + "\n";
}

std::string render_terminal(const json& r, bool colour, const std::string& python_path) {
  return render_terminal(r, TerminalView{colour, python_path});
}

std::string render_terminal(const json& r, const TerminalView& view) {
  const bool colour = view.colour;
  std::string out = view.header ? "\n" + render_header(str(field(r, "runtime"), "suite_version"), str(r, "run_id"),
                                                         text::target(field(r, "requested")))
                                : "";
  out += "LibTorch: " + text::libtorch(field(r, "pytorch")) + "\n";
  if (field(r, "device").is_object()) out += "Device: " + text::device(field(r, "device")) + "\n";
  if (field(r, "python").is_object()) out += python_line(field(r, "python"), view.python_path);
  if (field(r, "host").is_object()) out += host_line(field(r, "host"));
  if (field(r, "host").is_object() && field(field(r, "host"), "nvml").is_object()) out += nvml_lines(field(field(r, "host"), "nvml"));
  if (view.layers)
    for (const auto& l : field(r, "layers"))
      if (str(l, "status") != "not_run") out += render_layer_line(l, colour);
  if (field(r, "memory").is_object() && field(field(r, "memory"), "device").is_string()) out += memory_lines(field(r, "memory"));
  if (field(r, "timing").is_object()) out += timing_lines(field(r, "timing"));
  if (field(field(r, "memory"), "range").is_object()) out += range_lines(field(field(r, "memory"), "range"));
  if (field(r, "devices").is_array()) {
    const json& decided = field(r, "device_index");
    if (field(r, "devices").empty())
      out += "GPUs checked: none visible\n";
    else
      out += fmt::format("GPUs checked: {} (the layers above are GPU {}'s)\n", field(r, "devices").size(),
                         decided.is_number() ? decided.dump() : "0");
    out += device_lines(field(r, "devices"), colour);
  }
  if (field(r, "peer").is_object()) out += peer_lines(field(r, "peer"));

  const bool passed = str(r, "status") == "passed";
  out += render_verdict_line(r, colour);
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
