// After a device-side assert in L4.model_run the worker's CUDA context is unusable, so the same --model runs
// on the same --input on the CPU in a fresh process: this internal mode (its run plan sets cpu_rerun). It prints one
// line, "ok" or "error: <the CPU's message>", and exits 0, or with the code of what failed (2, 3, 13, 9).
#pragma once
#include "contract/options.h"

namespace kd {

int run_model_rerun(const Options& options);

}  // namespace kd
