// libkd_probe_heavy.so's entry point: its own entries of the probe table (heavy_part.h says why it is apart).
#include "device_ops.h"
#include "heavy_part.h"
#include "probe_app.h"
#include "probe_collective.h"

namespace kd::probe {
namespace {

kd_probe_table heavy_entries() {
  kd_probe_table t{};
  t.abi_version = KD_PROBE_ABI_VERSION;
  t.app_embeddings = app_embeddings;
  t.app_training = app_training;
  t.model_load = model_load;
  t.model_run = model_run;
  t.timing_segments = timing_segments;
  t.ceiling = ceiling;
  t.memory_workload = memory_workload;
  t.range_memory_fraction = range_memory_fraction;
  t.range_point = range_point;
  t.range_concurrent = range_concurrent;
  t.peer_copy = peer_copy;
  t.all_reduce = all_reduce;
  t.extension_load = extension_load;
  t.model_signature = model_signature;
  t.collective_join = collective_join;
  t.collective_all_reduce = collective_all_reduce;
  t.collective_broadcast = collective_broadcast;
  t.collective_barrier = collective_barrier;
  t.collective_bandwidth = collective_bandwidth;
  t.collective_end = collective_end;
  t.memory_counters = memory_counters;
  t.host_link = host_link;
  t.sustained = sustained;
  t.memory_integrity = memory_integrity;
  t.host_links_together = host_links_together;
  return t;
}

}  // namespace
}  // namespace kd::probe

extern "C" __attribute__((visibility("default"))) const kd_probe_table* kd_probe_heavy_get(void) {
  static const kd_probe_table table = kd::probe::heavy_entries();
  return &table;
}
