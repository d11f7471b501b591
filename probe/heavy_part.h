// The probe's heavy part, libkd_probe_heavy.so beside libkd_probe.so: L4's models (TorchScript, AOTInductor),
// its built-in workloads and extensions, L5's memory workload and range sweep, L6's timing and ceilings, L7's
// peer copies and all-reduce, L8's collective. It is a library of its own so that a first run (L1-L3) builds
// only what it uses: these sources take most of the build.
// libkd_probe.so's table forwards these entries to it, loading it at the first call.
#pragma once
#include "probe_api.h"
#include "probe_status.h"

#define KD_PROBE_HEAVY_ENTRY "kd_probe_heavy_get"
#define KD_PROBE_HEAVY_LIBRARY "libkd_probe_heavy.so"

namespace kd::probe {

// The heavy part's table (only its own entries set), or null with why not (loaded once): KD_ERR_INCOMPLETE when it is
// not built or is from another build (the suite's gap), KD_ERR_LIBRARY with the loader's words when it does not load.
const kd_probe_table* heavy_table(kd_status* why);
kd_status heavy_part();  // the table's entry: loads it now

// An entry of kd_probe_table that calls the heavy part's own: Forward<&kd_probe_table::model_load>::call.
template <auto Field>
struct Forward;
template <class... A, kd_status (*kd_probe_table::*Field)(A...)>
struct Forward<Field> {
  static kd_status call(A... a) {
    kd_status why{};
    const kd_probe_table* t = heavy_table(&why);
    return t ? (t->*Field)(a...) : why;
  }
};

}  // namespace kd::probe
