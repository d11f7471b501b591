// CUDA-only probe code, in its own translation unit: CPU-only LibTorch builds
// (Debian's 1.13) do not ship the CUDA headers this needs.
#include <ATen/cuda/CUDAContextLight.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {

kd_status gpu_state(kd_gpu_state* out) {
  *out = kd_gpu_state{};
  // device_count() swallows the reason; device_count_ensure_non_zero() throws it.
  kd_status s = guarded([&] { out->device_count = c10::cuda::device_count_ensure_non_zero(); });
  out->available = s.kind == KD_OK && out->device_count > 0;
  if (s.kind != KD_OK) {
    copy_to(out->reason, sizeof out->reason, s.message);
    s = ok_status();  // an unavailable GPU is a finding, not a probe failure
  }
  return s;
}

kd_status device_props(int index, kd_device_props* out) {
  return guarded([&] {
    *out = kd_device_props{};
    const cudaDeviceProp* p = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    copy_to(out->name, sizeof out->name, p->name);
    out->major = p->major;
    out->minor = p->minor;
    out->total_memory_bytes = p->totalGlobalMem;
    out->multiprocessors = p->multiProcessorCount;
    out->pci_domain = p->pciDomainID;  // HIP's device properties have the same three fields
    out->pci_bus = p->pciBusID;
    out->pci_device = p->pciDeviceID;
    // CUDA 13's cudaDeviceProp has no computeMode: the attribute is the one way in every version.
    if (cudaDeviceGetAttribute(&out->compute_mode, cudaDevAttrComputeMode, index) != cudaSuccess) {
      (void)cudaGetLastError();
      out->compute_mode = -1;  // unknown
    }
  });
}

kd_status synchronize(int index) {
  return guarded([&] {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    c10::cuda::device_synchronize();
  });
}

kd_status spin_forever(int index) {
  return guarded([&] {
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(index));
    for (int i = 0; i < 100000; ++i) at::cuda::sleep(int64_t(1) << 30);  // ~0.6 s each: hours queued
    c10::cuda::device_synchronize();
  });
}

}  // namespace kd::probe
