// After a device-side assert in L4.model_run the worker's CUDA context is unusable, so the same --model runs on the
// same --input on the CPU in a fresh process: this job of kernodeck-diagnostic-full (its plan's role: ModelRerun).
// It says JobDone when the model ran, or JobFailed with the code and the CPU's message; exits 0, or with the exit
// code of what failed (2, 3, 13, 9).
#pragma once

namespace kd {

struct Plan;  // contract/run_plan.h

int run_model_rerun(const Plan& plan);

}  // namespace kd
