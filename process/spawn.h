// The one fork/exec of this project: helper programs (nvidia-smi, the user's Python), the worker, and the
// worker's own children. Everything the child needs is made before fork (argv, opened files), so that between
// fork and exec it calls only async-signal-safe functions: the worker forks with LibTorch's threads running,
// and a lock one of them held at the fork would stay held in the child for ever.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace kd {

// Where one of the child's standard streams goes (by default it inherits the parent's).
struct Redirect {
  enum class To { Inherit, DevNull, Fd, AppendFile };
  To to = To::Inherit;
  int fd = -1;       // To::Fd: this descriptor of the parent (a pipe's write end, STDERR_FILENO)
  std::string path;  // To::AppendFile: created (mode 0600) when absent, appended to

  static Redirect dev_null() { return {To::DevNull, -1, {}}; }
  static Redirect to_fd(int fd) { return {To::Fd, fd, {}}; }
  static Redirect append_to(std::string path) { return {To::AppendFile, -1, std::move(path)}; }
};

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is the program's path, run as given (no PATH search: find_executable)
  bool own_group = false;         // a process group of its own, so that killing the group ends what it started
  bool die_with_parent = false;   // SIGKILL when the parent dies, even by SIGKILL (PR_SET_PDEATHSIG)
  std::vector<int> keep_fds;      // stay open across exec (their close-on-exec flag is cleared in the child)
  std::vector<int> close_fds;     // closed in the child: descriptors without close-on-exec that are not its business
  // Applied in this order, like a shell's redirections: err = to_fd(STDOUT_FILENO) is "2>&1" after `out`.
  Redirect in, out, err;
};

struct Spawned {
  pid_t pid = -1;     // > 0: the child runs the program; the caller reaps it (process/wait.h)
  std::string error;  // otherwise why not: "cannot execute /no/such: No such file or directory"
  bool started() const { return pid > 0; }
};

// Starts the program. An exec that fails is reported here (the child is reaped), never as an exit status.
Spawned spawn(const SpawnSpec& spec);

}  // namespace kd
