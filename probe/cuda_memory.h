// The CUDA caching allocator's counters for one device (CUDA builds only: compiled like
// probe_cuda.cpp). getDeviceStats throws "Invalid device argument" before the first
// allocation on a device, so callers ask only once something was allocated there.
#pragma once
#include "probe_api.h"

namespace kd_probe {
kd_memory_counters memory_counters(int index);  // throws c10::Error
void reset_peak(int index);
}  // namespace kd_probe
