// One process of L5's processes axis, an internal mode of this executable (its run plan sets range_job_share):
// it runs the fixed L4 embeddings workload once through the probe (one cold, a few warm passes)
// and prints one JSON line per phase it enters ({"phase": "load"|"workload"}), then its result:
// {"result", "phase", "seconds", "warm_median_ms", "cold_ms", "rss_peak_bytes", "device_peak_bytes",
// "device_reserved_bytes", "device_total_bytes" (GPU), "note"}. On a GPU its caching allocator is capped at SHARE of the device
// (the sweep's cap divided among the processes). Exit: 0 passed, 9 out of memory, 1 otherwise.
#pragma once
#include "contract/options.h"

namespace kd {

int run_range_job(const Options& options);

}  // namespace kd
