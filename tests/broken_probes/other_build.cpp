// See CMakeLists.txt: a probe, and a probe's heavy part, of an earlier build of the suite (the interface before this one).
#include "probe/probe_api.h"

namespace {
kd_probe_table earlier_table() {
  kd_probe_table t{};
  t.abi_version = KD_PROBE_ABI_VERSION - 1;
  return t;
}
const kd_probe_table kTable = earlier_table();
}  // namespace

extern "C" __attribute__((visibility("default"))) const kd_probe_table* kd_probe_get() { return &kTable; }
extern "C" __attribute__((visibility("default"))) const kd_probe_table* kd_probe_heavy_get() { return &kTable; }
