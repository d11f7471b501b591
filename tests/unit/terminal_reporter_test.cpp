// What a person reads on the terminal: the layers, the verdict with its exit code,
// stage, cause and next action; colour only when asked.
#include "reporters/terminal_reporter.h"

#include <gtest/gtest.h>

#include "sample_reports.h"

namespace kd {
namespace {

using nlohmann::json;

TEST(TerminalReporter, FailureShowsVerdictStageCauseAndNextAction) {
  const std::string out = render_terminal(failed_report(), false);
  EXPECT_EQ(line_starting(out, "Verdict:"), "Verdict: CHECK_FAILED (exit 8) at stage L3.product") << out;
  EXPECT_EQ(line_starting(out, "  error:"), "  error: p = [[3,1],[7,2]], expected [[3,1],[7,3]]") << out;
  EXPECT_EQ(line_starting(out, "  next:"), "  next:  read the reported stage before running a model") << out;
  EXPECT_TRUE(contains(out, "  warning: test-only fault injection 'wrong-product'")) << out;
}

TEST(TerminalReporter, ShowsTheTimingAndOneLinePerCeilingWhenL6Ran) {
  nlohmann::json r = passed_cpu_report();
  EXPECT_FALSE(contains(render_terminal(r, false), "Timing:"));
  r["timing"] = {{"segments", {{"load_ms", 1.5}, {"cold", {{"compute_ms", 12.0}}},
                               {"warm", {{"n", 20}, {"compute_ms", {{"median", 0.42}, {"p95", 0.61}}}}}}},
                 {"reference_device", "H200"},
                 {"ceilings", {{"copy", {{"measured", 4.31}, {"reference", 4.8}, {"fraction", 0.898}, {"floor", 0.6}, {"unit", "TB/s"}}},
                               {"matmul_bf16", {{"measured", 790.2}, {"reference", nullptr}, {"fraction", nullptr},
                                                {"floor", 0.5}, {"unit", "TFLOP/s"}}}}}};
  const std::string out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "Timing:"), "Timing: compute cold 12 ms, warm median 0.42 ms (p95 0.61, n 20); load 1.5 ms, apart") << out;
  EXPECT_TRUE(contains(out, "(reference: H200)")) << out;
  EXPECT_EQ(line_starting(out, "  copy "), "  copy               4.31        4.8      0.90   0.60   TB/s") << out;
  EXPECT_EQ(line_starting(out, "  matmul_bf16"), "  matmul_bf16       790.2          -         -   0.50   TFLOP/s") << out;
}

TEST(TerminalReporter, ShowsTheMemoryStepsGrowthAndEmptyCacheWhenL5Ran) {
  nlohmann::json r = passed_cpu_report();
  EXPECT_FALSE(contains(render_terminal(r, false), "Memory ("));
  const uint64_t MiB = 1 << 20;
  r["memory"] = {{"device", "cuda:0"},
                 {"steps", {{{"name", "baseline"}, {"allocated_bytes", 2 * MiB}, {"reserved_bytes", 20 * MiB}, {"peak_allocated_bytes", 2 * MiB}},
                            {{"name", "after_load"}, {"allocated_bytes", 66 * MiB}, {"reserved_bytes", 86 * MiB}, {"peak_allocated_bytes", 66 * MiB}}}},
                 {"iterations", {{"n", 20}, {"growth_per_iteration_bytes", 0.0}, {"tolerance_bytes", 65536.0}}},
                 {"empty_cache", {{"returned_bytes", 32 * MiB}, {"cached_before_bytes", 34 * MiB},
                                  {"allocated_before_bytes", 66 * MiB}, {"allocated_after_bytes", 66 * MiB}}}};
  const std::string out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "Memory (cuda:0):"), "Memory (cuda:0): step                   allocated    reserved        peak") << out;
  EXPECT_TRUE(contains(out, "after_load              66.0 MiB    86.0 MiB    66.0 MiB")) << out;
  EXPECT_TRUE(contains(out, "  growth 0 bytes per iteration over 20 iterations (tolerance 64.0 KiB)")) << out;
  EXPECT_TRUE(contains(out, "  emptyCache returned 32.0 MiB of 34.0 MiB cached; allocated 66.0 MiB before, 66.0 MiB after")) << out;
  r["memory"] = {{"device", "cpu"}, {"steps", nullptr}, {"iterations", {{"n", 20}}}};
  EXPECT_TRUE(contains(render_terminal(r, false), "Memory (cpu): the workload ran 20 iterations; no allocator counters"));
}

