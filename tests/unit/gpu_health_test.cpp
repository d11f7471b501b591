// NVML's facts -> healthy, unhealthy (code 18, with the next action) or warnings; the PCI
// address that matches LibTorch's device to NVML's GPU; the NVML child's output -> host.nvml.
#include <gtest/gtest.h>

#include "fixtures/nvml_facts.h"
#include "verdict/codes.h"
#include "verdict/gpu_health.h"
#include "verdict/signatures.h"

namespace kd {
namespace {

using nlohmann::json;

// An idle, healthy H200 as NVML reports it.
json healthy() {
  return {{"index", 0}, {"name", "NVIDIA H200"}, {"pci_bus_id", "00000000:19:00.0"}, {"memory_total_mib", 143771},
          {"memory_used_mib", 512}, {"ecc_mode", "enabled"}, {"ecc_volatile_corrected", 0},
          {"ecc_volatile_uncorrected", 0}, {"retired_pages_pending", false}, {"row_remap_pending", false},
          {"row_remap_failed", false}, {"pcie_gen", 1}, {"pcie_gen_max", 5}, {"pcie_width", 16},
          {"pcie_width_max", 16}, {"sm_clock_mhz", 345}, {"sm_clock_max_mhz", 1980}, {"mem_clock_mhz", 2619},
          {"mem_clock_max_mhz", 2619}, {"clock_event_reasons", {"gpu_idle"}}, {"temperature_c", 32},
          {"power_draw_w", 75.5}, {"power_limit_w", 700.0}, {"persistence_mode", "enabled"},
          {"compute_mode", "default"}, {"mig_mode", "disabled"}};
}

TEST(GpuHealth, IdleHealthyCardHasNoProblemAndNoWarning) {
  // An idle GPU runs its link at generation 1 and its SM clock low: that is power saving, not a fault.
  const GpuHealth h = judge_gpu_health(healthy());
  EXPECT_TRUE(h.problems.empty());
  EXPECT_TRUE(h.warnings.empty());
  EXPECT_TRUE(h.action.empty());
}

TEST(GpuHealth, UncorrectedEccNeedsAReset) {
  json g = healthy();
  g["ecc_volatile_uncorrected"] = 3;
  g["ecc_volatile_corrected"] = 12;
  const GpuHealth h = judge_gpu_health(g);
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_EQ(h.problems[0], "3 uncorrected ECC errors since the driver was loaded");
  EXPECT_NE(h.action.find("reset the GPU"), std::string::npos);
  EXPECT_NE(h.action.find("drain the node"), std::string::npos);
  const std::string m = unhealthy_message(g, h);
  EXPECT_EQ(m.rfind("NVML reports GPU 0 (NVIDIA H200, 00000000:19:00.0): 3 uncorrected ECC errors", 0), 0u) << m;
}

TEST(GpuHealth, CorrectedEccAloneIsHealthy) {
  json g = healthy();
  g["ecc_volatile_corrected"] = 40;
  EXPECT_TRUE(judge_gpu_health(g).problems.empty());
}

TEST(GpuHealth, FailedRemapMeansReplaceTheCard) {
  json g = healthy();
  g["row_remap_failed"] = true;
  const GpuHealth h = judge_gpu_health(g);
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_NE(h.problems[0].find("row remapping failed"), std::string::npos);
  EXPECT_NE(h.action.find("replaced"), std::string::npos);
  const auto hint = diagnose(Code::GpuUnhealthy, unhealthy_message(g, h), {});
  ASSERT_TRUE(hint);
  EXPECT_NE(hint->action.find("replaced"), std::string::npos);
}

TEST(GpuHealth, PendingRemapOrRetirementNeedsAReset) {
  for (const char* key : {"row_remap_pending", "retired_pages_pending"}) {
    json g = healthy();
    g[key] = true;
    const GpuHealth h = judge_gpu_health(g);
    ASSERT_EQ(h.problems.size(), 1u) << key;
    EXPECT_NE(h.problems[0].find("pending"), std::string::npos);
    EXPECT_NE(h.action.find("reset"), std::string::npos);
  }
}

TEST(GpuHealth, SlowdownNarrowLinkAndLowClocksAreWarningsNotProblems) {
  json g = healthy();
  g["pcie_width"] = 4;
  g["pcie_gen"] = 5;
  g["clock_event_reasons"] = {"hw_slowdown", "sw_thermal_slowdown"};
  g["sm_clock_mhz"] = 600;
  const GpuHealth h = judge_gpu_health(g);
  EXPECT_TRUE(h.problems.empty());
  EXPECT_EQ(h.warnings, (std::vector<std::string>{"PCIe link trained at x4 of x16",
                                                  "clocks held down by hw_slowdown, sw_thermal_slowdown",
                                                  "SM clock 600 MHz of its maximum 1980 MHz"}));
}

TEST(GpuHealth, BusyGpuOnALowLinkGenerationIsAWarning) {
  json g = healthy();
  g["clock_event_reasons"] = json::array();
  g["sm_clock_mhz"] = 1980;
  g["pcie_gen"] = 3;
  EXPECT_EQ(judge_gpu_health(g).warnings, std::vector<std::string>{"PCIe link at generation 3 of 5 while the GPU is busy"});
}

TEST(GpuHealth, FactsNotReportedDecideNothing) {
  json g = {{"index", 0}};
  for (const char* key : {"ecc_volatile_uncorrected", "row_remap_failed", "row_remap_pending", "retired_pages_pending",
                          "pcie_width", "pcie_width_max", "clock_event_reasons", "sm_clock_mhz", "sm_clock_max_mhz"})
    g[key] = nullptr;
  const GpuHealth h = judge_gpu_health(g);
  EXPECT_TRUE(h.problems.empty());
  EXPECT_TRUE(h.warnings.empty());
}

TEST(GpuHealth, PciAddressesOfNvmlAndCudaMatch) {
  const auto nvml = parse_pci_bus_id("00000000:3B:00.0");
  const auto cuda = parse_pci_bus_id("0000:3b:00.0");
  ASSERT_TRUE(nvml && cuda);
  EXPECT_TRUE(*nvml == *cuda);
  EXPECT_EQ(format_pci_bus_id(*cuda), "00000000:3B:00.0");
  EXPECT_FALSE(parse_pci_bus_id(""));
  EXPECT_FALSE(parse_pci_bus_id("3B:00"));
  EXPECT_FALSE(parse_pci_bus_id("0000:3b:00.0 trailing"));
}

TEST(GpuHealth, TheTargetIsFoundByPciAddressNotByIndex) {
  // CUDA_VISIBLE_DEVICES=1 makes NVML's GPU 1 LibTorch's device 0: the address decides.
  json a = healthy(), b = healthy();
  b["index"] = 1;
  b["pci_bus_id"] = "00000000:3B:00.0";
  b["row_remap_failed"] = true;
  const json gpus = {a, b};
  const auto found = gpu_at(gpus, {0, 0x3b, 0});
  ASSERT_TRUE(found);
  EXPECT_EQ((*found)["index"], 1);
  EXPECT_FALSE(judge_gpu_health(*found).problems.empty());
  EXPECT_FALSE(gpu_at(gpus, {0, 0x5d, 0}));
  EXPECT_FALSE(gpu_at(json(), {0, 0x19, 0}));
  EXPECT_FALSE(gpu_at(json::array({{{"index", 0}, {"pci_bus_id", nullptr}}}), {0, 0, 0}));
}

TEST(GpuHealth, Code18IsGpuUnhealthy) {
  EXPECT_EQ(name(Code::GpuUnhealthy), "GPU_UNHEALTHY");
  EXPECT_EQ(exit_code(Code::GpuUnhealthy), 18);
  EXPECT_EQ(code_from_name("GPU_UNHEALTHY"), Code::GpuUnhealthy);
}

TEST(NvmlChild, FactsGainProblemsAndWarnings) {
  json g = healthy();
  g["ecc_volatile_uncorrected"] = 1;
  const json child = {{"status", "ok"}, {"driver_version", "580.159.04"}, {"cuda_driver_version", "13.0"}, {"gpus", {g}}};
  const json n = nvml_from_child(true, false, 0, child.dump(), 0.05);
  EXPECT_EQ(n["status"], "ok");
  EXPECT_EQ(n["driver_version"], "580.159.04");
  EXPECT_DOUBLE_EQ(n["duration_ms"].get<double>(), 50);
  ASSERT_EQ(n["gpus"].size(), 1u);
  EXPECT_EQ(n["gpus"][0]["problems"].size(), 1u);
  EXPECT_TRUE(n["gpus"][0]["warnings"].empty());
}

TEST(NvmlChild, AbsentHungAndBrokenChildren) {
  EXPECT_EQ(nvml_from_child(true, false, 0, R"({"status":"absent"})", 0.01)["status"], "absent");
  const json hung = nvml_from_child(true, true, -1, "", 3.0);
  EXPECT_EQ(hung["status"], "timed_out");
  EXPECT_NE(hung["message"].get<std::string>().find("within 3 s"), std::string::npos);
  EXPECT_EQ(nvml_from_child(true, false, 0, "not json", 0.01)["status"], "failed");
  EXPECT_EQ(nvml_from_child(true, false, 139, "", 0.01)["status"], "failed");
  EXPECT_EQ(nvml_from_child(false, false, 127, "", 0)["status"], "failed");
  const json init = nvml_from_child(true, false, 0, R"({"status":"failed","message":"nvmlInit: Driver Not Loaded"})", 0.01);
  EXPECT_EQ(init["message"], "nvmlInit: Driver Not Loaded");
  EXPECT_TRUE(init["gpus"].empty());
}

}  // namespace
}  // namespace kd
