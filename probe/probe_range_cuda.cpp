// CUDA-only part of the L5 operating range (see range_device.h).
#include <c10/cuda/CUDACachingAllocator.h>

#include "cuda_memory.h"
#include "range_device.h"

namespace kd::probe::range {

void set_memory_fraction(int index, double fraction) {
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, static_cast<c10::DeviceIndex>(index));
}

kd_memory_counters counters(int index) { return kd_probe::memory_counters(index); }

void reset_peak(int index) { kd_probe::reset_peak(index); }

void release_cache(int) { c10::cuda::CUDACachingAllocator::emptyCache(); }

}  // namespace kd::probe::range
