#include "device_merge.h"

#include <algorithm>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd {
namespace {

using nlohmann::json;

bool passed(const json& r) { return report::read(r, report::status) == "passed"; }

json device_entry(int index, const json& r) {
  using report::put, report::read;
  json entry;
  put(&entry, report::gpu_index, index);
  put(&entry, report::gpu_name, read(read(r, report::device), report::device_name));
  report::slot(&entry, report::gpu_code) = report::json_at(r, report::code);  // as the GPU's report has it
  report::slot(&entry, report::gpu_exit_code) = report::json_at(r, report::exit_code);
  put(&entry, report::gpu_stage, read(r, report::stage));
  put(&entry, report::gpu_message, read(r, report::error_message));
  return entry;
}

// Each distinct warning once, naming the GPUs that gave it unless every one did.
std::vector<std::string> device_warnings(const std::vector<json>& per_device) {
  std::vector<std::pair<std::string, std::vector<size_t>>> seen;
  for (size_t i = 0; i < per_device.size(); ++i)
    for (const std::string& w : report::read(per_device[i], report::warnings).value_or(std::vector<std::string>{})) {
      auto it = std::find_if(seen.begin(), seen.end(), [&](const auto& s) { return s.first == w; });
      if (it == seen.end()) it = seen.insert(seen.end(), {w, {}});
      if (it->second.empty() || it->second.back() != i) it->second.push_back(i);
    }
  std::vector<std::string> out;
  for (const auto& [text, gpus] : seen)
    out.push_back(gpus.size() == per_device.size() ? text : fmt::format("GPU {}: {}", fmt::join(gpus, ", "), text));
  return out;
}

// A measurement's watch (who else was on the GPUs: /sharing/measurements/<stage>) kept from the report that made it.
void keep_watch(json* merged, const json& from, const char* stage) {
  const json& watched = report::read(from, report::sharing_measurements);
  if (watched.is_object() && watched.contains(stage)) report::slot(merged, report::sharing_measurements)[stage] = watched[stage];
}

// The peer layer's facts and L7 results; its verdict when it is the only failure.
void merge_peer(json* merged, const json& peer, bool a_device_failed) {
  using report::read;
  report::put(merged, report::section_peer, read(peer, report::section_peer));
  keep_watch(merged, peer, "L7.bandwidth");
  for (auto& layer : report::slot(merged, report::layers))
    for (const auto& pl : read(peer, report::layers))
      if (read(layer, report::layer_id) == "L7" && read(pl, report::layer_id) == "L7") layer = pl;
  json& warnings = report::slot(merged, report::warnings);
  for (const std::string& w : read(peer, report::warnings).value_or(std::vector<std::string>{}))
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back("peer layer: " + w);
  if (a_device_failed || passed(peer)) return;
  // The peer layer's verdict, as it wrote it.
  for (const report::FieldInfo* f : {&report::status.info, &report::code.info, &report::exit_code.info, &report::stage.info,
                                     &report::error.info, &report::next_action.info})
    (*merged)[json::json_pointer(f->pointer)] = report::value_at(peer, *f);
}

// L8 runs in GPU 0's worker only (one rank per machine): its facts and layer entry stay when another GPU decides.
void merge_collective(json* merged, const json& first) {
  report::put(merged, report::section_collective, report::read(first, report::section_collective));
  keep_watch(merged, first, "L8.bandwidth");
  for (const auto& fl : report::read(first, report::layers)) {
    if (report::read(fl, report::layer_id) != "L8") continue;
    json& layers = report::slot(merged, report::layers);
    auto it = std::find_if(layers.begin(), layers.end(), [](const json& l) { return report::read(l, report::layer_id) == "L8"; });
    if (it == layers.end())
      layers.push_back(fl);
    else
      *it = fl;
  }
}

// L6's host links of all GPUs at once are measured by GPU 0's worker: they stay when another GPU decides.
void keep_links_together(json* merged, const json& first) {
  const json& together = report::json_at(report::json_at(first, report::timing_host_link), report::host_link_together);
  if (!together.is_object() || !report::json_at(*merged, report::timing_host_link).is_object()) return;
  report::put(&report::slot(merged, report::timing_host_link), report::host_link_together, together);
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
  report::put(&merged, report::devices, devices);
  report::put(&merged, report::device_index,
              a_device_failed && any_gpu ? std::optional<int64_t>(gpu(static_cast<size_t>(failed - per_device.begin()))) : std::nullopt);
  json requested = report::read(per_device[0], report::requested);
  report::put(&requested, report::requested_device_index, std::nullopt);
  report::put(&requested, report::requested_all_devices, true);
  report::put(&merged, report::requested, requested);
  report::put(&merged, report::warnings, device_warnings(per_device));
  merge_collective(&merged, per_device[0]);
  keep_links_together(&merged, per_device[0]);
  if (!peer.is_null()) merge_peer(&merged, peer, a_device_failed);
  return merged;
}

}  // namespace kd
