// L8 for a LibTorch that does not export its Gloo process group the way probe_collective.cpp uses it
// (Debian's 1.13 has no ProcessGroupGloo::Options::create_default): every step says so, and the layer
// shows "not applicable" with this reason, never a pass.
#include "probe_collective.h"
#include "probe_status.h"

namespace kd::probe {
namespace {
kd_status unsupported() {
  return make_status(KD_ERR_UNSUPPORTED,
                     "not supported by this LibTorch: the probe was built without LibTorch's Gloo process group");
}
}  // namespace
kd_status collective_join(const kd_collective_in*, kd_collective_join_out* out) {
  *out = kd_collective_join_out{};
  return unsupported();
}
kd_status collective_all_reduce(kd_collective_check_out*) { return unsupported(); }
kd_status collective_broadcast(kd_collective_check_out*) { return unsupported(); }
kd_status collective_barrier(kd_collective_check_out*) { return unsupported(); }
kd_status collective_bandwidth(const int64_t*, int, double, kd_collective_bandwidth_out*) { return unsupported(); }
kd_status collective_end() { return ok_status(); }
}  // namespace kd::probe
