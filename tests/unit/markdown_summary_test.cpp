// The Markdown summary a CI job shows: verdict, code, stage, next action, the layer table,
// device and versions; text from the machine can never turn into markup.
#include "reporters/markdown_summary.h"

#include <gtest/gtest.h>

#include "sample_reports.h"

namespace kd {
namespace {

TEST(MarkdownSummary, FailureShowsVerdictStageCauseAndNextAction) {
  const std::string md = render_markdown_summary(failed_report());
  EXPECT_EQ(line_starting(md, "### "), "### kernodeck-diagnostic: ❌ `CHECK_FAILED`") << md;
  EXPECT_EQ(line_starting(md, "| Verdict |"), "| Verdict | `CHECK_FAILED` (exit 8), **failed** |") << md;
  EXPECT_EQ(line_starting(md, "| Stage |"), "| Stage | `L3.product` |") << md;
  EXPECT_EQ(line_starting(md, "| Error |"), R"(| Error | p = \[\[3,1\],\[7,2\]\], expected \[\[3,1\],\[7,3\]\] |)") << md;
  EXPECT_EQ(line_starting(md, "| Cause |"), "") << "no known signature matched\n" << md;
  EXPECT_EQ(line_starting(md, "| Next action |"), "| Next action | read the reported stage before running a model |")
      << md;
  EXPECT_EQ(line_starting(md, "| Target |"), "| Target | cuda:0 |") << md;
  EXPECT_EQ(line_starting(md, "| Check |"), "") << "nothing was verified\n" << md;
  EXPECT_EQ(line_starting(md, "- ⚠️ "), R"(- ⚠️ test-only fault injection 'wrong-product' was active: this is not a diagnosis)")
      << md;
}

TEST(MarkdownSummary, ARecognisedErrorShowsTheTerminalsCauseAndNextAction) {
  nlohmann::json r = failed_report();
  r["code"] = r["error"]["code"] = "GPU_UNAVAILABLE";
  r["stage"] = "L2.gpu_available";
  r["error"]["message"] = "torch.cuda: Found no NVIDIA driver on your system";
  r["error"]["cause"] = "no NVIDIA driver is visible to this process";
  r["next_action"] = r["error"]["next_action"] = "install the NVIDIA driver";
  const std::string md = render_markdown_summary(r);
  EXPECT_EQ(line_starting(md, "| Error |"), "| Error | torch.cuda: Found no NVIDIA driver on your system |") << md;
  EXPECT_EQ(line_starting(md, "| Cause |"), "| Cause | no NVIDIA driver is visible to this process |") << md;
  EXPECT_EQ(line_starting(md, "| Next action |"), "| Next action | install the NVIDIA driver |") << md;
  EXPECT_EQ(line_starting(md, "| Action |"), "") << "a report without error.action shows none\n" << md;
  r["error"]["action"] = "drain_node";  // as on the terminal, the word for automation
  EXPECT_EQ(line_starting(render_markdown_summary(r), "| Action |"), "| Action | `drain_node` |");
}

TEST(MarkdownSummary, DeviceAndVersions) {
  nlohmann::json r = failed_report();
  r["runtime"] = {{"os_name", "Ubuntu 24.04.3 LTS"}, {"arch", "x86_64"}, {"libc", "glibc 2.39"},
                  {"compiler", "gcc 13.3.0"}, {"suite_version", "0.1.0"}};
  r["run_id"] = "0123456789abcdef";
  const std::string md = render_markdown_summary(r);
  EXPECT_EQ(line_starting(md, "| Device |"), "| Device | NVIDIA H200 (compute capability 9.0, 139.8 GiB) |") << md;
  EXPECT_EQ(line_starting(md, "| LibTorch |"), "| LibTorch | 2.11.0 (CUDA 13.0 build, found via prefix) |") << md;
  EXPECT_EQ(line_starting(md, "| Runtime |"), "| Runtime | Ubuntu 24.04.3 LTS, x86\\_64, glibc 2.39, gcc 13.3.0 |") << md;
  EXPECT_EQ(line_starting(md, "| Suite |"), "| Suite | kernodeck-conformance 0.1.0, run `0123456789abcdef` |") << md;
}

TEST(MarkdownSummary, LayerTableHasEveryLayerInOrder) {
  const std::string md = render_markdown_summary(failed_report());
  EXPECT_TRUE(contains(md, "| Layer | | Status | Tests passed | First failure |\n|---|---|---|---|---|\n"
                           "| L1 | runtime \\& import | passed | 1/1 |  |\n"
                           "| L2 | backend \\& device | passed | 2/2 |  |\n"
                           "| L3 | tiny op | failed | 1/2 | CHECK\\_FAILED at L3.product |\n"
                           "| L4 | representative input | not run | — |  |\n"))
      << md;
}

TEST(MarkdownSummary, CpuPassSaysWhatWasVerifiedAndQueriesNoGpu) {
  const std::string md = render_markdown_summary(passed_cpu_report());
  EXPECT_EQ(line_starting(md, "### "), "### kernodeck-diagnostic: ✅ `CPU_CHECK_PASSED`") << md;
  EXPECT_EQ(line_starting(md, "| Verdict |"), "| Verdict | `CPU_CHECK_PASSED` (exit 0), passed |") << md;
  EXPECT_EQ(line_starting(md, "| Check |"), "| Check | product and gradient verified on cpu, loss 196.0 |") << md;
  EXPECT_EQ(line_starting(md, "| Device |"), "| Device | not queried (CPU run) |") << md;
  EXPECT_EQ(line_starting(md, "| Target |"), "| Target | cpu |") << md;
  EXPECT_EQ(line_starting(md, "| LibTorch |"), "| LibTorch | 1.13.0 (CPU-only build, found via prefix) |") << md;
  EXPECT_EQ(line_starting(md, "| Stage |"), "| Stage | `L3.gradients` |") << md;
  EXPECT_FALSE(contains(md, "| Error |")) << md;
  EXPECT_FALSE(contains(md, "| Cause |")) << md;
  EXPECT_FALSE(contains(md, "⚠️")) << md;
}

TEST(MarkdownSummary, MachineTextNeverBecomesMarkupOrBreaksTheTable) {
  nlohmann::json r = failed_report();
  r["error"]["message"] = "bad | cell <img src=x onerror=alert(1)> `code` *bold* [link](http://x)\nsecond line";
  r["stage"] = "weird stage|`x`";
  const std::string md = render_markdown_summary(r);
  const std::string error = line_starting(md, "| Error |");
  EXPECT_EQ(error, R"(| Error | bad \| cell \<img src=x onerror=alert(1)\> \`code\` \*bold\* \[link\](http://x) second line |)")
      << md;
  EXPECT_EQ(line_starting(md, "| Stage |"), R"(| Stage | weird stage\|\`x\` |)") << md;
  EXPECT_EQ(markdown_text("a_b & c!"), R"(a\_b \& c\!)");
}

TEST(MarkdownSummary, MissingPartsDoNotThrow) {
  nlohmann::json r = passed_cpu_report();
  r["runtime"] = nlohmann::json::object();
  r["stage"] = nullptr;
  std::string md;
  EXPECT_NO_THROW(md = render_markdown_summary(r));
  EXPECT_EQ(line_starting(md, "| Runtime |"), "| Runtime | — |") << md;
  EXPECT_EQ(line_starting(md, "| Stage |"), "| Stage | — |") << md;
}

}  // namespace
}  // namespace kd
