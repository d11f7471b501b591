#include "cuda_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

namespace kd_probe {

kd_memory_counters memory_counters(int index) {
  const auto device = static_cast<c10::DeviceIndex>(index);
  const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
  constexpr size_t kAll = 0;  // StatType::AGGREGATE in every LibTorch (the enum changed namespace in 2.6)
  kd_memory_counters c{};
  c.allocated = static_cast<uint64_t>(stats.allocated_bytes[kAll].current);
  c.reserved = static_cast<uint64_t>(stats.reserved_bytes[kAll].current);
  c.peak_allocated = static_cast<uint64_t>(stats.allocated_bytes[kAll].peak);
  c10::cuda::CUDAGuard guard(device);
  size_t free = 0, total = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  c.device_free = free;
  c.device_total = total;
  return c;
}

void reset_peak(int index) { c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index)); }

}  // namespace kd_probe
