// L6's arithmetic: the reference table's name matching, the summaries of repeated timings,
// and the judgement of a measured ceiling against reference and floor (code 16's message).
#include <gtest/gtest.h>

#include "verdict/device_ceilings.h"
#include "verdict/performance.h"

namespace kd {
namespace {

TEST(DeviceCeilings, MatchesTheNamesCudaReportsExactly) {
  for (const char* name : {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe",
                           "NVIDIA L40S", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 5070"})
    EXPECT_TRUE(find_ceilings(name).has_value()) << name;
  const auto h200 = find_ceilings("NVIDIA H200");
  EXPECT_EQ(h200->key, "H200");
  EXPECT_EQ(h200->memory_tb_s, 4.8);
  EXPECT_EQ(h200->bf16_tflops, 989.5);
  EXPECT_EQ(find_ceilings("NVIDIA A100 80GB PCIe")->key, "A100 80GB PCIe");
}

TEST(DeviceCeilings, OtherVariantsAndUnknownDevicesHaveNoReference) {
  // An H200 NVL or an H100 PCIe has other figures: a near name must not borrow the SXM's.
  for (const char* name : {"NVIDIA H200 NVL", "NVIDIA H100 PCIe", "NVIDIA A100-SXM4-40GB", "nvidia h200", "NVIDIA H20",
                           "NVIDIA GeForce RTX 5070 Ti", ""})
    EXPECT_FALSE(find_ceilings(name).has_value()) << name;
}

TEST(DeviceCeilings, FiguresWeAreNotSureOfAreAbsent) {
  const auto rtx5070 = find_ceilings("NVIDIA GeForce RTX 5070");
  ASSERT_TRUE(rtx5070.has_value());
  EXPECT_TRUE(rtx5070->memory_tb_s.has_value());
  EXPECT_FALSE(rtx5070->bf16_tflops.has_value());
  EXPECT_FALSE(rtx5070->tf32_tflops.has_value());
}

TEST(Performance, MedianAndNearestRankP95) {
  EXPECT_EQ(perf::median({}), 0);
  EXPECT_EQ(perf::median({3, 1, 2}), 2);
  EXPECT_EQ(perf::median({4, 1, 3, 2}), 2.5);
  std::vector<double> v;
  for (int i = 1; i <= 20; ++i) v.push_back(i);
  EXPECT_EQ(perf::p95(v), 19);  // rank ceil(0.95 * 20) = 19
  v.push_back(100);             // 21 values: rank 20
  EXPECT_EQ(perf::p95(v), 20);
  EXPECT_EQ(perf::p95({7}), 7);
}

TEST(Performance, BelowTheFloorNamesBothNumbers) {
  const perf::Judged j = perf::judge("copy", 1.2, 4.8, 0.6, "TB/s", "H200");
  ASSERT_TRUE(j.fraction.has_value());
  EXPECT_DOUBLE_EQ(*j.fraction, 0.25);
  EXPECT_TRUE(j.below_floor);
  EXPECT_EQ(j.message, "copy 1.2 TB/s is 0.25 of the H200's 4.8 TB/s, below the floor 0.6");
}

TEST(Performance, AtOrAboveTheFloorPasses) {
  const perf::Judged j = perf::judge("bf16 matmul", 790, 989.5, 0.5, "TFLOP/s", "H200");
  EXPECT_FALSE(j.below_floor);
  EXPECT_NEAR(*j.fraction, 0.798, 0.001);
  EXPECT_EQ(j.message, "bf16 matmul 790 TFLOP/s is 0.80 of the H200's 989.5 TFLOP/s");
  EXPECT_FALSE(perf::judge("copy", 3.0, 4.0, 0.75, "TB/s", "H200").below_floor);  // exactly the floor
  EXPECT_TRUE(perf::judge("copy", 4.3, 4.8, 1.0, "TB/s", "H200").below_floor);
}

TEST(Performance, WithoutAReferenceThereIsNoFractionAndNoFailure) {
  const perf::Judged j = perf::judge("bf16 matmul", 120, std::nullopt, 0.5, "TFLOP/s", "device");
  EXPECT_FALSE(j.fraction.has_value());
  EXPECT_FALSE(j.below_floor);
  EXPECT_EQ(j.message, "bf16 matmul 120 TFLOP/s: no reference figure for this device, no fraction");
}

}  // namespace
}  // namespace kd
