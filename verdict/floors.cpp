#include "floors.h"

#include <cmath>

#include <fmt/format.h>

namespace kd::floors {
namespace {

using nlohmann::json;

// Names are shown in messages: printable, short.
std::optional<std::string> bad_name(const std::string& name) {
  if (name.empty()) return std::string("a device name is empty");
  if (name.size() > 128) return fmt::format("the device name '{}...' is longer than 128 characters", name.substr(0, 32));
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f) return std::string("a device name holds a control character");
  return std::nullopt;
}

}  // namespace

const std::vector<KeyInfo>& keys() {
  static const std::vector<KeyInfo> k = {
      {"copy_tb_s", "L6's copy bandwidth", "TB/s", 100},
      {"matmul_bf16_tflops", "L6's bf16 matrix product", "TFLOP/s", 100000},
      {"matmul_fp32_tflops", "L6's fp32 matrix product (TF32 off)", "TFLOP/s", 100000},
      {"matmul_tf32_tflops", "L6's TF32 matrix product", "TFLOP/s", 100000},
      {"bus_bandwidth_gb_s", "L8's all-reduce bus bandwidth at its largest size", "GB/s", 100000},
  };
  return k;
}

std::variant<json, std::string> parse(const std::string& text) {
  if (text.size() > kMaxFileBytes) return fmt::format("the file is larger than {} KiB", kMaxFileBytes / 1024);
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    return fmt::format("not JSON: {}", e.what());
  }
  if (!doc.is_object()) return std::string("the file must be a JSON object: {\"devices\": {\"NVIDIA H200\": {...}}}");
  for (const auto& [key, _] : doc.items())
    if (key != "devices") return fmt::format("unknown key '{}' (the file has one key: devices)", key);
  const auto devices = doc.find("devices");
  if (devices == doc.end() || !devices->is_object() || devices->empty())
    return std::string("'devices' must be an object with at least one device name, as CUDA reports it (\"NVIDIA H200\")");
  if (devices->size() > kMaxDevices) return fmt::format("more than {} devices", kMaxDevices);
  json table = json::object();
  for (const auto& [name, entry] : devices->items()) {
    if (auto why = bad_name(name)) return *why;
    if (!entry.is_object() || entry.empty())
      return fmt::format("devices.\"{}\" must be an object with at least one floor ({})", name, [] {
        std::string all;
        for (const KeyInfo& k : keys()) all += (all.empty() ? "" : ", ") + std::string(k.key);
        return all;
      }());
    for (const auto& [key, value] : entry.items()) {
      const KeyInfo* info = nullptr;
      for (const KeyInfo& k : keys())
        if (key == k.key) info = &k;
      if (!info) return fmt::format("devices.\"{}\": unknown key '{}'", name, key);
      if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() <= 0 ||
          value.get<double>() > info->max)
        return fmt::format("devices.\"{}\".{} must be a number of {} above 0 and at most {:g} ({}), not {}", name, key,
                           info->unit, info->max, info->what, value.dump());
      table[name][key] = value.get<double>();
    }
  }
  return table;
}

std::optional<double> lookup(const json& table, const std::string& device_name, const std::string& key) {
  if (!table.is_object()) return std::nullopt;
  const auto device = table.find(device_name);
  if (device == table.end() || !device->is_object()) return std::nullopt;
  const auto value = device->find(key);
  if (value == device->end() || !value->is_number()) return std::nullopt;
  return value->get<double>();
}

}  // namespace kd::floors
