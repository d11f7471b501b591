#include "run_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>

#include "spawn.h"
#include "wait.h"

namespace kd {

std::string find_executable(const std::string& name) {
  if (name.empty()) return "";
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t colon = dirs.find(':', start);
    std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return "";
}

ProcessResult run_process(const std::vector<std::string>& args, double limit_s, bool merge_stderr, bool own_group) {
  using Clock = std::chrono::steady_clock;
  ProcessResult r;
  const auto start = Clock::now();
  const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s));
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return r;
  SpawnSpec spec;
  spec.argv = args;
  spec.own_group = own_group;
  spec.in = Redirect::dev_null();
  spec.out = Redirect::to_fd(fds[1]);
  spec.err = merge_stderr ? Redirect::to_fd(fds[1]) : Redirect::dev_null();
  const Spawned child = spawn(spec);
  ::close(fds[1]);
  if (!child.started()) {
    ::close(fds[0]);
    return r;
  }
  r.started = true;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left)) <= 0) continue;
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      if (r.output.size() < (1u << 20)) r.output.append(buf, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  // Output closed: the program is ending; it gets what is left of the limit.
  std::optional<int> status = r.timed_out ? std::nullopt : reap_until(child.pid, deadline);
  if (!status) {
    r.timed_out = true;
    if (own_group)
      kill_group(child.pid);
    else
      ::kill(child.pid, SIGKILL);  // the caller's group: the caller's own kill reaches what it started
    status = wait_exit(child.pid);
  }
  const Ending end = decode_wait_status(*status);
  r.exit_status = end.exit_status;
  r.signal = end.signal;
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return r;
}

}  // namespace kd
