// L6 under load's arithmetic (verdict/load_checks.h): the host link's expected figure, the steady fraction, the reasons.
#include "verdict/load_checks.h"

#include <gtest/gtest.h>

namespace kd::load {
namespace {

TEST(LoadChecks, APcieLinkCarriesItsGenerationTimesItsWidth) {
  EXPECT_NEAR(*pcie_gb_s(5, 16), 63.015, 0.001);  // 32 GT/s x 128/130 x 16 lanes / 8
  EXPECT_NEAR(*pcie_gb_s(4, 16), 31.508, 0.001);
  EXPECT_NEAR(*pcie_gb_s(3, 8), 7.877, 0.001);
  EXPECT_NEAR(*pcie_gb_s(1, 1), 0.25, 1e-9);      // 8b/10b
  EXPECT_NEAR(*pcie_gb_s(6, 16), 121.0, 0.001);   // FLIT: 242 of 256 bytes
  EXPECT_FALSE(pcie_gb_s(0, 16));
  EXPECT_FALSE(pcie_gb_s(7, 16));
  EXPECT_FALSE(pcie_gb_s(5, 0));
}

TEST(LoadChecks, TheHostLinkIsNvlinkC2cWhereNvmlListsItElsePcieAtItsLargest) {
  const HostLinkExpectation c2c = expected_host_link({10, 450.0, 5, 16});  // C2C first, whatever PCIe NVML reports
  EXPECT_EQ(c2c.kind, "nvlink-c2c");
  EXPECT_EQ(c2c.expected_gb_s, 450.0);
  const HostLinkExpectation inactive = expected_host_link({0, std::nullopt, 5, 16});
  EXPECT_EQ(inactive.kind, "nvlink-c2c");
  EXPECT_FALSE(inactive.expected_gb_s);  // not judged, and says why
  EXPECT_EQ(inactive.why_not, "NVML lists NVLink-C2C links to the CPU, but none is active");
  const HostLinkExpectation pcie = expected_host_link({std::nullopt, std::nullopt, 5, 16});
  EXPECT_EQ(pcie.kind, "pcie");
  EXPECT_NEAR(*pcie.expected_gb_s, 63.015, 0.001);
  const HostLinkExpectation unknown = expected_host_link({std::nullopt, std::nullopt, std::nullopt, 16});
  EXPECT_FALSE(unknown.kind);
  EXPECT_FALSE(unknown.expected_gb_s);
  EXPECT_EQ(unknown.why_not, "NVML does not report the PCIe link's generation and width");
}

TEST(LoadChecks, TheSteadyFractionIsTheSecondHalfAgainstTheFirstFifth) {
  // 10 s in points of 1 s: 100 for the first 2 s, then 80.
  std::vector<double> t, r;
  for (int i = 1; i <= 10; ++i) t.push_back(i), r.push_back(i <= 2 ? 100 : 80);
  const Steady s = steady_fraction(t, r, 10);
  EXPECT_EQ(s.first, 100);
  EXPECT_EQ(s.steady, 80);
  EXPECT_DOUBLE_EQ(s.fraction, 0.8);
  EXPECT_EQ(s.first_points, 2u);
  EXPECT_EQ(s.steady_points, 5u);  // t = 6 .. 10
}

TEST(LoadChecks, TheFirstSecondsAreAtMostTenAndAtLeastOnePoint) {
  std::vector<double> t, r;
  for (int i = 1; i <= 100; ++i) t.push_back(i), r.push_back(i <= 10 ? 50 : 40);
  EXPECT_DOUBLE_EQ(steady_fraction(t, r, 100).first, 50);  // a fifth would be 20 s: 10 at most
  EXPECT_EQ(steady_fraction(t, r, 100).first_points, 10u);
  const Steady one = steady_fraction({3, 6}, {9, 3}, 6);  // the first point ends after a fifth: still the first
  EXPECT_EQ(one.first, 9);
  EXPECT_EQ(one.steady, 3);
  EXPECT_EQ(steady_fraction({}, {}, 5).fraction, 0);
}

TEST(LoadChecks, HeldReasonsAreEachNamedOnceWithoutIdle) {
  EXPECT_EQ(held_reasons({{"gpu_idle"}, {"sw_power_cap"}, {"sw_power_cap", "hw_slowdown"}}),
            (std::vector<std::string>{"sw_power_cap", "hw_slowdown"}));
  EXPECT_TRUE(held_reasons({{"gpu_idle"}, {}}).empty());
}

TEST(LoadChecks, TheMessageNamesNvmlsReasonsOrWhyThereAreNone) {
  const Steady s{100, 50, 0.5, 2, 5};
  EXPECT_NE(sustained_below_floor(s, 0.85, "TFLOP/s", {"hw_slowdown"}, true).find("NVML's clock-event reasons: hw_slowdown"),
            std::string::npos);
  EXPECT_NE(sustained_below_floor(s, 0.85, "TFLOP/s", {}, true).find("NVML gave no clock-event reason"), std::string::npos);
  EXPECT_NE(sustained_below_floor(s, 0.85, "TFLOP/s", {}, false).find("NVML could not be read"), std::string::npos);
  EXPECT_NE(sustained_below_floor(s, 0.85, "TFLOP/s", {}, true).find("0.500 of the first seconds' 100.000 TFLOP/s, below the floor 0.85"),
            std::string::npos);
}

}  // namespace
}  // namespace kd::load
