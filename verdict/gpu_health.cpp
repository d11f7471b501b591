#include "gpu_health.h"

#include <cstdio>

#include <fmt/format.h>

#include "json_read.h"

namespace kd {
namespace {

using nlohmann::json;

// A fact's value, or nullopt when it is absent or null (not reported by this driver).
template <typename T>
std::optional<T> get(const json& gpu, const char* key) { return json_read::value_of<T>(gpu, key); }

// Clock-event reasons that hold the clocks down. gpu_idle, applications_clocks_setting,
// sync_boost and display_clock_setting are normal states, not slowdowns.
bool is_slowdown(const std::string& reason) {
  return reason == "sw_power_cap" || reason == "hw_slowdown" || reason == "sw_thermal_slowdown" ||
         reason == "hw_thermal_slowdown" || reason == "hw_power_brake_slowdown";
}

// An idle GPU lowers its clocks and its PCIe generation to save power: that is no warning.
bool idle(const json& gpu) {
  const auto reasons = get<std::vector<std::string>>(gpu, "clock_event_reasons");
  if (!reasons) return false;
  for (const auto& r : *reasons)
    if (r == "gpu_idle") return true;
  return false;
}

constexpr double kClockFarBelow = 0.5;  // a busy GPU below half its maximum clock is held down

}  // namespace

GpuHealth judge_gpu_health(const json& gpu) {
  GpuHealth h;
  bool replace = false;
  if (const auto n = get<long long>(gpu, "ecc_volatile_uncorrected"); n && *n > 0)
    h.problems.push_back(fmt::format("{} uncorrected ECC error{} since the driver was loaded", *n, *n == 1 ? "" : "s"));
  if (get<bool>(gpu, "row_remap_failed").value_or(false)) {
    h.problems.push_back("a row remapping failed (the memory has no spare rows left for a bad one)");
    replace = true;
  }
  if (get<bool>(gpu, "row_remap_pending").value_or(false))
    h.problems.push_back("a row remapping is pending (it takes effect at the next GPU reset)");
  if (get<bool>(gpu, "retired_pages_pending").value_or(false))
    h.problems.push_back("a page retirement is pending (it takes effect at the next GPU reset)");
  if (!h.problems.empty())
    h.action = replace ? "the card must be replaced: drain the node and have the GPU swapped"
                       : "reset the GPU (nvidia-smi -r with no process on it, or reboot) or drain the node; run again "
                         "after the reset";

  const auto width = get<int>(gpu, "pcie_width"), width_max = get<int>(gpu, "pcie_width_max");
  if (width && width_max && *width < *width_max)
    h.warnings.push_back(fmt::format("PCIe link trained at x{} of x{}", *width, *width_max));
  const bool busy = !idle(gpu);
  const auto gen = get<int>(gpu, "pcie_gen"), gen_max = get<int>(gpu, "pcie_gen_max");
  if (busy && gen && gen_max && *gen < *gen_max)
    h.warnings.push_back(fmt::format("PCIe link at generation {} of {} while the GPU is busy", *gen, *gen_max));
  if (const auto reasons = get<std::vector<std::string>>(gpu, "clock_event_reasons")) {
    std::vector<std::string> slow;
    for (const auto& r : *reasons)
      if (is_slowdown(r)) slow.push_back(r);
    if (!slow.empty()) h.warnings.push_back(fmt::format("clocks held down by {}", fmt::join(slow, ", ")));
  }
  for (const auto& [what, now_key, max_key] :
       {std::tuple{"SM", "sm_clock_mhz", "sm_clock_max_mhz"}, std::tuple{"memory", "mem_clock_mhz", "mem_clock_max_mhz"}}) {
    const auto now = get<int>(gpu, now_key), max = get<int>(gpu, max_key);
    if (busy && now && max && *max > 0 && *now < kClockFarBelow * *max)
      h.warnings.push_back(fmt::format("{} clock {} MHz of its maximum {} MHz", what, *now, *max));
  }
  return h;
}

std::string unhealthy_message(const json& gpu, const GpuHealth& h) {
  const std::string who = fmt::format("GPU {} ({}, {})", gpu.value("index", -1),
                                      get<std::string>(gpu, "name").value_or("unnamed"),
                                      get<std::string>(gpu, "pci_bus_id").value_or("no PCI bus id"));
  return fmt::format("NVML reports {}: {}; next: {}", who, fmt::join(h.problems, "; "), h.action);
}

std::optional<PciAddress> parse_pci_bus_id(const std::string& text) {
  PciAddress a;
  unsigned function = 0;
  int consumed = 0;
  if (text.size() > 32 ||
      std::sscanf(text.c_str(), "%x:%x:%x.%x%n", &a.domain, &a.bus, &a.device, &function, &consumed) != 4 ||
      consumed != static_cast<int>(text.size()))
    return std::nullopt;
  return a;
}

std::string format_pci_bus_id(const PciAddress& a) {
  return fmt::format("{:08X}:{:02X}:{:02X}.0", a.domain, a.bus, a.device);
}

std::optional<json> gpu_at(const json& gpus, const PciAddress& address) {
  if (!gpus.is_array()) return std::nullopt;
  for (const auto& g : gpus) {
    const auto id = g.is_object() ? get<std::string>(g, "pci_bus_id") : std::nullopt;
    const auto parsed = id ? parse_pci_bus_id(*id) : std::nullopt;
    if (parsed && *parsed == address) return g;
  }
  return std::nullopt;
}

}  // namespace kd
