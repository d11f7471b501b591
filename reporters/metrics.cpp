#include "metrics.h"

#include <ctime>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "verdict/actions.h"

namespace kd {
namespace {

using nlohmann::json;
using report::read;
using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
  Labels labels;
  double value;
};

// One metric family after another: its HELP and TYPE lines, then its samples; a family without a sample is left out.
class Exposition {
 public:
  void family(const std::string& name, const std::string& help, const std::vector<Sample>& samples) {
    if (samples.empty()) return;
    text_ += fmt::format("# HELP kernodeck_{} {}\n# TYPE kernodeck_{} gauge\n", name, escape_help(help), name);
    for (const Sample& s : samples) {
      std::string labels;
      for (const auto& [key, value] : s.labels)
        labels += fmt::format("{}{}=\"{}\"", labels.empty() ? "{" : ",", key, escape_label_value(value));
      text_ += fmt::format("kernodeck_{}{}{} {}\n", name, labels, labels.empty() ? "" : "}", number(s.value));
    }
  }
  void one(const std::string& name, const std::string& help, std::optional<double> value, const Labels& labels = {}) {
    if (value) family(name, help, {{labels, *value}});
  }
  const std::string& text() const { return text_; }

 private:
  static std::string escape_help(const std::string& help) {
    std::string out;
    for (char c : help) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    return out;
  }
  static std::string number(double v) {
    if (v == static_cast<double>(static_cast<int64_t>(v)) && v > -1e15 && v < 1e15)
      return fmt::format("{}", static_cast<int64_t>(v));
    return fmt::format("{}", v);
  }
  std::string text_;
};

std::optional<double> as_double(const json& v) { return v.is_number() ? std::optional(v.get<double>()) : std::nullopt; }
double flag(bool b) { return b ? 1 : 0; }

// "2026-12-04T16:27:00Z" as Unix seconds.
std::optional<double> unix_time(const std::string& utc) {
  std::tm tm{};
  if (!::strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm)) return std::nullopt;
  return static_cast<double>(::timegm(&tm));
}

void verdict_metrics(const json& r, Exposition* m) {
  const std::string status = read(r, report::status).value_or("failed");
  const auto action = read(r, report::error_action);
  // No run id among the labels: each run would start a new series (the report has it).
  m->family("info", "The run: the suite's version, the LibTorch it loaded and the device it checked (always 1)",
            {{{{"suite_version", read(r, report::runtime_suite_version).value_or("")},
               {"libtorch", read(r, report::pytorch_version).value_or("")},
               {"cuda", read(r, report::pytorch_cuda_compiled).value_or("")},
               {"device", read(read(r, report::device), report::device_name).value_or("")},
               {"pci_bus_id", read(read(r, report::device), report::device_pci_bus_id).value_or("")}},
              1}});
  m->family("verdict", "The verdict: its code, status, stage, signature and action (docs/fleets.md) as labels (always 1)",
            {{{{"code", read(r, report::code).value_or("")},
               {"status", status},
               {"stage", read(r, report::stage).value_or("")},
               {"signature", read(r, report::error_signature).value_or("")},
               {"action", action.value_or("")}},
              1}});
  m->one("exit_code", "The run's exit code, the report's exit_code (README's code table)",
         as_double(report::json_at(r, report::exit_code)));
  m->one("passed", "1 when the verdict passed, else 0", flag(status == "passed"));
  const auto word = action ? action_from_word(*action) : std::nullopt;
  m->one("node_at_fault", "1 when the failing verdict's action is reset_gpu, drain_node or replace_gpu, else 0",
         flag(word && node_at_fault(*word)));
  if (const auto started = read(r, report::started_at))
    m->one("run_timestamp_seconds", "When the run started, in Unix time", unix_time(*started));
  if (const auto ms = read(r, report::duration_ms)) m->one("run_duration_seconds", "How long the run took", *ms / 1000);
}

void layer_metrics(const json& r, Exposition* m) {
  std::vector<Sample> samples;
  for (const json& l : read(r, report::layers)) {
    const std::string status = read(l, report::layer_status).value_or("");
    for (const char* s : {"passed", "failed", "skipped", "not_run"})
      samples.push_back({{{"layer", read(l, report::layer_id).value_or("")},
                          {"title", read(l, report::layer_title).value_or("")},
                          {"status", s}},
                         flag(status == s)});
  }
  m->family("layer_status", "Each layer's result: 1 for its status (passed, failed, skipped, not_run), 0 for the others",
            samples);
}

