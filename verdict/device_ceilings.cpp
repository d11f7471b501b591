#include "device_ceilings.h"

#include <array>

namespace kd {
namespace {

constexpr std::nullopt_t kUnsure = std::nullopt;

// Sources and the reasoning per figure: docs/DEVICE_CEILINGS.md (keep both in step).
const std::array<DeviceCeilings, 7> kTable{{
    {"H200", "NVIDIA H200", 4.8, 989.5, 67.0, 494.5},
    {"H100 SXM", "NVIDIA H100 80GB HBM3", 3.35, 989.5, 67.0, 494.5},
    {"A100 80GB SXM", "NVIDIA A100-SXM4-80GB", 2.039, 312.0, 19.5, 156.0},
    {"A100 80GB PCIe", "NVIDIA A100 80GB PCIe", 1.935, 312.0, 19.5, 156.0},
    {"L40S", "NVIDIA L40S", 0.864, 362.05, 91.6, 183.0},
    {"RTX 4090", "NVIDIA GeForce RTX 4090", 1.008, 165.2, 82.6, 82.6},
    {"RTX 5070", "NVIDIA GeForce RTX 5070", 0.672, kUnsure, kUnsure, kUnsure},
}};

}  // namespace

std::optional<DeviceCeilings> find_ceilings(std::string_view cuda_name) {
  for (const auto& d : kTable)
    if (d.cuda_name == cuda_name) return d;
  return std::nullopt;
}

}  // namespace kd
