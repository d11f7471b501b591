// --floors FILE: the floors an operator calibrated for each SKU (docs/fleets.md "Floors per SKU"), as absolute figures
// by the device's name as CUDA reports it ("NVIDIA H200"): L6's copy bandwidth and matrix products, L8's bus
// bandwidth. An entry overrides the default fractions and the options for that device. The file is checked whole
// before anything runs: anything but a JSON object of known keys and numbers in range is a usage error (2).
//   {"devices": {"NVIDIA H200": {"copy_tb_s": 3.9, "matmul_bf16_tflops": 620, "bus_bandwidth_gb_s": 150}}}
// Pure: unit-tested.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd::floors {

inline constexpr size_t kMaxFileBytes = 64 * 1024;
inline constexpr size_t kMaxDevices = 256;

struct KeyInfo {
  const char* key;   // "copy_tb_s"
  const char* what;  // "L6's copy bandwidth"
  const char* unit;  // "TB/s"
  double max;        // the largest value accepted (the smallest: above 0)
};
const std::vector<KeyInfo>& keys();

// The file's text checked: the table as a JSON object ({device name: {key: value}}), or why it is not one.
std::variant<nlohmann::json, std::string> parse(const std::string& text);

// The table's floor of key for a device's name; nothing when the table (null: no file) has none.
std::optional<double> lookup(const nlohmann::json& table, const std::string& device_name, const std::string& key);

}  // namespace kd::floors
