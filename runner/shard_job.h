// One shard of L4 across devices, a job of kernodeck-diagnostic-full (its plan's role: ShardJob, with the input ids):
// it computes the L4 input set's entries with these ids through the probe on its device (the plan's device and
// device index), as one rank of a data-parallel job would, or with --model the model's output rows for them, and
// says so as a ShardRows event (ids in its own output order, their rows) or a JobFailed (LibTorch's first line,
// OUT_OF_MEMORY or RUNTIME_ERROR). Exit: 0, 9 out of memory, 1.
// With --inject-fault oom (test only) it first makes a real allocation its device cannot satisfy.
#pragma once

namespace kd {

struct Plan;  // contract/run_plan.h

int run_shard_job(const Plan& plan);

}  // namespace kd
