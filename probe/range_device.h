// What the L5 operating range needs from a GPU build: the allocator's cap and counters.
// probe_range_cuda.cpp implements it for CUDA builds; probe_range_no_gpu.cpp says why a
// build without CUDA cannot. All of them throw (call them inside guarded()).
#pragma once
#include "probe_api.h"

namespace kd::probe::range {
void set_memory_fraction(int index, double fraction);  // the caching allocator's share of the device
kd_memory_counters counters(int index);                // only after something was allocated on the device
void reset_peak(int index);
void release_cache(int index);                         // emptyCache: cached blocks back to the driver
}  // namespace kd::probe::range
