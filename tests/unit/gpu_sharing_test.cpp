// A shared GPU's rules (verdict/gpu_sharing.h) on recorded numbers: who counts as another process, when a
// measurement cannot be judged, and how much memory a step may take of what is free.
#include "verdict/gpu_sharing.h"

#include <gtest/gtest.h>

namespace kd::sharing {
namespace {

constexpr uint64_t GiB = uint64_t(1) << 30;

Seen nvml(int64_t others, std::optional<int64_t> sm, uint64_t memory = 40 * GiB) {
  Seen s;
  s.source = Source::Nvml;
  s.other_processes = others;
  s.other_memory_bytes = others ? memory : 0;
  s.unlisted_memory_bytes = GiB / 2;  // the driver's reserve
  s.utilization_percent = 100;
  s.other_sm_percent = sm;
  return s;
}

Seen driver(uint64_t beyond) {
  Seen s;
  s.other_memory_bytes = beyond;
  s.fallback_reason = "NVML lists no process of this run";
  return s;
}

TEST(GpuSharing, AGpuToItselfIsJudgedAsAlways) {
  const Contention c = judge(nvml(0, 0));
  EXPECT_FALSE(c.contended);
  EXPECT_EQ(describe(nvml(0, 0)), "");
  EXPECT_EQ(floor_check(c, false, "bf16 matmul 800 TFLOP/s").outcome, Floor::Outcome::Judged);
}

TEST(GpuSharing, AnotherProcessThatComputedMakesTheMeasurementUnjudged) {
  const Contention c = judge(nvml(2, 97));
  EXPECT_TRUE(c.contended);
  EXPECT_EQ(c.what, "2 other processes (40.00 GiB), up to 97 % of the SMs; GPU utilization up to 100 %");
  const Floor f = floor_check(c, false, "bf16 matmul 289 TFLOP/s is 0.29 of the H200's 989.5 TFLOP/s, below the floor 0.5");
  EXPECT_EQ(f.outcome, Floor::Outcome::NotJudged);
  EXPECT_EQ(f.message,
            "other processes used the GPU during the measurement: 2 other processes (40.00 GiB), up to 97 % of the SMs; GPU "
            "utilization up to 100 %; bf16 matmul 289 TFLOP/s is 0.29 of the H200's 989.5 TFLOP/s, below the floor 0.5; the "
            "floor is not applied to a shared GPU (--judge-shared-gpu applies it)");
}

TEST(GpuSharing, TheOptionAppliesTheFloorAnyway) {
  EXPECT_EQ(floor_check(judge(nvml(1, 50)), true, "copy").outcome, Floor::Outcome::Judged);
}

TEST(GpuSharing, AProcessThatOnlyHeldMemoryDidNotCompete) {
  EXPECT_FALSE(judge(nvml(1, 0)).contended);
  EXPECT_FALSE(judge(nvml(1, kIdlePercent - 1)).contended);
  EXPECT_TRUE(judge(nvml(1, kIdlePercent)).contended);
  EXPECT_EQ(describe(nvml(1, 0, 3 * GiB)), "1 other process (3.00 GiB)");  // still there: it counts for memory
  EXPECT_EQ(others(nvml(1, 0)), 1);
}

TEST(GpuSharing, AProcessSeenComputingEarlierIsPresumedToComputeStill) {
  // Four --full runs at once on an H100: a TF32 matmul at 0.42 of its figure while NVML's coarse samples showed the
  // two other runs at 0 %, which had 48 % of the SMs in the measurement before.
  Seen s = nvml(2, 0, 6 * GiB);
  EXPECT_FALSE(judge(s).contended);
  s.others_computed_earlier = true;
  const Contention c = judge(s);
  EXPECT_TRUE(c.contended);
  EXPECT_EQ(c.what,
            "2 other processes (6.00 GiB), up to 0 % of the SMs (NVML's samples are coarse: seen computing earlier in this "
            "run); GPU utilization up to 100 %");
  EXPECT_FALSE(judge(nvml(0, 0)).contended);  // once they are gone, the GPU is its own again
  Seen alone = nvml(0, 0);
  alone.others_computed_earlier = true;
  EXPECT_FALSE(judge(alone).contended);
}

TEST(GpuSharing, SharesNvmlDoesNotReportCountAsComputing) {
  const Contention c = judge(nvml(1, std::nullopt));
  EXPECT_TRUE(c.contended);  // never blame the card for a process that may have computed
  EXPECT_NE(c.what.find("their share of the SMs not reported"), std::string::npos) << c.what;
}

TEST(GpuSharing, MemoryNvmlDoesNotListIsAnotherProcess) {
  Seen s = nvml(0, 0);
  s.unlisted_memory_bytes = 12 * GiB;  // a process of another container
  EXPECT_TRUE(judge(s).contended);
  EXPECT_EQ(describe(s), "processes NVML does not list (12.00 GiB)");
  EXPECT_EQ(others(s), 1);
  s.unlisted_memory_bytes = kOutsideAllowance;  // the driver's reserve stays below
  EXPECT_FALSE(judge(s).contended);
}

TEST(GpuSharing, WithoutNvmlTheMemoryBeyondThisRunsDecides) {
  EXPECT_FALSE(judge(driver(GiB)).contended);  // this process's CUDA context
  EXPECT_EQ(others(driver(GiB)), 0);
  const Contention c = judge(driver(30 * GiB));
  EXPECT_TRUE(c.contended);
  EXPECT_EQ(c.what, "other processes (30.00 GiB held beyond this run's; NVML cannot tell which: NVML lists no process of "
                    "this run)");
  EXPECT_EQ(others(driver(30 * GiB)), 1);
  EXPECT_STREQ(name(Source::DriverMemory), "driver_memory");
}

TEST(GpuSharing, AloneTheSweepTakesItsFractionOfTheFreeMemory) {
  const Budget b = budget(100 * GiB, 0.9, nvml(0, 0));
  EXPECT_EQ(b.bytes, 90 * GiB);
  EXPECT_EQ(b.kept, 10 * GiB);
  EXPECT_EQ(b.note, "");
}

TEST(GpuSharing, WithOthersItSharesWhatIsFree) {
  const Budget b = budget(120 * GiB, 0.9, nvml(2, 90));
  EXPECT_EQ(b.bytes, 36 * GiB);  // 0.9 of it for three: N + 1 sweeps started together stay within 0.9
  EXPECT_EQ(b.kept, 84 * GiB);
  EXPECT_EQ(b.note, "kept 70 % of the free memory (84.00 GiB) for 2 other processes");
  // Idle holders are left room too: they may grow.
  EXPECT_EQ(budget(120 * GiB, 0.9, nvml(1, 0)).bytes, 54 * GiB);
  // An uncounted sign of others (the driver's memory) is one more.
  const Budget d = budget(120 * GiB, 0.9, driver(30 * GiB));
  EXPECT_EQ(d.bytes, 54 * GiB);
  EXPECT_EQ(d.note, "kept 55 % of the free memory (66.00 GiB) for other processes");
}

TEST(GpuSharing, ABudgetNeverPassesTheFreeMemory) {
  EXPECT_EQ(budget(0, 0.9, nvml(3, 90)).bytes, 0u);
  EXPECT_EQ(budget(GiB, 1.5, nvml(0, 0)).bytes, GiB);
  EXPECT_EQ(budget(GiB, -1, nvml(0, 0)).bytes, 0u);
}

}  // namespace
}  // namespace kd::sharing
