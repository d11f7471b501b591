#include "spawn.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "wait.h"

namespace kd {
namespace {

// The descriptors spawn() opened for the child's streams: the parent's copies close when spawn() returns.
struct OpenedFiles {
  std::vector<std::pair<std::string, int>> files;  // path, descriptor
  ~OpenedFiles() {
    for (const auto& f : files) ::close(f.second);
  }
  // The descriptor for a file stream, opened once even when two streams share it (stdout and stderr to one log).
  int open(const std::string& path, int flags) {
    for (const auto& f : files)
      if (f.first == path) return f.second;
    const int fd = ::open(path.c_str(), flags | O_CLOEXEC, 0600);
    if (fd >= 0) files.emplace_back(path, fd);
    return fd;
  }
};

// Child side, async-signal-safe only: tells the parent why it did not get to exec, then ends.
[[noreturn]] void fail_in_child(int exec_error_fd, int error) {
  ssize_t n;
  do n = ::write(exec_error_fd, &error, sizeof error);
  while (n < 0 && errno == EINTR);
  ::_exit(127);
}

// Child side: `from` becomes descriptor `to` without close-on-exec. dup2 onto itself would keep the flag.
bool move_fd(int from, int to) {
  if (from == to) return ::fcntl(to, F_SETFD, 0) == 0;
  int r;
  do r = ::dup2(from, to);
  while (r < 0 && errno == EINTR);
  return r >= 0;
}

}  // namespace

Spawned spawn(const SpawnSpec& spec) {
  Spawned s;
  if (spec.argv.empty()) {
    s.error = "no program to run";
    return s;
  }
  std::vector<std::string> args = spec.argv;  // execv takes char*
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  OpenedFiles opened;
  int source[3] = {-1, -1, -1};  // what becomes stdin, stdout, stderr; -1: inherited
  const Redirect* streams[3] = {&spec.in, &spec.out, &spec.err};
  for (int i = 0; i < 3; ++i) {
    const Redirect& r = *streams[i];
    if (r.to == Redirect::To::Fd) source[i] = r.fd;
    if (r.to == Redirect::To::DevNull) source[i] = opened.open("/dev/null", O_RDWR);
    if (r.to == Redirect::To::AppendFile) source[i] = opened.open(r.path, O_WRONLY | O_CREAT | O_APPEND);
    if (r.to != Redirect::To::Inherit && source[i] < 0) {
      const int error = errno;
      s.error = "cannot open " + (r.to == Redirect::To::AppendFile ? r.path : std::string("/dev/null")) + ": " +
                std::strerror(error);
      return s;
    }
  }
  // The child writes its errno here when exec fails; exec closes it, so end-of-file means the program runs.
  // Kept above 2, where no redirection of a stream can overwrite it.
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    const int error = errno;
    s.error = std::string("cannot create a pipe: ") + std::strerror(error);
    return s;
  }
  for (int& fd : exec_error) {
    if (fd > STDERR_FILENO) continue;
    const int above = ::fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
    ::close(fd);
    fd = above;
  }

  const pid_t parent = ::getpid();
  const pid_t pid = exec_error[0] < 0 || exec_error[1] < 0 ? -1 : ::fork();
  if (pid == 0) {  // async-signal-safe calls only, until exec
    if (spec.own_group) ::setpgid(0, 0);
    if (spec.die_with_parent) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);  // the parent died before prctl: nothing would end this child
    }
    for (int i = 0; i < 3; ++i)
      if (source[i] >= 0 && !move_fd(source[i], i)) fail_in_child(exec_error[1], errno);
    for (int fd : spec.close_fds) ::close(fd);
    for (int fd : spec.keep_fds)
      if (::fcntl(fd, F_SETFD, 0) != 0) fail_in_child(exec_error[1], errno);
    ::execv(argv[0], argv.data());
    fail_in_child(exec_error[1], errno);
  }
  const int fork_error = errno;
  if (exec_error[1] >= 0) ::close(exec_error[1]);  // the child's end
  if (pid < 0) {
    if (exec_error[0] >= 0) ::close(exec_error[0]);
    s.error = std::string("cannot start a process: ") + std::strerror(fork_error);
    return s;
  }
  if (spec.own_group) ::setpgid(pid, pid);  // here too: a kill of the group right after spawn() must reach it
  int child_error = 0;
  ssize_t n;
  do n = ::read(exec_error[0], &child_error, sizeof child_error);
  while (n < 0 && errno == EINTR);
  ::close(exec_error[0]);
  if (n == static_cast<ssize_t>(sizeof child_error)) {  // it never ran the program
    wait_exit(pid);
    s.error = "cannot execute " + spec.argv[0] + ": " + std::strerror(child_error);
    return s;
  }
  s.pid = pid;
  return s;
}

}  // namespace kd
