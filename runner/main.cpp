// The entry of both programs (runner/program.h), and what this one holds besides L1-L3: compiled once per program.
// kernodeck-diagnostic-full (KD_FULL_PROGRAM) also holds `aggregate` and the jobs L4's and L5's steps start;
// kernodeck-diagnostic hands what needs them over to it (fixtures/full_program.h). Its layers: suites/layers.cpp.
#include "runner/program.h"

#ifdef KD_FULL_PROGRAM
#include "runner/aggregate_command.h"
#include "runner/batch_job.h"
#include "runner/model_rerun.h"
#include "runner/range_job.h"
#include "runner/shard_job.h"
#endif

const kd::HeldCommands& kd::held_commands() {
#ifdef KD_FULL_PROGRAM
  static const HeldCommands held{&run_batch_job, &run_shard_job, &run_range_job, &run_model_rerun,
                                 &run_aggregate_command};
#else
  static const HeldCommands held{};
#endif
  return held;
}

int main(int argc, char** argv) { return kd::run_program(argc, argv); }
