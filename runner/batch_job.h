// L4's stop-and-resume subject: a small batch job of kernodeck-diagnostic-full (its plan's role: BatchJob, naming
// its folder DIR). It embeds ids 0..63 in batches of 8 through the probe on the target
// device, appends one checksummed record per id to DIR/records.jsonl and commits each batch
// with DIR/checkpoint.json (written aside, fsynced, renamed). On start it resumes from the
// checkpoint and cuts the file back to it, which drops uncommitted and torn records.
// SIGTERM: the batch in progress is finished and committed, then it exits with kBatchJobStopped. It says JobDone when
// every batch is done, or JobFailed with what failed.
#pragma once

namespace kd {

struct Plan;  // contract/run_plan.h

int run_batch_job(const Plan& plan);

}  // namespace kd
