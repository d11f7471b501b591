// kernodeck-diagnostic and kernodeck-diagnostic-full: one entry point for users, ctest and --gtest_filter alike, and
// for every process they start. run_program() works out what this process is (contract/process_role.h: the
// supervisor, the NVML child, or a planned role: the worker or a job a step starts) and switches on it. Compiled once
// for both programs; what differs between them is in runner/main.cpp and suites/layers.cpp, each compiled per program.
#pragma once
#include <string>
#include <vector>

namespace kd {

struct Plan;  // contract/run_plan.h

// What kernodeck-diagnostic-full runs besides the supervisor, the worker and the NVML child: the jobs that L4's and
// L5's steps start, and `aggregate`. Null in kernodeck-diagnostic, which hands them over (fixtures/full_program.h).
struct HeldCommands {
  int (*batch_job)(const Plan&) = nullptr;    // L4's stop/resume step (runner/batch_job.h)
  int (*shard_job)(const Plan&) = nullptr;    // L4 across devices (runner/shard_job.h)
  int (*range_job)(const Plan&) = nullptr;    // L5's processes axis (runner/range_job.h)
  int (*model_rerun)(const Plan&) = nullptr;  // L4.model_run after a device-side assert (runner/model_rerun.h)
  int (*aggregate)(const std::vector<std::string>& args) = nullptr;  // runner/aggregate_command.h
};

const HeldCommands& held_commands();  // this program's (runner/main.cpp)

int run_program(int argc, char** argv);  // main()'s whole work; returns its exit code or ends the process itself

}  // namespace kd
