// The one process primitive (process/), with real children: /bin/sh, sleep, cat.
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "process/run_process.h"
#include "process/spawn.h"
#include "process/wait.h"
#include "temp_dir.h"

namespace kd {
namespace {

using namespace std::chrono_literals;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Alive: in the process table and not a zombie (an orphan that init has yet to reap is dead).
bool alive(pid_t pid) {
  const std::string stat = read("/proc/" + std::to_string(pid) + "/stat");
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z' && stat[paren + 2] != 'X';
}

bool ends_within(pid_t pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (alive(pid))
    if (std::chrono::steady_clock::now() >= until) return false;
    else std::this_thread::sleep_for(5ms);
  return true;
}

SpawnSpec shell(const std::string& script) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  return spec;
}

// Runs spec to its end with stdout and stderr appended to a file: what it wrote, and its wait status.
std::pair<std::string, int> output_of(SpawnSpec spec, const test::TempDir& dir) {
  const std::string log = dir.file("out.log");
  ::unlink(log.c_str());
  spec.out = spec.err = Redirect::append_to(log);
  const Spawned child = spawn(spec);
  EXPECT_TRUE(child.started()) << child.error;
  const int status = child.started() ? wait_exit(child.pid) : -1;
  return {read(log), status};
}

TEST(RunProcess, CapturesStandardOutputThroughAPipe) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 10, false);
  EXPECT_TRUE(r.started);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "out\n");
  EXPECT_EQ(r.exit_status, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(run_process({"/bin/sh", "-c", "echo out; echo err >&2"}, 10, true).output, "out\nerr\n");
}

TEST(RunProcess, ItsStandardInputIsEmpty) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "cat; echo end"}, 10, false);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.output, "end\n");
}

TEST(Spawn, AppendsStandardOutputAndErrorToAFile) {
  test::TempDir dir;
  const std::string log = dir.file("job.log");
  std::ofstream(log) << "before\n";
  SpawnSpec spec = shell("echo out; echo err >&2");
  spec.out = spec.err = Redirect::append_to(log);
  const Spawned child = spawn(spec);
  ASSERT_TRUE(child.started()) << child.error;
  EXPECT_EQ(how_it_ended(wait_exit(child.pid)), "exit status 0");
  EXPECT_EQ(read(log), "before\nout\nerr\n");
}

TEST(Spawn, AFileThatCannotBeOpenedStartsNothing) {
  test::TempDir dir;
  SpawnSpec spec = shell("echo ran");
  spec.out = Redirect::append_to(dir.file("no/such/folder/log"));
  const Spawned child = spawn(spec);
  EXPECT_FALSE(child.started());
  EXPECT_NE(child.error.find("cannot open " + dir.file("no/such/folder/log")), std::string::npos) << child.error;
}

TEST(RunProcess, ATimeLimitKillsItsGroupGrandchildIncluded) {
  // The shell's child, sleep, holds the output pipe open: only killing the group ends the wait.
  const ProcessResult r = run_process({"/bin/sh", "-c", "sleep 300 & echo $!; wait"}, 0.5, false, true);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_LT(r.seconds, 5.0);
  ASSERT_FALSE(r.output.empty());
  const pid_t grandchild = std::stoi(r.output);
  if (!ends_within(grandchild, 5s)) {
    ADD_FAILURE() << "sleep outlived the time limit";
    ::kill(grandchild, SIGKILL);
  }
}

TEST(RunProcess, WithoutAGroupOfItsOwnAGrandchildIsLeftToTheCallersGroup) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "sleep 300 & echo $!; wait"}, 0.5, false, false);
  EXPECT_TRUE(r.timed_out);
  ASSERT_FALSE(r.output.empty());
  const pid_t grandchild = std::stoi(r.output);
  EXPECT_TRUE(alive(grandchild));
  EXPECT_EQ(::getpgid(grandchild), ::getpgrp());  // where the caller's own kill of its group reaches it
  ::kill(grandchild, SIGKILL);
}

TEST(Spawn, AKeptDescriptorIsReadableAfterExecAndOnlyThen) {
  test::TempDir dir;
  int p[2];
  ASSERT_EQ(::pipe2(p, O_CLOEXEC), 0);
  ASSERT_EQ(::write(p[1], "across exec\n", 12), 12);
  ::close(p[1]);
  const std::string read_it = "{ cat <&" + std::to_string(p[0]) + "; } 2>/dev/null || echo closed";
  // bash, not sh: POSIX sh need not take a descriptor above 9 in a redirection.
  SpawnSpec spec;
  spec.argv = {"/bin/bash", "-c", read_it};
  EXPECT_EQ(output_of(spec, dir).first, "closed\n");
  spec.keep_fds = {p[0]};
  EXPECT_EQ(output_of(spec, dir).first, "across exec\n");
  ::close(p[0]);
}

