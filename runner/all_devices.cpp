#include "all_devices.h"

#include <algorithm>

#include <fmt/format.h>

#include "contract/report_fields.h"
#include "reporters/device_merge.h"

namespace kd {

std::vector<std::string> per_device_layers(const std::vector<std::string>& layers) {
  std::vector<std::string> out;
  std::copy_if(layers.begin(), layers.end(), std::back_inserter(out),
               [](const std::string& l) { return l != "L7" && l != "L8"; });
  if (out.empty() && !layers.empty()) out.push_back("L2");
  return out;
}

bool wants_peer_layer(const std::vector<std::string>& layers) {
  return layers.empty() || std::find(layers.begin(), layers.end(), "L7") != layers.end();
}

nlohmann::json check_all_devices(const Options& o, const RunOne& run_one, const std::function<bool()>& stopped) {
  Options each = o;
  each.all_devices = false;
  each.full = false;  // only the first GPU's worker has L8
  each.device_index_given = true;
  each.layers = per_device_layers(o.layers);
  std::vector<nlohmann::json> reports;
  std::vector<int> indices = o.device_list;  // a list: these GPUs, in its order; else 0, 1, ... up to the visible count
  each.device_index = indices.empty() ? 0 : indices[0];
  Options first = each;
  if (std::find(o.layers.begin(), o.layers.end(), "L8") != o.layers.end()) {
    first.layers.push_back("L8");  // this machine is one rank of the job: its first GPU joins the collective
    first.full = o.full;
  }
  reports.push_back(run_one(first, true));  // the first GPU's worker also splits L4 over every GPU
  const int count = visible_device_count(reports[0]);
  if (o.device_list.empty())
    for (int i = 0; i < count; ++i) indices.push_back(i);
  for (size_t i = 1; i < indices.size() && count > 0 && !stopped(); ++i) {
    each.device_index = indices[i];  // an index past the visible ones is its own worker's verdict (7)
    reports.push_back(run_one(each, false));
  }
  nlohmann::json peer;
  if (count >= 2 && wants_peer_layer(o.layers) && !stopped()) {
    Options p = each;
    p.device_index = indices[0];
    p.layers = {"L7"};
    peer = run_one(p, false);
  }
  indices.resize(std::min(indices.size(), reports.size()));
  nlohmann::json merged = merge_device_reports(reports, peer, indices);
  const size_t wanted = o.device_list.empty() ? static_cast<size_t>(count) : o.device_list.size();
  if (count > 0 && reports.size() < wanted)
    report::slot(&merged, report::warnings).push_back(o.device_list.empty()
                                     ? fmt::format("the run was interrupted: GPUs {} to {} were not checked", reports.size(), count - 1)
                                     : fmt::format("the run was interrupted: GPUs {} were not checked",
                                                   fmt::join(o.device_list.begin() + static_cast<long>(reports.size()), o.device_list.end(), ", ")));
  return merged;
}

}  // namespace kd
