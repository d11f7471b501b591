// What a person reads on the terminal: the layers, the verdict with its exit code,
// stage, cause and next action; colour only when asked.
#include "reporters/terminal_reporter.h"

#include <sstream>

#include <gtest/gtest.h>

namespace kd {
namespace {

using nlohmann::json;

// A report as build_report() makes it: L3's product check failed on cuda:0.
json failed_report() {
  return json::parse(R"({
    "schema_version": "1.0", "run_id": "r-42", "status": "failed", "code": "CHECK_FAILED", "exit_code": 8,
    "stage": "L3.product", "next_action": "read the reported stage before running a model",
    "requested": {"device": "cuda", "device_index": 0},
    "runtime": {"suite_version": "0.1.0"},
    "pytorch": {"loaded": true, "version": "2.11.0", "cuda_compiled": "13.0", "hip_compiled": null,
                "backend": "cuda", "source": "prefix"},
    "device": {"name": "NVIDIA H200", "capability": "9.0", "total_memory_bytes": 150109880320},
    "execution": {"device": "cuda:0", "product_verified": false, "gradient_verified": false, "loss": null},
    "layers": [
      {"id": "L1", "title": "runtime & import", "status": "passed",
       "tests": [{"name": "LibTorchLoads", "status": "passed"}]},
      {"id": "L2", "title": "backend & device", "status": "passed",
       "tests": [{"name": "BackendDeclared", "status": "passed"}, {"name": "GpuAvailable", "status": "passed"}]},
      {"id": "L3", "title": "tiny op", "status": "failed",
       "tests": [{"name": "Inputs", "status": "passed"},
                 {"name": "Product", "status": "failed", "code": "CHECK_FAILED", "stage": "L3.product"}]},
      {"id": "L4", "title": "representative input", "status": "not_run", "tests": []}],
    "warnings": ["test-only fault injection 'wrong-product' was active: this is not a diagnosis"],
    "error": {"code": "CHECK_FAILED", "message": "p = [[3,1],[7,2]], expected [[3,1],[7,3]]"}
  })");
}

json passed_cpu_report() {
  json r = failed_report();
  r["status"] = "passed";
  r["code"] = "CPU_CHECK_PASSED";
  r["exit_code"] = 0;
  r["stage"] = "L3.synchronize";
  r["next_action"] = "conclude nothing about CUDA or ROCm";
  r["requested"] = {{"device", "cpu"}, {"device_index", nullptr}};
  r["pytorch"] = {{"loaded", true}, {"version", "1.13.0"}, {"backend", "none"}, {"source", "prefix"}};
  r["device"] = nullptr;
  r["execution"] = {{"device", "cpu"}, {"product_verified", true}, {"gradient_verified", true}, {"loss", 196.0}};
  r["layers"] = json::array();
  r["warnings"] = json::array();
  r["error"] = nullptr;
  return r;
}

std::string line_starting(const std::string& text, const std::string& start) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(start, 0) == 0) return line;
  return "";
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(TerminalReporter, FailureShowsVerdictStageCauseAndNextAction) {
  const std::string out = render_terminal(failed_report(), false);
  EXPECT_EQ(line_starting(out, "Verdict:"), "Verdict: CHECK_FAILED (exit 8) at stage L3.product") << out;
  EXPECT_EQ(line_starting(out, "  cause:"), "  cause: p = [[3,1],[7,2]], expected [[3,1],[7,3]]") << out;
  EXPECT_EQ(line_starting(out, "  next:"), "  next:  read the reported stage before running a model") << out;
  EXPECT_TRUE(contains(out, "  warning: test-only fault injection 'wrong-product'")) << out;
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
