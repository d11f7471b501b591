// Stand-ins for builds whose LibTorch has no CUDA library to link: the worker only
// calls these after the build declared a GPU backend, so they say why they cannot help.
#include <stdexcept>

#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {
namespace {
kd_status unsupported() {
  return make_status(KD_ERR_UNSUPPORTED, "this probe was built without GPU support for the LibTorch it loaded");
}
}  // namespace
kd_status gpu_state(kd_gpu_state*) { return unsupported(); }
kd_status device_props(int, kd_device_props*) { return unsupported(); }
kd_status synchronize(int) { return unsupported(); }
kd_status spin_forever(int) { return unsupported(); }
void synchronize_or_throw(int) { throw std::runtime_error(unsupported().message); }
void timed_on_device(int, const std::function<void()>&, double*, double*) { throw std::runtime_error(unsupported().message); }
kd_status ceiling(int, int, int64_t, kd_ceiling_out*) { return unsupported(); }
kd_status memory_counters(int, kd_memory_counters*) { return unsupported(); }
void on_pool_stream(int, const std::function<void()>&) { throw std::runtime_error(unsupported().message); }
void stream_synchronize_or_throw(int) { throw std::runtime_error(unsupported().message); }
kd_memory_counters memory_now(int) { throw std::runtime_error(unsupported().message); }
void memory_reset_peak(int) { throw std::runtime_error(unsupported().message); }
void memory_empty_cache() { throw std::runtime_error(unsupported().message); }
void memory_set_fraction(int, double) { throw std::runtime_error(unsupported().message); }
void memory_release_blas_workspaces() { throw std::runtime_error(unsupported().message); }
kd_status peer_copy(int, int, int64_t, int, int, kd_peer_copy_out*) { return unsupported(); }
}  // namespace kd::probe
