// What a process of this tool is; runner/main.cpp switches on it. The supervisor is the user's command; the NVML
// child's two roles are chosen by a flag (--kd-nvml-facts, --kd-nvml-watch: contract/options.h's flag_role), since
// they need no options; every other role comes with a run plan (contract/run_plan.h).
#pragma once

namespace kd {

enum class ProcessRole {
  Supervisor,  // the user's command: starts the workers, decides, writes the report
  NvmlFacts,   // the NVML child's facts (fixtures/nvml_facts.h)
  NvmlWatch,   // the NVML child's watch over the measuring layers' GPUs (fixtures/nvml_sharing.h)
  Worker,      // runs the selected layers under GoogleTest (runner/worker.h)
  BatchJob,    // L4's stop/resume batch job (runner/batch_job.h)
  ShardJob,    // one shard of L4 across devices (runner/shard_job.h)
  RangeJob,    // one process of L5's processes axis (runner/range_job.h)
  ModelRerun,  // the CPU re-run of --model after a device-side assert (runner/model_rerun.h)
};

}  // namespace kd
