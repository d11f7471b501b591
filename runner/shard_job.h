// One shard of L4 across devices, an internal mode of this executable (its run plan names IDS): it
// embeds the L4 input set's entries with these ids (comma-separated) through the probe on its
// device (the plan's device and device index), as one rank of a data-parallel job would, and prints one
// JSON line: {"ids": [...] in its own output order, "rows": [[...], ...], "error": null} or, when
// it failed, {"error": LibTorch's first line, "out_of_memory": bool}. Exit: 0, 9 out of memory, 1.
// With --inject-fault oom (test only) it first makes a real allocation its device cannot satisfy.
#pragma once
#include "contract/options.h"

namespace kd {

int run_shard_job(const Options& options);

}  // namespace kd
