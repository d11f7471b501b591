#include "load_text.h"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd {
namespace {

using nlohmann::json;
using report::json_at;
using report::read;

std::string num(const json& v, const char* format = "{:.3g}") {
  return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : "-";
}

std::string host_link_line(const json& h) {
  const std::string kind = read(h, report::host_link_link_kind).value_or("");
  std::string link;
  if (kind == "pcie")
    link = fmt::format("PCIe Gen {} x{} (at most Gen {} x{}: {} GB/s each way)", json_at(h, report::host_link_generation).dump(),
                       json_at(h, report::host_link_width).dump(), json_at(h, report::host_link_generation_max).dump(),
                       json_at(h, report::host_link_width_max).dump(), num(json_at(h, report::host_link_expected_gb_s)));
  else if (kind == "nvlink-c2c")
    link = fmt::format("NVLink-C2C ({} GB/s each way)", num(json_at(h, report::host_link_expected_gb_s)));
  std::string line = fmt::format("host link: {} GB/s host to device, {} GB/s device to host", num(json_at(h, report::host_link_h2d_gb_s)),
                                 num(json_at(h, report::host_link_d2h_gb_s)));
  if (!link.empty())
    line += fmt::format(" (pinned); {}: fractions {} and {}, floor {}{}", link, num(json_at(h, report::host_link_h2d_fraction), "{:.2f}"),
                        num(json_at(h, report::host_link_d2h_fraction), "{:.2f}"), num(json_at(h, report::host_link_floor), "{:.2f}"),
                        read(h, report::host_link_below_floor) == true ? " - BELOW" : "");
  else
    line += fmt::format("; not judged: {}", read(h, report::host_link_note).value_or("no link known"));
  return line;
}

// Each GPU's link alone and all at once (--device-index all): what GPUs sharing a PCIe switch or root port lose.
std::string together_line(const json& t) {
  std::vector<std::string> gpus, h2d, d2h, h2d_alone, d2h_alone;
  for (const json& g : t.value("gpus", json::array())) {
    gpus.push_back(g.value("gpu", json()).dump());
    h2d.push_back(num(g.value("h2d_together_gb_s", json())));
    d2h.push_back(num(g.value("d2h_together_gb_s", json())));
    h2d_alone.push_back(num(g.value("h2d_alone_gb_s", json())));
    d2h_alone.push_back(num(g.value("d2h_alone_gb_s", json())));
  }
  return fmt::format("host links of GPUs {} at once: host to device {} GB/s (alone {}), {} in all; device to host {} "
                     "(alone {}), {} in all",
                     fmt::join(gpus, ", "), fmt::join(h2d, ", "), fmt::join(h2d_alone, ", "),
                     num(t.value("h2d_total_gb_s", json())), fmt::join(d2h, ", "), fmt::join(d2h_alone, ", "),
                     num(t.value("d2h_total_gb_s", json())));
}

std::string sustained_line(const json& s) {
  const auto reasons = read(s, report::sustained_reasons).value_or(std::vector<std::string>{});
  const json& hottest = json_at(s, report::sustained_hottest_c);
  return fmt::format("sustained load: {} s, {} -> {} TFLOP/s, {} of the first seconds (floor {}{}); {}; clocks held by: {}",
                     num(json_at(s, report::sustained_seconds)), num(json_at(s, report::sustained_first_rate), "{:.4g}"),
                     num(json_at(s, report::sustained_steady_rate), "{:.4g}"), num(json_at(s, report::sustained_fraction), "{:.2f}"),
                     num(json_at(s, report::sustained_floor), "{:.2f}"), read(s, report::sustained_below_floor) == true ? ", BELOW" : "",
                     hottest.is_number() ? fmt::format("hottest {} C", hottest.get<int64_t>()) : std::string("no NVML"),
                     reasons.empty() ? "none given" : fmt::format("{}", fmt::join(reasons, ", ")));
}

std::string results_line(const json& r) {
  const int64_t differing = read(r, report::sustained_results_differing_products).value_or(0);
  const std::string cpu = fmt::format("CPU reference rows: {} and {} elements off at start and end",
                                      json_at(r, report::sustained_results_reference_start_bad).dump(),
                                      json_at(r, report::sustained_results_reference_end_bad).dump());
  if (differing == 0)
    return fmt::format("sustained results: {} products bitwise equal to the first; {}",
                       json_at(r, report::sustained_results_compared).dump(), cpu);
  return fmt::format("sustained results: {} of {} products differed, the first at iteration {} ({} elements, largest difference {}); {}",
                     differing, json_at(r, report::sustained_results_compared).dump(),
                     json_at(r, report::sustained_results_first_iteration).dump(),
                     json_at(r, report::sustained_results_first_elements).dump(),
                     num(json_at(r, report::sustained_results_first_max_diff)), cpu);
}

std::string integrity_line(const json& m) {
  constexpr double kGB = 1e9;
  const json& tested = json_at(m, report::integrity_bytes_tested);
  const json& free = json_at(m, report::integrity_free_bytes);
  const std::string of = free.is_number() ? fmt::format(" of {:.1f} GB free ({})", free.get<double>() / kGB,
                                                        num(json_at(m, report::integrity_coverage), "{:.2f}"))
                                          : std::string(" (the CPU's stand-in)");
  const json& before = json_at(m, report::integrity_ecc_before);
  const json& after = json_at(m, report::integrity_ecc_after);
  const std::string ecc = before.is_object() && after.is_object()
                              ? fmt::format("; ECC uncorrected {} -> {}", before.value("uncorrected", json()).dump(),
                                            after.value("uncorrected", json()).dump())
                              : "";
  return fmt::format("memory integrity: {:.2f} GB{}, 3 patterns, a full pass {} s; {} wrong words{}",
                     tested.is_number() ? tested.get<double>() / kGB : 0.0, of, num(json_at(m, report::integrity_pass_seconds)),
                     json_at(m, report::integrity_mismatches).dump(), ecc);
}

}  // namespace

std::vector<std::string> load_lines(const json& r) {
  std::vector<std::string> lines;
  if (const json& h = read(r, report::timing_host_link); h.is_object()) {
    lines.push_back(host_link_line(h));
    if (const json& t = read(h, report::host_link_together); t.is_object()) lines.push_back(together_line(t));
  }
  if (const json& s = read(r, report::timing_sustained); s.is_object()) lines.push_back(sustained_line(s));
  if (const json& s = read(r, report::timing_sustained_results); s.is_object()) lines.push_back(results_line(s));
  if (const json& m = read(r, report::timing_memory_integrity); m.is_object()) lines.push_back(integrity_line(m));
  return lines;
}

}  // namespace kd