// L5: the operating range, one line per point in the order of the axis (the sweep ran them bisecting).
TEST(TerminalReporter, ShowsTheOperatingRangeInTheOrderOfTheAxis) {
  nlohmann::json r = passed_cpu_report();
  EXPECT_FALSE(contains(render_terminal(r, false), "Operating range"));
  auto point = [](int v, const char* result, nlohmann::json warm, nlohmann::json peak) {
    return nlohmann::json{{"value", v}, {"result", result}, {"warm_median_ms", warm}, {"cold_ms", warm},
                          {"peak_allocated_bytes", peak}, {"reserved_bytes", peak}, {"estimated_bytes", v * 17216}};
  };
  r["memory"] = {{"range", {{"axis", "batch"}, {"workload", "L4 embeddings"}, {"memory_limit", "allocator"},
                            {"points", {point(4, "passed", 0.5, 1073741824), point(16, "memory_fraction", nullptr, 3221225472),
                                        point(8, "passed", 1.25, 2147483648)}},
                            {"largest_pass", 8}, {"first_fail", 16}, {"stop_reason", "memory_fraction"}, {"seconds", 2.04}}}};
  const std::string out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "Operating range"),
            "Operating range (batch; L4 embeddings): largest pass 8, first failure 16 (memory_fraction), 2.0 s") << out;
  EXPECT_EQ(line_starting(out, "       batch"), "       batch result              warm ms    cold ms     peak GiB reserved GiB");
  const size_t at4 = out.find("\n           4 passed"), at8 = out.find("\n           8 passed"),
               at16 = out.find("\n          16 memory_fraction");
  ASSERT_NE(at16, std::string::npos) << out;
  EXPECT_LT(at4, at8);
  EXPECT_LT(at8, at16);
  EXPECT_EQ(line_starting(out, "           8 passed"),
            "           8 passed                 1.25       1.25         2.00         2.00");
  EXPECT_EQ(line_starting(out, "          16"), "          16 memory_fraction           -          -         3.00         3.00");
  r["memory"]["range"]["points"] = {1, "x", {{"value", "many"}}};  // a broken worker's facts read as absent
  EXPECT_NO_THROW(render_terminal(r, false));
  r["memory"]["range"]["points"] = 7;
  EXPECT_NO_THROW(render_terminal(r, false));
}

TEST(TerminalReporter, ShowsTheConcurrencyAxisWithItsKneeAndTheProcessesAxisWithItsLimit) {
  nlohmann::json r = passed_cpu_report();
  auto point = [](int v, const char* result, double per_s, double p50, double p95) {
    return nlohmann::json{{"value", v}, {"result", result}, {"throughput_per_s", per_s}, {"p50_ms", p50}, {"p95_ms", p95},
                          {"estimated_bytes", v * 17216}};
  };
  r["memory"] = {{"range", {{"axis", "concurrency"}, {"workload", "L4 embeddings"}, {"memory_limit", "host_estimate"},
                            {"points", {point(1, "passed", 1000, 1.5, 2), point(2, "passed", 1900, 1.6, 2.5),
                                        point(4, "passed", 1950, 3.2, 4.5)}},
                            {"largest_pass", 4}, {"first_fail", nullptr}, {"stop_reason", "axis_limit"}, {"seconds", 1.2},
                            {"knee", 2}, {"knee_min_gain", 0.1}}}};
  std::string out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "   executions"), "   executions result                  per s    p50 ms    p95 ms   est. GiB") << out;
  EXPECT_EQ(line_starting(out, "            2 passed"), "            2 passed                   1900       1.6       2.5       0.00");
  EXPECT_EQ(line_starting(out, "  knee:"), "  knee: 2 executions (the next doubling gained under 10%)");
  r["memory"]["range"]["knee"] = nullptr;
  EXPECT_EQ(line_starting(render_terminal(r, false), "  knee:"), "  knee: not reached (throughput still grew at every doubling)");

  r["memory"] = {{"range", {{"axis", "processes"}, {"workload", "L4 embeddings"}, {"memory_limit", "allocator"},
                            {"points", {{{"value", 1}, {"result", "passed"}, {"seconds", 2.5}, {"warm_median_ms", 0.5},
                                         {"rss_peak_bytes", 1073741824}, {"peak_allocated_bytes", 536870912}},
                                        {{"value", 2}, {"result", "out_of_memory"}, {"seconds", 3.0}}}},
                            {"largest_pass", 1}, {"first_fail", 2}, {"stop_reason", "out_of_memory"}, {"seconds", 5.5},
                            {"limit", {{"processes", 2}, {"process", 1}, {"phase", "compute"}}}}}};
  out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "   processes"), "   processes result              seconds    warm ms      RSS GiB   device GiB") << out;
  EXPECT_EQ(line_starting(out, "           1 passed"), "           1 passed                  2.5        0.5         1.00         0.50");
  EXPECT_EQ(line_starting(out, "  limit:"), "  limit: at 2 processes, process 1 ran out of memory first, in phase compute");
}

