#include "terminal_reporter.h"

#include <algorithm>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>

#include "contract/report_parts.h"
#include "load_text.h"
#include "machine_text.h"
#include "report_text.h"
#include "verdict/memory_checks.h"

namespace kd {
namespace {

using nlohmann::json;

std::string paint(bool colour, fmt::terminal_color c, const std::string& text) {
  return colour ? fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text) : text;
}

using report::json_at;
using report::read;

// A part as text, "?" when this driver does not report it.
template <class T>
std::string fact(const json& object, const report::Field<T>& row) {
  const json& v = json_at(object, row);
  return v.is_null() ? "?" : v.is_string() ? v.get<std::string>() : v.dump();
}

std::string host_line(const json& h) {
  const std::string status = read(h, report::host_status).value_or("?");
  if (status != "ok") {
    const auto message = read(h, report::host_message);
    return fmt::format("Host (nvidia-smi): {}{}\n", status == "absent" ? "not installed" : status, message ? ": " + *message : "");
  }
  const json& gpus = read(h, report::host_gpus);
  std::string out = fmt::format("Host (nvidia-smi): {} GPU{}", gpus.size(), gpus.size() == 1 ? "" : "s");
  for (const auto& g : gpus)
    out += fmt::format(", driver {} with {} MiB", fact(g, report::host_gpu_driver_version),
                       json_at(g, report::host_gpu_memory_total_mib).dump());
  return out + "\n";
}

// One compact line per GPU: identity, health, then the facts that explain speed.
std::string nvml_lines(const json& nvml) {
  const std::string status = read(nvml, report::nvml_status).value_or("?");
  if (status != "ok") {
    const auto message = read(nvml, report::nvml_message);
    return fmt::format("Host (NVML): {}{}\n", status == "absent" ? "not installed" : status, message ? ": " + *message : "");
  }
  std::string out = fmt::format("Host (NVML): driver {}, CUDA {}\n", fact(nvml, report::nvml_driver_version),
                                fact(nvml, report::nvml_cuda_driver_version));
  for (const auto& g : read(nvml, report::nvml_gpus)) {
    const std::vector<std::string> problems = read(g, report::nvml_gpu_problems).value_or(std::vector<std::string>{});
    const auto events = read(g, report::nvml_gpu_clock_event_reasons);
    const std::string reasons = !events ? "?" : events->empty() ? "none" : fmt::format("{}", fmt::join(*events, ","));
    // Who computes there (counted, never named), when anyone does.
    const auto processes = read(g, report::nvml_gpu_compute_processes).value_or(0);
    const auto mib = read(g, report::nvml_gpu_compute_processes_memory_mib);
    const std::string busy =
        processes > 0 ? fmt::format("; {} compute process{}{}, utilization {} %", processes, processes == 1 ? "" : "es",
                                    mib ? fmt::format(" ({:.2f} GiB)", *mib / 1024.0) : "",
                                    fact(g, report::nvml_gpu_utilization_percent))
                      : "";
    out += fmt::format("  GPU {} {} {}: {}; ECC {} uncorr {}; PCIe gen{} x{} (max gen{} x{}); SM {}/{} MHz; events {}; {} C; "
                       "{}/{} W{}\n",
                       fact(g, report::nvml_gpu_index), fact(g, report::nvml_gpu_name), fact(g, report::nvml_gpu_pci_bus_id),
                       problems.empty() ? "healthy" : "UNHEALTHY", fact(g, report::nvml_gpu_ecc_mode),
                       fact(g, report::nvml_gpu_ecc_volatile_uncorrected), fact(g, report::nvml_gpu_pcie_gen),
                       fact(g, report::nvml_gpu_pcie_width), fact(g, report::nvml_gpu_pcie_gen_max),
                       fact(g, report::nvml_gpu_pcie_width_max), fact(g, report::nvml_gpu_sm_clock_mhz),
                       fact(g, report::nvml_gpu_sm_clock_max_mhz), reasons, fact(g, report::nvml_gpu_temperature_c),
                       fact(g, report::nvml_gpu_power_draw_w), fact(g, report::nvml_gpu_power_limit_w), busy);
    for (const auto& p : problems) out += "    problem: " + p + "\n";
    for (const auto& w : read(g, report::nvml_gpu_warnings).value_or(std::vector<std::string>{}))
      out += "    warning: " + w + "\n";
  }
  return out;
}

std::string python_line(const json& p, const std::string& path) {
  const std::string who = path.empty() ? "Python" : fmt::format("Python ({})", path);
  const std::string version = read(p, report::python_version).value_or("?");
  const std::string import = read(p, report::python_import).value_or("?");
  if (import != "ok") return fmt::format("{} {}: import torch {}\n", who, version, import);
  const auto cuda = read(p, report::python_cuda);
  return fmt::format("{} {}: torch {} ({})\n", who, version, read(p, report::python_torch_version).value_or("?"),
                     cuda ? "CUDA " + *cuda : "no CUDA");
}

std::string number(const json& v, const char* format = "{:.3g}") {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : "-";
}

// L6's timed segments and its device ceilings.
std::string ceiling_lines(const json& r) {
  std::string out;
  const json& seg = read(r, report::timing_segments);
  if (seg.is_object())
    out += fmt::format("Timing: compute cold {} ms, warm median {} ms (p95 {}, n {}); load {} ms, apart\n",
                       number(json_at(seg, report::segments_cold_compute_ms)),
                       number(json_at(seg, report::segments_warm_compute_median_ms)),
                       number(json_at(seg, report::segments_warm_compute_p95_ms)), json_at(seg, report::segments_warm_n).dump(),
                       number(json_at(seg, report::segments_load_ms)));
  const json& ceilings = read(r, report::timing_ceilings);
  if (!ceilings.is_object() || ceilings.empty()) return out;
  const std::string ref = read(r, report::timing_reference_device).value_or("unknown device");
  out += fmt::format("  {:<12} {:>10} {:>10} {:>9} {:>6}   (reference: {})\n", "ceiling", "measured", "reference",
                     "fraction", "floor", ref);
  for (const auto& [key, c] : ceilings.items())
    out += fmt::format("  {:<12} {:>10} {:>10} {:>9} {:>6}   {}\n", key, number(json_at(c, report::ceiling_measured), "{:.4g}"),
                       number(json_at(c, report::ceiling_reference), "{:.4g}"),
                       number(json_at(c, report::ceiling_fraction), "{:.2f}"), number(json_at(c, report::ceiling_floor), "{:.2f}"),
                       read(c, report::ceiling_unit).value_or("?"));
  return out;
}

// L6: the compute segment (cold apart from warm), one line per device ceiling, then the checks under load.
std::string timing_lines(const json& r) {
  std::string out = ceiling_lines(r);
  for (const std::string& line : load_lines(r)) out += "  " + line + "\n";
  return out;
}

std::string bytes(const json& v) { return v.is_number() ? memory::bytes_text(v.get<double>()) : "-"; }

// L5: the allocator's counters at each named step, the growth per iteration, what emptyCache returned.
std::string memory_lines(const json& r, const std::string& device) {
  std::string out;
  const json& steps = read(r, report::memory_steps);
  const std::string n = json_at(read(r, report::memory_iterations), report::iterations_n).dump();
  if (!steps.is_array()) {
    out += fmt::format("Memory ({}): the workload ran {} iterations; no allocator counters on this device\n", device, n);
    return out;
  }
  out += fmt::format("Memory ({}): {:<20} {:>11} {:>11} {:>11}\n", device, "step", "allocated", "reserved", "peak");
  const std::string pad(fmt::format("Memory ({}): ", device).size(), ' ');
  for (const auto& s : steps)
    out += fmt::format("{}{:<20} {:>11} {:>11} {:>11}\n", pad, read(s, report::step_name).value_or("?"),
                       bytes(json_at(s, report::step_allocated_bytes)), bytes(json_at(s, report::step_reserved_bytes)),
                       bytes(json_at(s, report::step_peak_allocated_bytes)));
  if (const auto growth = read(r, report::memory_growth_per_iteration_bytes))
    out += fmt::format("  growth {} per iteration over {} iterations (tolerance {})\n", bytes(*growth), n,
                       bytes(json_at(r, report::memory_growth_tolerance_bytes)));
  const json& ec = read(r, report::memory_empty_cache);
  if (ec.is_object())
    out += fmt::format("  emptyCache returned {} of {} cached; allocated {} before, {} after\n",
                       bytes(json_at(ec, report::empty_cache_returned_bytes)),
                       bytes(json_at(ec, report::empty_cache_cached_before_bytes)),
                       bytes(json_at(ec, report::empty_cache_allocated_before_bytes)),
                       bytes(json_at(ec, report::empty_cache_allocated_after_bytes)));
  return out;
}

// --device-index all: one line per GPU.
std::string device_lines(const json& devices, bool colour) {
  std::string out;
  using report::read, report::to_value;
  for (const auto& d : devices) {
    const std::optional<int64_t> exit = read(d, report::gpu_exit_code);
    const bool ok = exit == 0;
    const std::string verdict = fmt::format("{} (exit {})", read(d, report::gpu_code).value_or("?"), to_value(exit).dump());
    out += fmt::format("  GPU {:<3} {:<24} {}", to_value(read(d, report::gpu_index)).dump(),
                       read(d, report::gpu_name).value_or("(unknown)"),
                       paint(colour, ok ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
    if (const auto stage = read(d, report::gpu_stage); !ok && stage) out += " at stage " + *stage;
    if (const auto message = read(d, report::gpu_message); !ok && message) out += ": " + *message;
    out += "\n";
  }
  return out;
}

// L7: the copy bandwidth of every ordered pair as a matrix (row: from, column: to), then the all-reduce.
std::string peer_lines(const json& r) {
  std::string out;
  const json& bw = read(r, report::peer_bandwidth);
  const json& access = read(r, report::peer_access);
  const json& measured = read(bw, report::bandwidth_matrix);
  const json& matrix = measured.is_array() ? measured : access;
  if (matrix.is_array() && !matrix.empty()) {
    out += fmt::format("Peer copies ({}; * no peer access: through host memory):\n  {:>8}",
                       measured.is_array() ? "GB/s, median, row to column" : "verified, row to column", "from\\to");
    const json& gpus = read(r, report::peer_devices);  // a --device-index list's GPUs; else 0, 1, ...
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
  const json& ar = read(r, report::peer_all_reduce);
  if (ar.is_object()) {
    const std::string status = read(ar, report::all_reduce_status).value_or("?");
    out += status == "not_supported"
               ? fmt::format("All-reduce: not supported: {}\n", read(ar, report::all_reduce_message).value_or("?"))
               : fmt::format("All-reduce (NCCL, {} GPUs): {}, {} ms\n", json_at(ar, report::all_reduce_ranks).dump(), status,
                             number(json_at(ar, report::all_reduce_ms)));
  }
  return out;
}

std::string gib(const json& v) { return v.is_number() ? fmt::format("{:.2f}", v.get<double>() / (1024.0 * 1024 * 1024)) : "-"; }

std::string result_of(const json& point) { return read(point, report::point_result).value_or("?"); }

// The point's memory: the allocator's measured peak on a GPU, the workload's estimate on the CPU.
std::string point_gib(const json& point, bool gpu) {
  return gib(gpu ? json_at(point, report::point_peak_allocated_bytes) : json_at(point, report::point_estimated_bytes));
}

// The concurrency axis: throughput and latency per N, then the knee; the processes axis: time and
// memory per N (the largest process), then the limit (the first process out of memory, by phase).
std::string range_axis_lines(const json& range, const std::vector<json>& points, bool gpu) {
  const bool conc = read(range, report::range_axis) == "concurrency";
  std::string out;
  if (conc) {
    out += fmt::format("  {:>11} {:<16} {:>12} {:>9} {:>9} {:>10}\n", "executions", "result", "per s", "p50 ms", "p95 ms",
                       gpu ? "peak GiB" : "est. GiB");
    for (const auto& p : points)
      out += fmt::format("  {:>11} {:<16} {:>12} {:>9} {:>9} {:>10}\n", json_at(p, report::point_value).dump(), result_of(p),
                         number(json_at(p, report::point_throughput_per_s), "{:.4g}"),
                         number(json_at(p, report::point_p50_ms), "{:.4g}"), number(json_at(p, report::point_p95_ms), "{:.4g}"),
                         point_gib(p, gpu));
    const auto knee = read(range, report::range_knee);
    out += knee ? fmt::format("  knee: {} executions (the next doubling gained under {:.0f}%)\n", *knee,
                              read(range, report::range_knee_min_gain).value_or(0.0) * 100)
                : "  knee: not reached (throughput still grew at every doubling)\n";
    return out;
  }
  out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", "processes", "result", "seconds", "warm ms", "RSS GiB",
                     gpu ? fmt::format(" {:>12}", "device GiB") : "");
  for (const auto& p : points)
    out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", json_at(p, report::point_value).dump(), result_of(p),
                       number(json_at(p, report::point_seconds), "{:.3g}"), number(json_at(p, report::point_warm_median_ms), "{:.4g}"),
                       gib(json_at(p, report::point_rss_peak_bytes)), gpu ? fmt::format(" {:>12}", point_gib(p, true)) : "");
  const json& limit = read(range, report::range_limit);
  out += limit.is_object() ? fmt::format("  limit: at {} processes, process {} ran out of memory first, in phase {}\n",
                                         json_at(limit, report::limit_processes).dump(),
                                         json_at(limit, report::limit_process).dump(), read(limit, report::limit_phase).value_or("?"))
                           : "  limit: no process ran out of memory\n";
  return out;
}

// L5: the operating range, one line per point in the order of the axis, then its result.
std::string range_lines(const json& range) {
  const std::string axis = read(range, report::range_axis).value_or("?");
  std::string out = fmt::format("Operating range ({}; {}): largest pass {}, first failure {} ({}), {} s\n", axis,
                                read(range, report::range_workload).value_or("?"),
                                json_at(range, report::range_largest_pass).dump(), json_at(range, report::range_first_fail).dump(),
                                read(range, report::range_stop_reason).value_or("?"),
                                number(json_at(range, report::range_seconds), "{:.1f}"));
  const json& all = read(range, report::range_points);
  std::vector<json> points(all.begin(), all.end());
  const auto value = [](const json& p) { return read(p, report::point_value).value_or(0); };
  std::stable_sort(points.begin(), points.end(), [&](const json& a, const json& b) { return value(a) < value(b); });
  // On a GPU the allocator's measured peak and reserve; on the CPU only the workload's estimate.
  const bool gpu = read(range, report::range_memory_limit) == "allocator";
  if (const auto note = read(range, report::range_memory_note))  // a shared GPU: what the sweep left to the others
    out += fmt::format("  memory: {} (its cap {} GiB of {} GiB free)\n", *note, gib(json_at(range, report::range_memory_cap_bytes)),
                       gib(json_at(range, report::range_device_free_bytes)));
  if (const auto share = read(range, report::range_host_memory_share); !gpu && share)  // a shared node keeps the rest (docs/limits.md)
    out += fmt::format("  CPU: points estimated over {:g} % of the host's available memory ({} GiB) are not run\n",
                       *share * 100, gib(json_at(range, report::range_memory_cap_bytes)));
  if (axis == "concurrency" || axis == "processes") return out + range_axis_lines(range, points, gpu);
  out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", axis, "result", "warm ms", "cold ms",
                     gpu ? "peak GiB" : "est. GiB", gpu ? fmt::format(" {:>12}", "reserved GiB") : "");
  for (const auto& p : points)
    out += fmt::format("  {:>10} {:<16} {:>10} {:>10} {:>12}{}\n", json_at(p, report::point_value).dump(), result_of(p),
                       number(json_at(p, report::point_warm_median_ms), "{:.4g}"), number(json_at(p, report::point_cold_ms), "{:.4g}"),
                       point_gib(p, gpu), gpu ? fmt::format(" {:>12}", gib(json_at(p, report::point_reserved_bytes))) : "");
  return out;
}

// A shared GPU: each measurement during which other processes were on it, who they were, and whether its floor was
// applied (docs/shared-gpus.md). Nothing when the GPU was this run's alone.
std::string sharing_lines(const json& r) {
  const json& all = read(r, report::sharing_measurements);
  std::string out;
  if (!all.is_object()) return out;
  for (const auto& [stage, m] : all.items()) {
    const auto others = read(m, report::share_others);
    if (!others) continue;
    const std::string floor = read(m, report::share_floor).value_or("none");
    const bool contended = read(m, report::share_contended).value_or(false);
    const char* judged = floor == "not_applied"          ? ": used the GPU, the floor not applied"
                         : floor == "applied" && contended ? ": used the GPU, judged anyway (--judge-shared-gpu)"
                         : floor == "applied"              ? ": did not compute, judged"
                         : contended                       ? ": used the GPU"
                                                           : "";
    out += fmt::format("  {:<18} {}{}\n", stage, *others, judged);
  }
  if (out.empty()) return out;
  const std::string source = read(all.begin().value(), report::share_source).value_or("?");
  return fmt::format("Other processes on the GPU ({}):\n", source == "nvml" ? "NVML" : "the driver's memory; NVML cannot tell") + out;
}

// A layer whose tests all skipped says why: the failure that blocked it, or why it does not apply here (the head
// of its first test's reason, before the explanation after ": "; the report and --verbose have all of it).
std::string skip_note(const json& l) {
  using report::read;
  const std::string kind = read(l, report::layer_skip_kind).value_or("");
  if (kind == "blocked") {
    const json& by = read(l, report::layer_blocked_by);
    return by.is_object() ? fmt::format("blocked: {} failed ({})", read(by, report::blocked_by_stage).value_or("?"),
                                        read(by, report::blocked_by_code).value_or("?"))
                          : "blocked";
  }
  if (kind != "not_applicable") return "";
  const json& tests = read(l, report::layer_tests);
  const std::string why = !tests.empty() ? read(tests[0], report::test_message).value_or("") : "";
  return why.empty() ? "not applicable" : "not applicable: " + why.substr(0, why.find(": "));
}

}  // namespace

