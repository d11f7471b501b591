// --device-index all: the reports of one worker per GPU (and of the peer layer's worker)
// merged into one report. Pure, so that "the first failing GPU decides" is unit-tested.
#pragma once
#include <vector>

#include <nlohmann/json.hpp>

namespace kd {

// pytorch.visible_device_count of a report, 0 when it is unknown (the GPU was never reached).
int visible_device_count(const nlohmann::json& report);

// per_device: the reports of GPU 0, 1, ... in order (GPU 0's alone when it found no GPU);
// peer: the peer layer's report, or null when it did not run. The result is the report of the
// first GPU that failed (else GPU 0's) with: `devices` (one verdict per GPU), `device_index`
// (the GPU whose failure decided, else null), `requested.all_devices`, and, when the peer layer
// ran, its `peer` facts and L7 results; when only the peer layer failed, its verdict.
// indices: each report's GPU (a --device-index list); empty: 0, 1, 2, ...
nlohmann::json merge_device_reports(const std::vector<nlohmann::json>& per_device, const nlohmann::json& peer,
                                    const std::vector<int>& indices = {});

}  // namespace kd