TEST(TerminalReporter, ShowsTheHintsCauseHostAndPython) {
  nlohmann::json r = failed_report();
  r["error"]["cause"] = "the device's architecture (sm_90) is not in the build's compiled list (sm_80)";
  r["error"]["signature"] = "arch-not-compiled";
  r["host"] = {{"tool", "nvidia-smi"}, {"status", "ok"}, {"gpus", {{{"driver_version", "580.159.04"}, {"memory_total_mib", 143771}}}}};
  r["python"] = {{"version", "3.12.3"}, {"import", "ok"}, {"torch_version", "2.11.0+cu130"}, {"cuda", "13.0"}};
  const std::string out = render_terminal(r, false, "/usr/bin/python3");
  EXPECT_EQ(line_starting(out, "  cause:"),
            "  cause: the device's architecture (sm_90) is not in the build's compiled list (sm_80) [arch-not-compiled]");
  EXPECT_EQ(line_starting(out, "Host"), "Host (nvidia-smi): 1 GPU, driver 580.159.04 with 143771 MiB");
  EXPECT_EQ(line_starting(out, "Python"), "Python (/usr/bin/python3) 3.12.3: torch 2.11.0+cu130 (CUDA 13.0)");
}

// --host-check shows the machine around the GPU; a plain run only its warnings.
TEST(TerminalReporter, HostCheckShowsTheMachineAroundTheGpu) {
  nlohmann::json r = failed_report();
  r["host"] = {
      {"limits", {{"open_files", {{"soft", 1024}, {"hard", 524288}}}, {"address_space_bytes", {{"soft", nullptr}, {"hard", nullptr}}},
                  {"locked_memory_bytes", {{"soft", 8388608}, {"hard", 8388608}}}, {"processes", {{"soft", nullptr}, {"hard", nullptr}}},
                  {"stack_bytes", {{"soft", 8388608}, {"hard", nullptr}}}}},
      {"container", {{"detected", true}, {"kind", "docker"}, {"cgroup_version", "v2"}, {"memory_limit_bytes", 17179869184LL},
                     {"memory_used_bytes", 1073741824}, {"cpu_quota_cores", 8.0}, {"pids_limit", nullptr}, {"cpus", 16}}},
      {"shm", {{"size_bytes", 67108864}, {"free_bytes", 67108864}}},
      {"temp", {{"folder", "tmp"}, {"skipped", {"TMPDIR"}}}},
      {"nvidia", {{"kernel_driver_version", "580.95.05"}, {"uvm_loaded", true}, {"compat_libcuda_on_path", false},
                  {"device_nodes", {{{"name", "nvidia-uvm"}, {"accessible", true}}, {{"name", "nvidia0"}, {"accessible", false}}}},
                  {"libcuda", {{"loaded", true}, {"source", "system"}, {"version", "580.95.05"}, {"cuda_version", "13.0"}}}}},
      {"environment", {{{"name", "CUDA_VISIBLE_DEVICES"}, {"valid", false}, {"value", nullptr}, {"note", "x"}},
                       {{"name", "CUDA_LAUNCH_BLOCKING"}, {"valid", true}, {"value", "1"}, {"note", nullptr}}}}};
  EXPECT_EQ(line_starting(render_terminal(r, false), "Host"), "") << "a plain run shows no host lines";
  r["host"]["tool"] = "nvidia-smi";
  r["host"]["status"] = "absent";
  const std::string out = render_terminal(r, false);
  EXPECT_EQ(line_starting(out, "Host limits"),
            "Host limits (soft/hard): open files 1024/524288, address space unlimited/unlimited, locked memory 8 MiB/8 MiB, "
            "processes unlimited/unlimited, stack 8 MiB/unlimited");
  EXPECT_EQ(line_starting(out, "Host container"),
            "Host container: docker, cgroup v2, memory 1.0 GiB used of 16.0 GiB, CPU quota 8 cores, 16 CPUs usable, pids unlimited");
  EXPECT_EQ(line_starting(out, "Host /dev/shm"), "Host /dev/shm: 64 MiB (64 MiB free); temporary folder: tmp");
  EXPECT_EQ(line_starting(out, "Host NVIDIA"),
            "Host NVIDIA: kernel driver 580.95.05, nvidia-uvm loaded, nodes nvidia-uvm nvidia0 (no access), compat libcuda on "
            "LD_LIBRARY_PATH: no, libcuda loaded: system 580.95.05 (CUDA 13.0)");
  EXPECT_EQ(line_starting(out, "Host environment"), "Host environment: CUDA_VISIBLE_DEVICES (not valid), CUDA_LAUNCH_BLOCKING=1");
}