std::string render_layer_line(const json& l, bool colour) {
  const std::string status = report::read(l, report::layer_status).value_or("?");
  const text::LayerCounts c = text::count_layer(l);
  const std::string note = c.first_failure.empty() ? skip_note(l) : c.first_failure;
  const std::string detail = note.empty() ? "" : "  " + note;
  const auto colour_of = status == "passed"   ? fmt::terminal_color::green
                         : status == "failed" ? fmt::terminal_color::red
                                              : fmt::terminal_color::yellow;
  const std::string counts = c.total ? fmt::format(" ({}/{} passed)", c.passed, c.total) : "";
  double ms = 0;
  for (const auto& t : report::read(l, report::layer_tests)) ms += report::read(t, report::test_duration_ms).value_or(0);
  return fmt::format("  {:<3} {:<20} {}{:<16} {:>6.2f} s{}\n", report::read(l, report::layer_id).value_or("?"),
                     report::read(l, report::layer_title).value_or("?"),
                     paint(colour, colour_of, fmt::format("{:<8}", status)), counts, ms / 1000, detail);
}

std::string render_header(const std::string& suite_version, const std::string& run_id, const std::string& target) {
  return fmt::format("kernodeck-diagnostic {}  run {}  target {}\n", suite_version, run_id, target);
}

