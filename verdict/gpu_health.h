// GPU health from NVML's facts (fixtures/nvml_facts.h): what makes a GPU unfit to rent
// (GPU_UNHEALTHY, L2) and what explains a slow one (warnings; L6's shortfall names them).
// Pure functions on the facts' JSON, unit-tested without a GPU.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd {

struct GpuHealth {
  std::vector<std::string> problems;  // each one makes the GPU unhealthy (code 18)
  std::string action;                 // what to do about the problems ("" when none)
  std::vector<std::string> warnings;  // likely causes of slowness; never a failure
};

// One GPU's facts (an item of host.nvml.gpus). A fact that is null (not reported) decides nothing.
GpuHealth judge_gpu_health(const nlohmann::json& gpu);

// The L2 health test's message for an unhealthy GPU: the facts, then the next action.
std::string unhealthy_message(const nlohmann::json& gpu, const GpuHealth& h);

struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0;
  bool operator==(const PciAddress& o) const { return domain == o.domain && bus == o.bus && device == o.device; }
};

// "00000000:19:00.0" (NVML, nvidia-smi) or "0000:19:00.0" (CUDA); any case. nullopt when malformed.
std::optional<PciAddress> parse_pci_bus_id(const std::string& text);
std::string format_pci_bus_id(const PciAddress& a);  // NVML's form: "00000000:19:00.0"

// The GPU of `gpus` (host.nvml.gpus) at that PCI address: LibTorch's device index and NVML's
// index differ when CUDA_VISIBLE_DEVICES or CUDA_DEVICE_ORDER reorder them. nullopt if none.
std::optional<nlohmann::json> gpu_at(const nlohmann::json& gpus, const PciAddress& address);

}  // namespace kd
