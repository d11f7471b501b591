// The all-reduce step for a LibTorch without the NCCL process group (CPU-only builds such as
// Debian's 1.13, builds without USE_C10D_NCCL, or no nccl.h found at build time): it says so,
// and the step shows it as "not supported", never as a pass.
#include "device_ops.h"
#include "probe_status.h"

namespace kd::probe {
kd_status all_reduce(const int*, int, kd_all_reduce_out* out) {
  *out = kd_all_reduce_out{};
  return make_status(KD_ERR_UNSUPPORTED,
                     "not supported by this LibTorch: the probe was built without LibTorch's NCCL process group");
}
}  // namespace kd::probe
