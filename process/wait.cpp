#include "wait.h"

#include <sys/wait.h>

#include <cerrno>
#include <csignal>
#include <thread>

namespace kd {

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::optional<int> reap_until(pid_t pid, std::chrono::steady_clock::time_point until) {
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if ((r < 0 && errno != EINTR) || std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void kill_group(pid_t leader) {
  ::kill(-leader, SIGKILL);
  ::kill(leader, SIGKILL);  // and itself, should it have moved to another group
}

Ending decode_wait_status(int status) {
  Ending e;
  if (WIFEXITED(status)) {
    e.exited = true;
    e.exit_status = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  }
  return e;
}

std::string how_it_ended(int status) {
  const Ending e = decode_wait_status(status);
  if (e.signal) return "killed by signal " + std::to_string(e.signal);
  return "exit status " + std::to_string(e.exit_status);
}

}  // namespace kd