TEST(Spawn, ADescriptorToCloseIsClosedInTheChild) {
  test::TempDir dir;
  const int fd = ::open("/dev/null", O_RDONLY);  // no close-on-exec: the child would inherit it
  ASSERT_GE(fd, 0);
  SpawnSpec spec = shell("test -e /proc/self/fd/" + std::to_string(fd) + " && echo open || echo closed");
  EXPECT_EQ(output_of(spec, dir).first, "open\n");
  spec.close_fds = {fd};
  EXPECT_EQ(output_of(spec, dir).first, "closed\n");
  ::close(fd);
}

TEST(Spawn, AMissingProgramIsReportedAsNotStarted) {
  SpawnSpec spec;
  spec.argv = {"/no/such/program"};
  const Spawned child = spawn(spec);
  EXPECT_FALSE(child.started());
  EXPECT_EQ(child.error, "cannot execute /no/such/program: No such file or directory");
  const ProcessResult r = run_process({"/no/such/program"}, 10, true);
  EXPECT_FALSE(r.started);
  EXPECT_FALSE(r.timed_out);
}

TEST(Spawn, AProgramThatExitsWith127HasStarted) {
  const ProcessResult r = run_process({"/bin/sh", "-c", "exit 127"}, 10, false);
  EXPECT_TRUE(r.started);
  EXPECT_EQ(r.exit_status, 127);
}

TEST(Spawn, AGroupOfItsOwnIsThereWhenSpawnReturnsAndKillGroupEndsIt) {
  SpawnSpec spec;
  spec.argv = {"/bin/sleep", "300"};
  spec.own_group = true;
  const Spawned child = spawn(spec);
  ASSERT_TRUE(child.started()) << child.error;
  EXPECT_EQ(::getpgid(child.pid), child.pid);
  EXPECT_FALSE(reap_until(child.pid, std::chrono::steady_clock::now() + 50ms).has_value());  // still running
  kill_group(child.pid);
  const std::optional<int> status = reap_until(child.pid, std::chrono::steady_clock::now() + 5s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(how_it_ended(*status), "killed by signal 9");
  const Ending end = decode_wait_status(*status);
  EXPECT_FALSE(end.exited);
  EXPECT_EQ(end.signal, SIGKILL);

  spec.own_group = false;
  const Spawned same_group = spawn(spec);
  ASSERT_TRUE(same_group.started()) << same_group.error;
  EXPECT_EQ(::getpgid(same_group.pid), ::getpgrp());
  ::kill(same_group.pid, SIGKILL);
  wait_exit(same_group.pid);
}

// An intermediate process spawns sleep, then is killed with SIGKILL: what becomes of sleep.
bool outlives_a_killed_parent(bool die_with_parent) {
  int p[2];
  if (::pipe(p) != 0) return false;
  const pid_t parent = ::fork();
  if (parent == 0) {
    SpawnSpec spec;
    spec.argv = {"/bin/sleep", "300"};
    spec.die_with_parent = die_with_parent;
    const pid_t child = spawn(spec).pid;
    if (::write(p[1], &child, sizeof child) != sizeof child) ::_exit(1);
    ::pause();
    ::_exit(0);
  }
  ::close(p[1]);
  pid_t child = -1;
  const bool got = ::read(p[0], &child, sizeof child) == sizeof child && child > 0;
  ::close(p[0]);
  ::kill(parent, SIGKILL);
  wait_exit(parent);
  EXPECT_TRUE(got) << "the intermediate process could not start sleep";
  if (!got) return false;
  // Ending takes a moment (the signal, then init's reaping); outliving it needs only a look some time after.
  const bool outlived = !ends_within(child, die_with_parent ? 5000ms : 300ms);
  ::kill(child, SIGKILL);
  return outlived;
}

TEST(Spawn, AChildThatDiesWithItsParentEndsWhenTheParentIsKilled) {
  EXPECT_FALSE(outlives_a_killed_parent(true));
  EXPECT_TRUE(outlives_a_killed_parent(false));
}

TEST(HowItEnded, SaysTheExitStatusOrTheSignal) {
  EXPECT_EQ(how_it_ended(wait_exit(spawn(shell("exit 9")).pid)), "exit status 9");
  EXPECT_EQ(how_it_ended(wait_exit(spawn(shell("kill -9 $$")).pid)), "killed by signal 9");
  const Ending end = decode_wait_status(wait_exit(spawn(shell("exit 9")).pid));
  EXPECT_TRUE(end.exited);
  EXPECT_EQ(end.exit_status, 9);
  EXPECT_EQ(end.signal, 0);
}

}  // namespace
}  // namespace kd
