// Waiting for a child started by spawn(), ending it, and saying how it ended.
#pragma once
#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>

namespace kd {

int wait_exit(pid_t pid);  // blocks until the child ends: its wait status
// Its wait status once it has ended, or nullopt when it still runs at `until` (or is no child of ours).
std::optional<int> reap_until(pid_t pid, std::chrono::steady_clock::time_point until);
void kill_group(pid_t leader);  // SIGKILL to the process group it leads (what it started goes too) and to itself

struct Ending {
  bool exited = false;  // exited normally: exit_status is valid
  int exit_status = -1;
  int signal = 0;  // killed by this signal
};
Ending decode_wait_status(int status);
std::string how_it_ended(int status);  // "exit status 9", "killed by signal 9"

}  // namespace kd
