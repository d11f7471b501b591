// What only a GPU build of the probe can do. probe_cuda.cpp implements it for CUDA
// builds; probe_no_gpu.cpp for builds without CUDA (Debian's CPU-only LibTorch).
#pragma once
#include "probe_api.h"

namespace kd::probe {
kd_status gpu_state(kd_gpu_state* out);
kd_status device_props(int index, kd_device_props* out);
kd_status synchronize(int index);
kd_status spin_forever(int index);  // test-only: a kernel that never lets synchronize return in time
}  // namespace kd::probe
