// L5's allocator and stream operations on a CUDA device. CUDA-only, like probe_cuda.cpp.
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/ops/empty.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "cuda_memory.h"
#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {

kd_memory_counters memory_now(int index) { return kd_probe::memory_counters(index); }
kd_status memory_counters(int index, kd_memory_counters* out) {
  return guarded([&] { *out = memory_now(index); });
}
void memory_reset_peak(int index) { kd_probe::reset_peak(index); }
void memory_empty_cache() { c10::cuda::CUDACachingAllocator::emptyCache(); }
void memory_set_fraction(int index, double fraction) {
  // The allocator of a device exists once CUDA made its first allocation there: in a fresh process (L5's
  // processes axis) setMemoryFraction would throw "Allocator not initialized for device".
  at::empty({1}, at::TensorOptions().dtype(at::kByte).device(at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index))));
  c10::cuda::CUDACachingAllocator::setMemoryFraction(fraction, static_cast<c10::DeviceIndex>(index));
}
void memory_release_blas_workspaces() { at::cuda::clearCublasWorkspaces(); }

void on_pool_stream(int index, const std::function<void()>& fn) {
  c10::cuda::CUDAGuard device(static_cast<c10::DeviceIndex>(index));
  c10::cuda::CUDAStreamGuard stream(c10::cuda::getStreamFromPool(false, static_cast<c10::DeviceIndex>(index)));
  fn();
}

void stream_synchronize_or_throw(int index) {
  c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(index)).synchronize();
}

}  // namespace kd::probe