TEST(TerminalReporter, ShowsOneLineForEachLayerThatRan) {
  const std::string out = render_terminal(failed_report(), false);
  const std::string l1 = line_starting(out, "  L1 "), l3 = line_starting(out, "  L3 ");
  EXPECT_TRUE(contains(l1, "runtime & import") && contains(l1, "passed") && contains(l1, "(1/1 passed)")) << out;
  EXPECT_TRUE(contains(line_starting(out, "  L2 "), "(2/2 passed)")) << out;
  EXPECT_TRUE(contains(l3, "failed") && contains(l3, "(1/2 passed)") && contains(l3, "CHECK_FAILED at L3.product"))
      << out;
  EXPECT_EQ(line_starting(out, "  L4 "), "") << "a layer that did not run is not listed\n" << out;
}

TEST(TerminalReporter, ShowsTargetLibTorchAndDevice) {
  const std::string out = render_terminal(failed_report(), false);
  EXPECT_TRUE(contains(out, "run r-42  target cuda:0")) << out;
  EXPECT_EQ(line_starting(out, "LibTorch:"), "LibTorch: 2.11.0 (CUDA 13.0 build, found via prefix)") << out;
  EXPECT_EQ(line_starting(out, "Device:"), "Device: NVIDIA H200 (compute capability 9.0, 139.8 GiB)") << out;
}

TEST(TerminalReporter, CpuPassSaysWhatWasVerified) {
  const std::string out = render_terminal(passed_cpu_report(), false);
  EXPECT_TRUE(contains(out, "target cpu")) << out;
  EXPECT_EQ(line_starting(out, "LibTorch:"), "LibTorch: 1.13.0 (CPU-only build, found via prefix)") << out;
  EXPECT_EQ(line_starting(out, "Verdict:"), "Verdict: CPU_CHECK_PASSED (exit 0)") << out;
  EXPECT_EQ(line_starting(out, "  product"), "  product and gradient verified on cpu, loss 196.0") << out;
  EXPECT_EQ(line_starting(out, "  next:"), "  next:  conclude nothing about CUDA or ROCm") << out;
  EXPECT_FALSE(contains(out, "cause:")) << out;
  EXPECT_FALSE(contains(out, "Device:")) << out;
}

TEST(TerminalReporter, RocmBuildAndMissingLibTorch) {
  json r = failed_report();
  r["pytorch"] = {{"loaded", true}, {"version", "2.8.0"}, {"backend", "rocm"}, {"hip_compiled", "6.4.1"},
                  {"source", "prefix"}};
  EXPECT_EQ(line_starting(render_terminal(r, false), "LibTorch:"), "LibTorch: 2.8.0 (ROCm/HIP 6.4.1 build, found via prefix)");
  r["pytorch"] = {{"loaded", false}};
  EXPECT_EQ(line_starting(render_terminal(r, false), "LibTorch:"), "LibTorch: not loaded");
}

TEST(TerminalReporter, FieldsOfAnUnexpectedTypeReadAsAbsent) {  // found by tests/fuzz
  json r = passed_cpu_report();
  r["pytorch"]["loaded"] = "yes";
  r["execution"]["product_verified"] = 1;
  r["device"] = {{"name", "H200"}, {"total_memory_bytes", "many"}};
  std::string out;
  ASSERT_NO_THROW(out = render_terminal(r, false));
  EXPECT_NE(out.find("LibTorch: not loaded"), std::string::npos) << out;
  EXPECT_NE(out.find("0.0 GiB"), std::string::npos) << out;
  EXPECT_EQ(out.find("product and gradient verified"), std::string::npos) << out;
}

TEST(TerminalReporter, NoEscapesWithoutColour) {
  for (const json& r : {failed_report(), passed_cpu_report()})
    EXPECT_EQ(render_terminal(r, false).find('\x1b'), std::string::npos);
}

TEST(TerminalReporter, ColourPaintsVerdictAndLayersButKeepsTheText) {
  const std::string out = render_terminal(failed_report(), true);
  EXPECT_TRUE(contains(out, "\x1b[")) << out;
  EXPECT_TRUE(contains(line_starting(out, "Verdict:"), "\x1b[")) << out;
  EXPECT_TRUE(contains(line_starting(out, "  L3 "), "\x1b[")) << out;
  EXPECT_TRUE(contains(out, "CHECK_FAILED (exit 8)")) << out;
  EXPECT_TRUE(contains(out, "  next:  read the reported stage before running a model")) << out;
}

}  // namespace
}  // namespace kd