std::string render_verdict_line(const json& r, bool colour) {
  const bool passed = report::read(r, report::status) == "passed";
  const std::string verdict = fmt::format("{} (exit {})", report::read(r, report::code).value_or("?"),
                                          report::read(r, report::exit_code).value_or(-1));
  std::string out = fmt::format("Verdict: {}", paint(colour, passed ? fmt::terminal_color::green : fmt::terminal_color::red, verdict));
  if (const auto stage = report::read(r, report::stage); !passed && stage) out += " at stage " + *stage;
  if (const auto gpu = report::read(r, report::device_index); !passed && gpu) out += fmt::format(" on GPU {}", *gpu);
  if (const std::string injected = text::injected_fault(r); !injected.empty())
    out += " " + paint(colour, fmt::terminal_color::yellow, "[" + injected + "]");
  return out + "\n";
}

std::string render_terminal(const json& r, bool colour, const std::string& python_path) {
  return render_terminal(r, TerminalView{colour, python_path});
}

std::string render_terminal(const json& r, const TerminalView& view) {
  const bool colour = view.colour;
  std::string out = view.header ? "\n" + render_header(text::suite_version(r), report::read(r, report::run_id).value_or("?"),
                                                         text::target(report::read(r, report::requested)))
                                : "";
  out += "LibTorch: " + text::libtorch(r) + "\n";
  if (const std::string d = text::device(r); !d.empty()) out += "Device: " + d + "\n";
  if (report::read(r, report::python).is_object()) out += python_line(report::read(r, report::python), view.python_path);
  // --host-check's lines: nvidia-smi's, NVML's and the machine around the GPU (a plain run shows only its warnings).
  if (const json& host = report::read(r, report::host); report::read(host, report::host_tool)) {
    out += host_line(host);
    if (const json& nvml = report::read(r, report::host_nvml); nvml.is_object()) out += nvml_lines(nvml);
    out += render_machine(r);
  }
  if (view.layers)
    for (const auto& l : report::read(r, report::layers))
      if (report::read(l, report::layer_status) != "not_run") out += render_layer_line(l, colour);
  if (const auto device = report::read(r, report::memory_device)) out += memory_lines(r, *device);
  out += timing_lines(r);
  if (const json& range = report::read(r, report::memory_range); range.is_object()) out += range_lines(range);
  out += sharing_lines(r);
  if (const json& devices = report::read(r, report::devices); devices.is_array()) {
    if (devices.empty())
      out += "GPUs checked: none visible\n";
    else
      out += fmt::format("GPUs checked: {} (the layers above are GPU {}'s)\n", devices.size(),
                         report::read(r, report::device_index).value_or(0));
    out += device_lines(devices, colour);
  }
  out += peer_lines(r);

  const bool passed = report::read(r, report::status) == "passed";
  out += render_verdict_line(r, colour);
  if (const std::string m = report::read(r, report::error_message).value_or(""); !m.empty()) out += fmt::format("  error: {}\n", m);
  if (const auto cause = report::read(r, report::error_cause)) {
    const auto id = report::read(r, report::error_signature);  // its row in docs/signatures.md
    out += fmt::format("  cause: {}{}\n", *cause, id ? " [" + *id + "]" : "");
  }
  if (const std::string v = text::verified(r); passed && !v.empty()) out += "  " + v + "\n";
  // The specific next action of a recognised error, else the code's own.
  out += fmt::format("  next:  {}\n", report::read(r, report::error_next_action).value_or(report::read(r, report::next_action).value_or("?")));
  // The same decision as one word for automation (docs/fleets.md "Actions"): ci/slurm/node-health reads this line.
  if (const auto action = report::read(r, report::error_action)) out += fmt::format("  action: {}\n", *action);
  for (const std::string& w : report::read(r, report::warnings).value_or(std::vector<std::string>{}))
    out += fmt::format("  warning: {}\n", w);
  return out;
}

}  // namespace kd
