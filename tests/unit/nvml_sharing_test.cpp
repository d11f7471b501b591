// The NVML child's part of a shared GPU (fixtures/nvml_sharing.h) that needs no NVML: which processes are this
// run's, how looks make a window, and the child's line.
#include "fixtures/nvml_sharing.h"

#include <unistd.h>

#include <map>

#include <gtest/gtest.h>

namespace kd {
namespace {

// 100 is the worker; 200 a job it started, 300 that job's own child; 400 another user's process; 500 of another PID
// namespace (no parent known).
pid_t parent(pid_t pid) {
  static const std::map<pid_t, pid_t> parents = {{100, 50}, {200, 100}, {300, 200}, {400, 1}, {50, 1}};
  const auto it = parents.find(pid);
  return it == parents.end() ? -1 : it->second;
}

TEST(NvmlSharing, ThisRunIsTheWorkerAndWhatItStarted) {
  EXPECT_TRUE(of_this_run(100, 100, parent));
  EXPECT_TRUE(of_this_run(200, 100, parent));
  EXPECT_TRUE(of_this_run(300, 100, parent));
  EXPECT_FALSE(of_this_run(400, 100, parent));
  EXPECT_FALSE(of_this_run(500, 100, parent));
  EXPECT_FALSE(of_this_run(50, 100, parent));  // the worker's parent (the supervisor) holds no GPU of this run's here
  EXPECT_FALSE(of_this_run(100, 0, parent));   // no run to tell apart
}

TEST(NvmlSharing, ParentsAreReadFromProc) {
  EXPECT_EQ(parent_in_proc(::getpid()), ::getppid());
  EXPECT_EQ(parent_in_proc(4194304 + 1000), -1);  // past any pid_max
  EXPECT_TRUE(of_this_run(::getpid(), ::getppid(), parent_in_proc));
}

GpuShareSample look(int64_t others, uint64_t memory, int64_t utilization) {
  GpuShareSample s;
  s.processes_read = true;
  s.own_listed = true;
  s.others = others;
  s.others_memory = memory;
  s.unlisted_memory = 512;
  s.utilization = utilization;
  s.memory_free = 1000 - memory;
  s.memory_total = 1000;
  s.samples = 1;
  return s;
}

TEST(NvmlSharing, AWindowKeepsTheMostOfEachFigure) {
  GpuShareSample w;
  merge(&w, look(0, 0, 10));
  merge(&w, look(2, 600, 100));  // a process came and went
  merge(&w, look(1, 300, 40));
  GpuShareSample unread;  // a look whose list could not be read says nothing of processes
  unread.utilization = 5;
  unread.samples = 1;
  merge(&w, unread);
  EXPECT_EQ(w.samples, 4);
  EXPECT_EQ(w.others, 2);
  EXPECT_EQ(w.others_memory, 600u);
  EXPECT_EQ(w.utilization, 100);
  EXPECT_EQ(w.memory_free, 400u);
  EXPECT_TRUE(w.processes_read && w.own_listed);
  EXPECT_EQ(w.others_sm, std::nullopt);
}

TEST(NvmlSharing, TheChildsLineRoundTrips) {
  GpuShareSample s = look(3, 700, 90);
  s.others_sm = 55;
  s.mig = true;
  const GpuShareSample back = share_sample_from_json(to_json(s));
  EXPECT_EQ(to_json(back), to_json(s));
  // Another process's line, half broken: what is wrong is not read.
  const GpuShareSample odd = share_sample_from_json({{"others", "many"}, {"others_memory", -5}, {"utilization", 50}});
  EXPECT_EQ(odd.others, 0);
  EXPECT_EQ(odd.others_memory, std::nullopt);
  EXPECT_EQ(odd.utilization, 50);
  EXPECT_FALSE(share_sample_from_json(nlohmann::json::array()).processes_read);
}

}  // namespace
}  // namespace kd
