// --device-index all: the merge of the per-GPU reports (the first failing GPU decides, the
// report says which) and the order of the runs, with a stand-in for the worker.
#include "reporters/device_merge.h"

#include <gtest/gtest.h>

#include "reporters/report_builder.h"
#include "reporters/terminal_reporter.h"
#include "runner/all_devices.h"
#include "sample_reports.h"

namespace kd {
namespace {

using nlohmann::json;

// GPU `index`'s report as build_report() makes it: passed, or failed with code/exit at stage.
json gpu_report(int index, int visible, const char* code = "GPU_CHECK_PASSED", int exit = 0, const char* stage = "L3.synchronize") {
  json r = failed_report();
  r["requested"] = {{"device", "cuda"}, {"device_index", index}, {"all_devices", false}};
  r["pytorch"]["visible_device_count"] = visible;
  r["device"]["name"] = "NVIDIA H200";
  r["device"]["index"] = index;
  r["code"] = code;
  r["exit_code"] = exit;
  r["stage"] = stage;
  r["status"] = exit == 0 ? "passed" : "failed";
  r["error"] = exit == 0 ? json() : json({{"code", code}, {"message", std::string("broken on GPU ") + std::to_string(index)}});
  r["warnings"] = json::array();
  r["peer"] = nullptr;
  return r;
}

json peer_report(const char* code = "SELECTED_TESTS_PASSED", int exit = 0, const char* stage = "L7.all_reduce") {
  json r = gpu_report(0, 2, code, exit, stage);
  r["layers"].push_back({{"id", "L7"}, {"title", "peer"}, {"status", exit ? "failed" : "passed"}, {"tests", json::array()}});
  r["peer"] = {{"device_count", 2}, {"access", {{nullptr, true}, {false, nullptr}}},
               {"bandwidth", {{"unit", "GB/s"}, {"matrix", {{nullptr, 391.5}, {12.25, nullptr}}}}},
               {"all_reduce", {{"status", "not_supported"}, {"message", "not supported by this LibTorch"}}}};
  if (exit) r["error"] = {{"code", code}, {"message", "GPU 1 -> GPU 0: 1 of 67108864 int32 elements differ"}};
  return r;
}

std::vector<json> with_l7_layer(std::vector<json> v) {
  for (auto& r : v) r["layers"].push_back({{"id", "L7"}, {"title", "peer"}, {"status", "not_run"}, {"tests", json::array()}});
  return v;
}

TEST(DeviceMerge, AllPassGivesGpuZerosPassWithOneVerdictPerGpu) {
  const json m = merge_device_reports({gpu_report(0, 2), gpu_report(1, 2)}, json());
  EXPECT_EQ(m["code"], "GPU_CHECK_PASSED");
  EXPECT_EQ(m["exit_code"], 0);
  EXPECT_TRUE(m["device_index"].is_null());
  ASSERT_EQ(m["devices"].size(), 2u);
  EXPECT_EQ(m["devices"][1], json({{"index", 1}, {"name", "NVIDIA H200"}, {"code", "GPU_CHECK_PASSED"}, {"exit_code", 0},
                                   {"stage", "L3.synchronize"}, {"message", nullptr}}));
  EXPECT_TRUE(m["requested"]["all_devices"].get<bool>());
  EXPECT_TRUE(m["requested"]["device_index"].is_null());
}

TEST(DeviceMerge, TheFirstFailingGpuDecidesAndIsNamed) {
  const json m = merge_device_reports(
      {gpu_report(0, 3), gpu_report(1, 3, "OUT_OF_MEMORY", 9, "L3.inputs"), gpu_report(2, 3, "CHECK_FAILED", 8, "L3.product")},
      json());
  EXPECT_EQ(m["code"], "OUT_OF_MEMORY");
  EXPECT_EQ(m["exit_code"], 9);
  EXPECT_EQ(m["stage"], "L3.inputs");
  EXPECT_EQ(m["device_index"], 1);
  EXPECT_EQ(m["error"]["message"], "broken on GPU 1");
  EXPECT_EQ(m["device"]["index"], 1);  // the deciding GPU's own facts
  EXPECT_EQ(m["devices"][0]["code"], "GPU_CHECK_PASSED");
  EXPECT_EQ(m["devices"][2]["code"], "CHECK_FAILED");
  EXPECT_EQ(m["devices"][2]["message"], "broken on GPU 2");
  const std::string text = render_terminal(m, false, "");
  EXPECT_TRUE(contains(text, "Verdict: OUT_OF_MEMORY (exit 9) at stage L3.inputs on GPU 1")) << text;
  EXPECT_TRUE(contains(text, "GPU 2   NVIDIA H200              CHECK_FAILED (exit 8) at stage L3.product: broken on GPU 2")) << text;
  EXPECT_TRUE(contains(text, "GPU 0   NVIDIA H200              GPU_CHECK_PASSED (exit 0)\n")) << text;
}

TEST(DeviceMerge, AReportThatCannotBeSavedIsNoGpusVerdict) {
  json m = merge_device_reports({gpu_report(0, 2), gpu_report(1, 2, "CHECK_FAILED", 8, "L3.product")}, json());
  set_verdict(&m, Code::OutputWriteFailed, "report", "exists");
  EXPECT_EQ(m["exit_code"], 12);
  EXPECT_TRUE(m["device_index"].is_null());
  EXPECT_EQ(line_starting(render_terminal(m, false, ""), "Verdict:"), "Verdict: OUTPUT_WRITE_FAILED (exit 12) at stage report");
}

TEST(DeviceMerge, NoVisibleGpuIsTheFirstRunsVerdictWithNoDevices) {
  json none = gpu_report(0, 0, "GPU_UNAVAILABLE", 6, "L2.gpu_available");
  none["device"] = nullptr;
  const json m = merge_device_reports({none}, json());
  EXPECT_EQ(m["code"], "GPU_UNAVAILABLE");
  EXPECT_EQ(m["devices"], json::array());
  EXPECT_TRUE(m["device_index"].is_null());
  none["pytorch"]["visible_device_count"] = nullptr;  // never reached L2
  EXPECT_EQ(merge_device_reports({none}, json())["devices"], json::array());
}

TEST(DeviceMerge, PeerLayerAddsItsMatrixAndDecidesOnlyWhenEveryGpuPassed) {
  const auto gpus = with_l7_layer({gpu_report(0, 2), gpu_report(1, 2)});
  json m = merge_device_reports(gpus, peer_report());
  EXPECT_EQ(m["code"], "GPU_CHECK_PASSED");
  EXPECT_EQ(m["peer"]["bandwidth"]["matrix"][0][1], 391.5);
  EXPECT_EQ(m["layers"].back()["status"], "passed");
  const std::string text = render_terminal(m, false, "");
  EXPECT_TRUE(contains(text, "391.5")) << text;
  EXPECT_TRUE(contains(text, "12.2*")) << text;  // no peer access from GPU 1 to GPU 0: marked
  EXPECT_TRUE(contains(text, "All-reduce: not supported: not supported by this LibTorch")) << text;

  m = merge_device_reports(gpus, peer_report("CHECK_FAILED", 8, "L7.copy"));
  EXPECT_EQ(m["code"], "CHECK_FAILED");
  EXPECT_EQ(m["stage"], "L7.copy");
  EXPECT_TRUE(m["device_index"].is_null());  // a pair, named in the message
  EXPECT_EQ(m["error"]["message"], "GPU 1 -> GPU 0: 1 of 67108864 int32 elements differ");

  const auto mixed = with_l7_layer({gpu_report(0, 2, "RUNTIME_ERROR", 9, "L3.product"), gpu_report(1, 2)});
  m = merge_device_reports(mixed, peer_report("CHECK_FAILED", 8, "L7.copy"));
  EXPECT_EQ(m["code"], "RUNTIME_ERROR");  // the first failing GPU comes first
  EXPECT_EQ(m["device_index"], 0);
}

TEST(DeviceMerge, WarningsOnceNamingTheGpusUnlessAllGaveThem) {
  auto a = gpu_report(0, 2), b = gpu_report(1, 2);
  a["warnings"] = {"shared", "only here"};
  b["warnings"] = {"shared"};
  EXPECT_EQ(merge_device_reports({a, b}, json())["warnings"], json({"shared", "GPU 0: only here"}));
}

TEST(AllDevices, OneRunPerVisibleGpuThenThePeerLayer) {
  std::vector<Options> runs;
  std::vector<bool> splits_l4;
  Options o;
  o.all_devices = true;
  auto fake = [&](const Options& w, bool splits) {
    splits_l4.push_back(splits);
    runs.push_back(w);
    return w.layers == std::vector<std::string>{"L7"} ? peer_report() : gpu_report(w.device_index, 3);
  };
  const json m = check_all_devices(o, fake, [] { return false; });
  ASSERT_EQ(runs.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(runs[i].device_index, i);
    EXPECT_FALSE(runs[i].all_devices);
    EXPECT_TRUE(runs[i].layers.empty());  // the plain run on each GPU
  }
  EXPECT_EQ(runs[3].layers, std::vector<std::string>{"L7"});
  EXPECT_EQ(m["devices"].size(), 3u);
  EXPECT_TRUE(m["peer"].is_object());
}

TEST(AllDevices, LayersPerGpuAndWhenThePeerLayerRuns) {
  EXPECT_EQ(per_device_layers({"L1", "L2", "L3", "L6", "L7"}), (std::vector<std::string>{"L1", "L2", "L3", "L6"}));
  EXPECT_EQ(per_device_layers({"L7"}), std::vector<std::string>{"L2"});
  EXPECT_TRUE(per_device_layers({}).empty());
  EXPECT_TRUE(wants_peer_layer({}));
  EXPECT_TRUE(wants_peer_layer({"L3", "L7"}));
  EXPECT_FALSE(wants_peer_layer({"L6"}));
  // One GPU, or none: no peer run; an interruption starts no further GPU.
  int calls = 0;
  Options o;
  o.all_devices = true;
  check_all_devices(o, [&](const Options& w, bool) { ++calls; return gpu_report(w.device_index, 1); }, [] { return false; });
  EXPECT_EQ(calls, 1);
  calls = 0;
  const json m = check_all_devices(o, [&](const Options& w, bool) { ++calls; return gpu_report(w.device_index, 4); },
                                   [&] { return calls >= 2; });
  EXPECT_EQ(calls, 2);
  EXPECT_TRUE(contains(m["warnings"].back().get<std::string>(), "GPUs 2 to 3 were not checked"));
}

TEST(AllDevices, AListChecksItsGpusInOrderAndNamesThemByIndex) {
  std::vector<Options> runs;
  std::vector<bool> splits_l4;
  Options o;
  o.all_devices = true;
  o.device_list = {2, 0};
  auto fake = [&](const Options& w, bool splits) {
    splits_l4.push_back(splits);
    runs.push_back(w);
    if (w.layers == std::vector<std::string>{"L7"}) return peer_report();
    return w.device_index == 0 ? gpu_report(0, 4, "CHECK_FAILED", 8, "L3.product") : gpu_report(w.device_index, 4);
  };
  const json m = check_all_devices(o, fake, [] { return false; });
  ASSERT_EQ(runs.size(), 3u);  // GPU 2, GPU 0, then the peer layer over the list
  EXPECT_EQ(runs[0].device_index, 2);
  EXPECT_TRUE(splits_l4[0]);
  EXPECT_FALSE(splits_l4[1]);
  EXPECT_EQ(runs[1].device_index, 0);
  EXPECT_EQ(runs[2].device_list, (std::vector<int>{2, 0}));
  EXPECT_EQ(m["devices"].size(), 2u);
  EXPECT_EQ(m["devices"][0]["index"], 2);
  EXPECT_EQ(m["devices"][1]["index"], 0);
  EXPECT_EQ(m["device_index"], 0);  // the failing GPU by its index, not its place in the list
  EXPECT_EQ(m["code"], "CHECK_FAILED");
}

// L8: this machine is one rank of its job, so only GPU 0's worker joins; its facts stay when another GPU decides.
TEST(AllDevices, OnlyGpuZerosWorkerJoinsTheCollective) {
  std::vector<Options> runs;
  std::vector<bool> splits_l4;
  Options o;
  o.all_devices = true;
  o.full = true;
  o.layers = {"L1", "L2", "L3", "L8"};
  auto fake = [&](const Options& w, bool splits) {
    splits_l4.push_back(splits);
    runs.push_back(w);
    if (w.device_index != 0) return gpu_report(w.device_index, 2, "CHECK_FAILED", 8, "L3.product");
    json r = gpu_report(0, 2);
    r["layers"].push_back({{"id", "L8"}, {"title", "collective"}, {"status", "passed"}, {"tests", json::array()}});
    r["collective"] = {{"source", "slurm"}, {"world_size", 4}, {"rank", 2}};
    return r;
  };
  const json m = check_all_devices(o, fake, [] { return false; });
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].layers, (std::vector<std::string>{"L1", "L2", "L3", "L8"}));
  EXPECT_TRUE(runs[0].full);  // under --full, L8 still runs only as a rank of a job
  EXPECT_EQ(runs[1].layers, (std::vector<std::string>{"L1", "L2", "L3"}));
  EXPECT_FALSE(runs[1].full);
  EXPECT_TRUE(runs[0].device_index_given && runs[1].device_index_given);  // the rank's GPU is GPU 0, not its local rank
  EXPECT_EQ(m["code"], "CHECK_FAILED");
  EXPECT_EQ(m["collective"]["rank"], 2);
  EXPECT_TRUE(std::any_of(m["layers"].begin(), m["layers"].end(),
                          [](const json& l) { return l["id"] == "L8" && l["status"] == "passed"; }));
}

}  // namespace
}  // namespace kd
