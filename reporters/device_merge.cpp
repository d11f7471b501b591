#include "device_merge.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "contract/report_fields.h"
#include "verdict/json_read.h"

namespace kd {
namespace {

using nlohmann::json;
using json_read::field;

bool passed(const json& r) { return report::read(r, report::status) == "passed"; }

json device_entry(int index, const json& r) {
  using report::to_value, report::read;
  const json& name = field(read(r, report::device), "name");
  return {{"index", index},
          {"name", name.is_string() ? name : json()},
          {"code", to_value(read(r, report::code))},
          {"exit_code", to_value(read(r, report::exit_code))},
          {"stage", to_value(read(r, report::stage))},
          {"message", to_value(read(r, report::error_message))}};
}

// Each distinct warning once, naming the GPUs that gave it unless every one did.
json device_warnings(const std::vector<json>& per_device) {
  std::vector<std::pair<std::string, std::vector<size_t>>> seen;
  for (size_t i = 0; i < per_device.size(); ++i)
    for (const auto& w : field(per_device[i], "warnings")) {
      if (!w.is_string()) continue;
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == w.get<std::string>(); });
      if (it == seen.end()) it = seen.insert(seen.end(), {w.get<std::string>(), {}});
      if (it->second.empty() || it->second.back() != i) it->second.push_back(i);
    }
  json out = json::array();
  for (const auto& [text, gpus] : seen)
    out.push_back(gpus.size() == per_device.size() ? text : fmt::format("GPU {}: {}", fmt::join(gpus, ", "), text));
  return out;
}

// The peer layer's facts and L7 results; its verdict when it is the only failure.
void merge_peer(json* merged, const json& peer, bool a_device_failed) {
  (*merged)["peer"] = field(peer, "peer");
  for (auto& layer : (*merged)["layers"])
    for (const auto& pl : field(peer, "layers"))
      if (field(layer, "id") == "L7" && field(pl, "id") == "L7") layer = pl;
  json& warnings = (*merged)["warnings"];
  for (const auto& w : field(peer, "warnings"))
    if (w.is_string() && std::find(warnings.begin(), warnings.end(), w) == warnings.end())
      warnings.push_back("peer layer: " + w.get<std::string>());
  if (a_device_failed || passed(peer)) return;
  for (const char* key : {"status", "code", "exit_code", "stage", "error", "next_action"}) (*merged)[key] = field(peer, key);
}

// L8 runs in GPU 0's worker only (one rank per machine): its facts and layer entry stay when another GPU decides.
void merge_collective(json* merged, const json& first) {
  (*merged)["collective"] = field(first, "collective");
  for (const auto& fl : field(first, "layers")) {
    if (field(fl, "id") != "L8") continue;
    json& layers = (*merged)["layers"];
    auto it = std::find_if(layers.begin(), layers.end(), [](const json& l) { return field(l, "id") == "L8"; });
    if (it == layers.end())
      layers.push_back(fl);
    else
      *it = fl;
  }
}

}  // namespace

int visible_device_count(const json& report) {
  return static_cast<int>(std::max<int64_t>(0, report::read(report, report::pytorch_visible_device_count).value_or(0)));
}

json merge_device_reports(const std::vector<json>& per_device, const json& peer, const std::vector<int>& indices) {
  auto gpu = [&](size_t i) { return i < indices.size() ? indices[i] : static_cast<int>(i); };
  if (per_device.empty()) return json();
  const bool any_gpu = visible_device_count(per_device[0]) > 0;
  const auto failed = std::find_if(per_device.begin(), per_device.end(), [](const json& r) { return !passed(r); });
  const bool a_device_failed = failed != per_device.end();
  json merged = a_device_failed ? *failed : per_device[0];
  json devices = json::array();
  for (size_t i = 0; any_gpu && i < per_device.size(); ++i) devices.push_back(device_entry(gpu(i), per_device[i]));
  merged["devices"] = devices;
  merged["device_index"] = a_device_failed && any_gpu ? json(gpu(static_cast<size_t>(failed - per_device.begin()))) : json();
  merged["requested"] = field(per_device[0], "requested");
  merged["requested"]["device_index"] = nullptr;
  merged["requested"]["all_devices"] = true;
  merged["warnings"] = device_warnings(per_device);
  merge_collective(&merged, per_device[0]);
  if (!peer.is_null()) merge_peer(&merged, peer, a_device_failed);
  return merged;
}

}  // namespace kd
