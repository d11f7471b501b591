// L5: the CUDA caching allocator's counters for one device. CUDA-only, like probe_cuda.cpp.
#pragma once
#include "probe_api.h"

namespace kd_probe {
kd_memory_counters memory_counters(int index);  // throws c10::Error
void reset_peak(int index);
}  // namespace kd_probe
