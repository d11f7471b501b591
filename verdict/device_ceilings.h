// What a device should reach, from its vendor's datasheet (docs/DEVICE_CEILINGS.md names
// each source). Dense figures (no sparsity). A figure we are not sure of is absent, so no
// fraction is claimed for it. Torch-free: unit-tested name matching.
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace kd {

struct DeviceCeilings {
  std::string_view key;        // "H200": how the report names the reference
  std::string_view cuda_name;  // the name CUDA reports, matched exactly
  std::optional<double> memory_tb_s;   // memory bandwidth, TB/s (1e12 bytes/s)
  std::optional<double> bf16_tflops;   // dense bf16 tensor (fp32 accumulate), TFLOP/s
  std::optional<double> fp32_tflops;   // fp32 without tensor cores, TFLOP/s
  std::optional<double> tf32_tflops;   // dense TF32 tensor, TFLOP/s
};

// The reference for a device name as CUDA reports it; nullopt for a device not in the table.
std::optional<DeviceCeilings> find_ceilings(std::string_view cuda_name);

}  // namespace kd
