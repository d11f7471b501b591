// Runs a helper program (nvidia-smi, the user's Python) with a hard time limit, capturing
// its standard output (through spawn()). Used by the supervisor and the worker alike.
#pragma once
#include <string>
#include <vector>

namespace kd {

struct ProcessResult {
  bool started = false;    // false: the program could not be executed (spawn() said so)
  bool timed_out = false;  // killed at the limit
  int exit_status = -1;    // valid when it exited
  int signal = 0;          // killed by this signal
  std::string output;      // stdout (and stderr when merged)
  double seconds = 0;
};

// own_group: put it in a process group of its own, so that a timeout also ends what it started.
// The worker's helpers stay in the worker's group instead, so that the supervisor's kill reaches them.
ProcessResult run_process(const std::vector<std::string>& argv, double limit_s, bool merge_stderr, bool own_group = true);

// The executable NAME would run as ("nvidia-smi" -> "/usr/bin/nvidia-smi"); a name with a '/'
// is checked as given. "" when there is none.
std::string find_executable(const std::string& name);

}  // namespace kd
