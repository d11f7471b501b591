// The two kinds of skip as a user reads them: in the report, each skipped test (and a layer whose tests all
// skipped) says whether it cannot apply here or was blocked by an earlier failure, and the terminal's layer
// line says the same in a few words.
#include <gtest/gtest.h>

#include "reporters/report_builder.h"
#include "reporters/terminal_reporter.h"
#include "worker_event_builders.h"

namespace kd {
namespace {

using nlohmann::json;
using namespace kd::test;

const LayerInfo kL3 = {"L3", "L3_TinyOp", "tiny op"};
const LayerInfo kL8 = {"L8", "L8_Collective", "collective"};

events::TestEnd not_applicable(const std::string& suite, const std::string& test, const std::string& message) {
  return skipped(suite, test, message, "not_applicable");
}
const json kGpuUnavailable = {{"stage", "L2.gpu_available"}, {"code", "GPU_UNAVAILABLE"}};
events::TestEnd blocked(const std::string& test) {
  return skipped("L3_TinyOp", test, "prerequisite L2.gpu_available failed earlier (GPU_UNAVAILABLE)", "blocked",
                 events::BlockedBy{"L2.gpu_available", "GPU_UNAVAILABLE"});
}

TEST(SkipKind, EachSkippedTestSaysItsKindAndABlockedOneWhatBlockedIt) {
  const json l = layer_entry(kL3, {passed("L3_TinyOp", "Inputs"), blocked("Product"),
                                   not_applicable("L3_TinyOp", "Synchronize", "CPU work is synchronous: nothing to synchronize")});
  EXPECT_EQ(l["status"], "passed");
  EXPECT_FALSE(l.contains("skip_kind")) << "a layer with a pass is no skipped layer";
  EXPECT_FALSE(l["tests"][0].contains("skip_kind")) << "a pass has no skip kind";
  EXPECT_EQ(l["tests"][1]["skip_kind"], "blocked");
  EXPECT_EQ(l["tests"][1]["blocked_by"], kGpuUnavailable);
  EXPECT_EQ(l["tests"][2]["skip_kind"], "not_applicable");
  EXPECT_FALSE(l["tests"][2].contains("blocked_by"));
}

TEST(SkipKind, ALayerWhoseTestsAllSkippedSaysWhy) {
  const json blocked_layer = layer_entry(kL3, {blocked("Inputs"), blocked("Product")});
  EXPECT_EQ(blocked_layer["status"], "skipped");  // the status stays as it was
  EXPECT_EQ(blocked_layer["skip_kind"], "blocked");
  EXPECT_EQ(blocked_layer["blocked_by"], kGpuUnavailable);
  const json na = layer_entry(kL8, {not_applicable("L8_Collective", "Join", "a job of one rank (slurm): nothing to check"),
                                    not_applicable("L8_Collective", "AllReduce", "a job of one rank (slurm): nothing to check")});
  EXPECT_EQ(na["status"], "skipped");
  EXPECT_EQ(na["skip_kind"], "not_applicable");
  EXPECT_FALSE(na.contains("blocked_by"));
}

TEST(SkipKind, ALayerWithAnyBlockedTestIsBlocked) {  // fixing the failure would run that one
  const json l = layer_entry(kL3, {not_applicable("L3_TinyOp", "Inputs", "does not apply"), blocked("Product")});
  EXPECT_EQ(l["skip_kind"], "blocked");
  EXPECT_EQ(l["blocked_by"], kGpuUnavailable);
}

// A kind or blocked_by of the wrong type makes the whole line no event (event_channel_test.cpp).
TEST(SkipKind, ABrokenWorkersKindIsLeftOutNotGuessed) {
  const json l = layer_entry(kL3, {skipped("L3_TinyOp", "Inputs", "?", "maybe"),
                                   skipped("L3_TinyOp", "Loss", "?", "blocked", events::BlockedBy{"L2.x", "NO_SUCH_CODE"}),
                                   skipped("L3_TinyOp", "Gradients", "?", "blocked", events::BlockedBy{"", "GPU_UNAVAILABLE"})});
  EXPECT_FALSE(l["tests"][0].contains("skip_kind")) << l["tests"][0];
  EXPECT_EQ(l["tests"][1]["skip_kind"], "blocked");
  EXPECT_FALSE(l["tests"][1].contains("blocked_by")) << "an unknown code never reaches the report";
  EXPECT_FALSE(l["tests"][2].contains("blocked_by")) << "nor a failure at no stage";
  EXPECT_EQ(l["skip_kind"], "blocked");
  EXPECT_FALSE(l.contains("blocked_by"));
}

TEST(SkipKind, TheTerminalLineSaysBlockedByWhichFailure) {
  const json l = layer_entry(kL3, {blocked("Inputs"), blocked("Product")});
  EXPECT_EQ(render_layer_line(l, false),
            "  L3  tiny op              skipped  (0/2 passed)      0.00 s  blocked: L2.gpu_available failed (GPU_UNAVAILABLE)\n");
}

TEST(SkipKind, TheTerminalLineSaysWhyItDoesNotApplyInAFewWords) {
  const std::string why =
      "not one rank of a multi-rank job: no --rendezvous, and no torchrun, Slurm or Kubernetes rendezvous in the environment";
  const json l = layer_entry(kL8, {not_applicable("L8_Collective", "Join", why), not_applicable("L8_Collective", "Barrier", why)});
  EXPECT_EQ(render_layer_line(l, false),
            "  L8  collective           skipped  (0/2 passed)      0.00 s  not applicable: not one rank of a multi-rank job\n");
  EXPECT_EQ(l["tests"][0]["message"], why) << "the report keeps the whole reason";
  const json short_reason = layer_entry(kL8, {not_applicable("L8_Collective", "Join", "needs 2 GPUs; 1 visible")});
  EXPECT_EQ(render_layer_line(short_reason, false),
            "  L8  collective           skipped  (0/1 passed)      0.00 s  not applicable: needs 2 GPUs; 1 visible\n");
}

TEST(SkipKind, AFailedLayerLineStillNamesItsFailure) {
  events::TestEnd inputs = failed("L3_TinyOp", "Inputs", "GPU_UNAVAILABLE", "L2.gpu_available", "");
  inputs.message.reset();
  inputs.duration_ms = 0;
  const json l = layer_entry(kL3, {inputs, blocked("Product")});
  EXPECT_EQ(render_layer_line(l, false),
            "  L3  tiny op              failed   (0/2 passed)      0.00 s  GPU_UNAVAILABLE at L2.gpu_available\n");
}

}  // namespace
}  // namespace kd
