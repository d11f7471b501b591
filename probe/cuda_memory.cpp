// The C++ equivalents of torch.cuda.memory_allocated, memory_reserved, max_memory_allocated,
// reset_peak_memory_stats and mem_get_info, for one device.
#include "cuda_memory.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/util/Exception.h>

#include <string>

namespace kd_probe {
namespace {

constexpr size_t kAggregate = 0;  // StatType::AGGREGATE, index 0 in every LibTorch version (the enum moved namespaces)

// getDeviceStats and resetPeakStats throw "Invalid device argument" until the allocator has made its first
// allocation in this process (its per-device state does not exist yet). We treat that as zeros / nothing to
// reset, which is the truth then: the allocator holds nothing. A real bad index is refused before, by device_count.
bool allocator_not_started(const c10::Error& e) {
  return std::string(e.what_without_backtrace()).find("Invalid device argument") != std::string::npos;
}

void check_index(int index) {
  TORCH_CHECK(index >= 0 && index < c10::cuda::device_count(), "device index ", index, " is not a visible CUDA device");
}

}  // namespace

kd_memory_counters memory_counters(int index) {
  check_index(index);
  kd_memory_counters c{};
  const auto device = static_cast<c10::DeviceIndex>(index);
  try {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device);
    c.allocated = static_cast<uint64_t>(stats.allocated_bytes[kAggregate].current);
    c.reserved = static_cast<uint64_t>(stats.reserved_bytes[kAggregate].current);
    c.peak_allocated = static_cast<uint64_t>(stats.allocated_bytes[kAggregate].peak);
  } catch (const c10::Error& e) {
    if (!allocator_not_started(e)) throw;
  }
  c10::cuda::CUDAGuard guard(device);
  size_t free = 0, total = 0;
  C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  c.device_free = free;
  c.device_total = total;
  return c;
}

void reset_peak(int index) {
  check_index(index);
  try {
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(index));
  } catch (const c10::Error& e) {
    if (!allocator_not_started(e)) throw;
  }
}

}  // namespace kd_probe
