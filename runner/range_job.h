// One process of L5's processes axis, a job of kernodeck-diagnostic-full (its plan's role: RangeJob, with its share
// of the allocator's cap): it runs the fixed L4 embeddings workload once through the probe (one cold, a few warm
// passes), says each phase it enters as a Stage event ("load", "workload"), then its record as a ProcessRecord
// event, the report's process row: result, phase, seconds, warm_median_ms, cold_ms, rss_peak_bytes,
// device_peak_bytes, device_reserved_bytes, device_total_bytes (GPU), note. On a GPU its caching allocator is capped
// at its share of the device (the sweep's cap divided among the processes). Exit: 0 passed, 9 out of memory, 1 otherwise.
#pragma once

namespace kd {

struct Plan;  // contract/run_plan.h

int run_range_job(const Plan& plan);

}  // namespace kd