// L6: each ceiling's judged figure in its base unit, its share of the datasheet figure, its floor, how often measured.
void timing_metrics(const json& r, Exposition* m) {
  const json& ceilings = read(r, report::timing_ceilings);
  std::vector<Sample> copy, matmul, ratio, floors, below, measurements;
  if (ceilings.is_object())
    for (const auto& [key, c] : ceilings.items()) {
      const auto measured = read(c, report::ceiling_measured);
      if (!measured) continue;
      const Labels ceiling = {{"ceiling", key}};
      if (key == "copy") copy.push_back({{}, *measured * 1e12});
      else if (key.rfind("matmul_", 0) == 0) matmul.push_back({{{"dtype", key.substr(7)}}, *measured * 1e12});
      if (const auto f = read(c, report::ceiling_fraction)) ratio.push_back({ceiling, *f});
      floors.push_back({{{"ceiling", key},
                         {"kind", read(c, report::ceiling_floor_kind).value_or("fraction")},
                         {"source", read(c, report::ceiling_floor_source).value_or("default")}},
                        read(c, report::ceiling_floor).value_or(0)});
      below.push_back({ceiling, flag(read(c, report::ceiling_below_floor).value_or(false))});
      measurements.push_back({ceiling, static_cast<double>(read(c, report::ceiling_measurements).size())});
    }
  m->family("l6_copy_bandwidth_bytes_per_second", "L6: device-to-device copy bandwidth, bytes read plus written", copy);
  m->family("l6_matmul_flops_per_second", "L6: large matrix products, floating-point operations per second", matmul);
  m->family("l6_ceiling_reference_ratio", "L6: the measured figure over the device's datasheet figure", ratio);
  m->family("l6_ceiling_floor",
            "L6: the floor a ceiling was judged against: a fraction of the datasheet figure, or an absolute figure in "
            "TB/s or TFLOP/s (kind), from the default, an option or the floors file (source)",
            floors);
  m->family("l6_ceiling_below_floor", "L6: 1 when the ceiling stayed below its floor when measured again", below);
  m->family("l6_ceiling_measurements", "L6: how often the ceiling was measured (2: the first was below its floor)",
            measurements);
  const json& seg = read(r, report::timing_segments);
  std::vector<Sample> segments;
  for (const auto& [name, field] :
       {std::pair{"load", &report::segments_load_ms}, std::pair{"cold_compute", &report::segments_cold_compute_ms},
        std::pair{"warm_compute_median", &report::segments_warm_compute_median_ms},
        std::pair{"warm_compute_p95", &report::segments_warm_compute_p95_ms}})
    if (const auto ms = read(seg, *field)) segments.push_back({{{"segment", name}}, *ms / 1000});
  m->family("l6_segment_seconds", "L6: the embeddings workload's timed segments (the cold run apart from warm runs)",
            segments);
}

// L8: the all-reduce's bus and algorithm bandwidth per size, the world size and the floor.
void collective_metrics(const json& r, Exposition* m) {
  m->one("l8_world_size", "L8: the ranks of the job", as_double(report::json_at(r, report::collective_world_size)));
  const json& bw = read(r, report::collective_bandwidth);
  std::vector<Sample> bus, alg;
  for (const json& s : read(bw, report::collective_bw_sizes)) {
    const Labels size = {{"size_bytes", std::to_string(read(s, report::bw_size_bytes).value_or(0))}};
    if (const auto b = read(s, report::bw_size_busbw)) bus.push_back({size, *b * 1e9});
    if (const auto a = read(s, report::bw_size_algbw)) alg.push_back({size, *a * 1e9});
  }
  m->family("l8_bus_bandwidth_bytes_per_second", "L8: the all-reduce's bus bandwidth at each size (nccl-tests' busbw)",
            bus);
  m->family("l8_algorithm_bandwidth_bytes_per_second", "L8: the all-reduce's algorithm bandwidth at each size", alg);
  if (const auto floor = read(bw, report::collective_bw_floor_busbw))
    m->one("l8_bus_bandwidth_floor_bytes_per_second", "L8: the bus-bandwidth floor of the largest size", *floor * 1e9,
           {{"source", read(bw, report::collective_bw_floor_source).value_or("option")}});
  std::vector<Sample> measured;
  int k = 0;
  for (const json& v : read(bw, report::collective_bw_measurements))
    if (v.is_number()) measured.push_back({{{"measurement", std::to_string(++k)}}, v.get<double>() * 1e9});
  m->family("l8_largest_size_bus_bandwidth_bytes_per_second",
            "L8: the largest size's bus bandwidth, each time it was measured against a floor", measured);
}

