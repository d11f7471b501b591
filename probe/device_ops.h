// What only a GPU build of the probe can do. probe_cuda.cpp implements it for CUDA
// builds; probe_no_gpu.cpp for builds without CUDA (Debian's CPU-only LibTorch).
#pragma once
#include <functional>

#include "probe_api.h"

namespace kd::probe {
kd_status gpu_state(kd_gpu_state* out);
kd_status device_props(int index, kd_device_props* out);
kd_status synchronize(int index);
kd_status spin_forever(int index);  // test-only: a kernel that never lets synchronize return in time

// L6. These throw (call them inside guarded()).
void synchronize_or_throw(int index);
// Runs fn between two device synchronizations: host_ms by the host clock at those edges,
// event_ms by CUDA events recorded on the current stream around the same region.
void timed_on_device(int index, const std::function<void()>& fn, double* host_ms, double* event_ms);
kd_status ceiling(int index, int kind, int64_t copy_bytes, kd_ceiling_out* out);  // kd_ceiling_kind
kd_status memory_counters(int index, kd_memory_counters* out);  // the table's entry (probe_memory_cuda.cpp)
// L5's concurrency axis (these throw): fn runs with a stream of the pool as this thread's current
// stream of the device; stream_synchronize_or_throw waits for the calling thread's current stream only.
void on_pool_stream(int index, const std::function<void()>& fn);
void stream_synchronize_or_throw(int index);

// L5 and its operating range (these throw; probe_memory_cuda.cpp). The caching allocator of one device.
kd_memory_counters memory_now(int index);
void memory_reset_peak(int index);
void memory_empty_cache();                             // returns cached, unreferenced memory to the driver
void memory_set_fraction(int index, double fraction);  // caps what the allocator may hold (1: the whole device)
// cuBLAS keeps a workspace from the caching allocator for each stream that ran a product: the
// concurrency axis's pool streams would read as memory its point kept. Frees them (they come back on use).
void memory_release_blas_workspaces();
// L7 (probe_peer_cuda.cpp). all_reduce lives in probe_all_reduce_nccl.cpp where LibTorch has the NCCL
// process group, else in probe_all_reduce_none.cpp, which says so.
kd_status peer_copy(int src, int dst, int64_t bytes, int repeats, int fault, kd_peer_copy_out* out);
kd_status all_reduce(const int* devices, int count, kd_all_reduce_out* out);
}  // namespace kd::probe
