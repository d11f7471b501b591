// L8 collective (probe_collective.cpp where LibTorch exports its Gloo process group, else
// probe_collective_none.cpp, which says so). See probe_api.h for each step.
#pragma once
#include "probe_api.h"

namespace kd::probe {
kd_status collective_join(const kd_collective_in* in, kd_collective_join_out* out);
kd_status collective_all_reduce(kd_collective_check_out* out);
kd_status collective_broadcast(kd_collective_check_out* out);
kd_status collective_barrier(kd_collective_check_out* out);
kd_status collective_bandwidth(const int64_t* bytes, int count, double seconds_per_size, kd_collective_bandwidth_out* out);
kd_status collective_end();
}  // namespace kd::probe