// NVML's health facts of each GPU (host.nvml.gpus): the same facts as L2's health test.
void health_metrics(const json& r, Exposition* m) {
  struct Fact {
    const char* name;
    const char* help;
    const report::Field<std::optional<int64_t>>* field;
    double scale;
  };
  const Fact facts[] = {
      {"gpu_ecc_uncorrected_errors", "NVML: volatile uncorrected ECC errors since the driver's load",
       &report::nvml_gpu_ecc_volatile_uncorrected, 1},
      {"gpu_ecc_corrected_errors", "NVML: volatile corrected ECC errors since the driver's load",
       &report::nvml_gpu_ecc_volatile_corrected, 1},
      {"gpu_temperature_celsius", "NVML: the GPU's temperature", &report::nvml_gpu_temperature_c, 1},
      {"gpu_sm_clock_hertz", "NVML: the SM clock", &report::nvml_gpu_sm_clock_mhz, 1e6},
      {"gpu_sm_clock_max_hertz", "NVML: the SM clock's maximum", &report::nvml_gpu_sm_clock_max_mhz, 1e6},
      {"gpu_pcie_link_generation", "NVML: the PCIe link's current generation", &report::nvml_gpu_pcie_gen, 1},
      {"gpu_pcie_link_generation_max", "NVML: the PCIe link's maximum generation", &report::nvml_gpu_pcie_gen_max, 1},
      {"gpu_pcie_link_width", "NVML: the PCIe link's current width (lanes)", &report::nvml_gpu_pcie_width, 1},
      {"gpu_pcie_link_width_max", "NVML: the PCIe link's maximum width (lanes)", &report::nvml_gpu_pcie_width_max, 1},
  };
  const json& gpus = read(read(r, report::host_nvml), report::nvml_gpus);
  auto labels = [](const json& g) {
    return Labels{{"index", std::to_string(read(g, report::nvml_gpu_index).value_or(-1))},
                  {"pci_bus_id", read(g, report::nvml_gpu_pci_bus_id).value_or("")},
                  {"name", read(g, report::nvml_gpu_name).value_or("")}};
  };
  for (const Fact& f : facts) {
    std::vector<Sample> samples;
    for (const json& g : gpus)
      if (const auto v = read(g, *f.field)) samples.push_back({labels(g), static_cast<double>(*v) * f.scale});
    m->family(f.name, f.help, samples);
  }
  for (const auto& [name, help, field] :
       {std::tuple{"gpu_row_remap_pending", "NVML: 1 when a row remapping waits for the GPU's reset",
                   &report::nvml_gpu_row_remap_pending},
        std::tuple{"gpu_row_remap_failed", "NVML: 1 when a row remapping failed (no spare rows left)",
                   &report::nvml_gpu_row_remap_failed},
        std::tuple{"gpu_retired_pages_pending", "NVML: 1 when a page retirement waits for the GPU's reset",
                   &report::nvml_gpu_retired_pages_pending}}) {
    std::vector<Sample> samples;
    for (const json& g : gpus)
      if (const auto v = read(g, *field)) samples.push_back({labels(g), flag(*v)});
    m->family(name, help, samples);
  }
  std::vector<Sample> power, problems;
  for (const json& g : gpus) {
    if (const auto w = read(g, report::nvml_gpu_power_draw_w)) power.push_back({labels(g), *w});
    if (const auto p = read(g, report::nvml_gpu_problems)) problems.push_back({labels(g), static_cast<double>(p->size())});
  }
  m->family("gpu_power_draw_watts", "NVML: the GPU's power draw", power);
  m->family("gpu_health_problems", "NVML: the problems L2's health test fails a GPU for (uncorrected ECC, remapping)",
            problems);
}

// The kernel log's Xid and SXid events (host.kernel_log).
void kernel_log_metrics(const json& r, Exposition* m) {
  const json& log = read(r, report::host_kernel_log);
  if (!log.is_object()) return;
  m->one("kernel_log_readable", "1 when the kernel log was read for Xid events; 0: nothing is known (why_not in the report)",
         flag(read(log, report::kernel_log_readable).value_or(false)));
  m->one("kernel_log_records", "The kernel log's records read", as_double(report::json_at(log, report::kernel_log_records)));
  std::vector<Sample> lines, last, after;
  for (const json& e : read(log, report::kernel_log_events)) {
    const Labels l = {{"kind", read(e, report::xid_kind).value_or("")},
                      {"pci_bus_id", read(e, report::xid_pci_bus_id).value_or("")},
                      {"code", std::to_string(read(e, report::xid_code).value_or(0))},
                      {"unusable", read(e, report::xid_unusable).value_or(false) ? "true" : "false"}};
    lines.push_back({l, static_cast<double>(read(e, report::xid_count).value_or(0))});
    if (const auto s = read(e, report::xid_last_s_ago)) last.push_back({l, *s});
    after.push_back({l, flag(read(e, report::xid_after_driver_load).value_or(false))});
  }
  m->family("xid_lines", "The kernel log's Xid (GPU) and SXid (NVSwitch) lines of this boot, per device and code", lines);
  m->family("xid_last_seconds", "Seconds since the newest line of each device's code", last);
  m->family("xid_after_driver_load", "1 when the newest line came after the NVIDIA driver's last load", after);
}

}  // namespace

std::string escape_label_value(const std::string& value) {
  std::string out;
  for (char c : value) out += c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

std::string render_metrics(const json& report) {
  Exposition m;
  verdict_metrics(report, &m);
  layer_metrics(report, &m);
  timing_metrics(report, &m);
  collective_metrics(report, &m);
  health_metrics(report, &m);
  kernel_log_metrics(report, &m);
  return m.text();
}

}  // namespace kd
