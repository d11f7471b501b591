// The report from the worker's events and how the worker ended: the verdict as a user reads it
// (code, exit code, stage, message, next action, after_failure, warnings), the facts, layers and
// markers. Each branch of the decision itself: decision_test.cpp.
#include "reporters/report_builder.h"

#include <csignal>

#include <gtest/gtest.h>

#include "contract/events.h"
#include "worker_ends.h"
#include "worker_event_builders.h"

namespace kd {
namespace {

using nlohmann::json;
using namespace kd::test;

const std::vector<LayerInfo> kLayers = {{"L1", "L1_RuntimeImport", "runtime & import"},
                                        {"L2", "L2_BackendDevice", "backend & device"},
                                        {"L3", "L3_TinyOp", "tiny op"}};

events::Marker marker(const std::string& name, const std::string& st, double t, const std::string& run_id = "run-1") {
  return test::marker(name, st, 1000.0 + t, run_id);
}

json build(std::vector<events::Event> events, WorkerEnd worker = exited(0), Options options = {}) {
  RunRecord run;
  run.options = std::move(options);
  run.run_id = "run-1";
  run.start_mono_ms = 1000.0;
  run.events = std::move(events);
  run.worker = worker;
  return build_report(run, kLayers);
}

Options cpu() {
  Options o;
  o.device = "cpu";
  return o;
}

// A whole L1-L3 run up to the product check, which then fails.
std::vector<events::Event> failing_product_run() {
  const auto f = failed("L3_TinyOp", "Product", "CHECK_FAILED", "L3.product", "p = [[3,1],[7,2]], expected [[3,1],[7,3]]");
  return {stage("L1.import"), passed("L1_RuntimeImport", "LibTorchLoads"), stage("L3.product"), f, end(5, 1, 0, f)};
}

std::vector<events::Event> verified_run(const std::string& device) {
  return {stage("L3.product"), fact("/execution/device", device), fact("/execution/product_verified", true),
          passed("L3_TinyOp", "Product"), stage("L3.gradients"), fact("/execution/gradient_verified", true),
          fact("/execution/loss", 196.0), passed("L3_TinyOp", "Gradients"), end(2, 0)};
}

bool has_warning_with(const json& report, const std::string& text) {
  for (const auto& w : report["warnings"])
    if (w.get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

TEST(ReportBuilder, FailureGivesItsCodeStageMessageAndNextAction) {
  const json r = build(failing_product_run(), exited(1));
  EXPECT_EQ(r["schema_version"], kSchemaVersion);
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["code"], "CHECK_FAILED");
  EXPECT_EQ(r["exit_code"], 8);
  EXPECT_EQ(r["stage"], "L3.product");
  EXPECT_EQ(r["error"]["code"], "CHECK_FAILED");
  EXPECT_EQ(r["error"]["stage"], "L3.product");
  EXPECT_EQ(r["error"]["message"], "p = [[3,1],[7,2]], expected [[3,1],[7,3]]");
  EXPECT_EQ(r["error"]["next_action"], "read the reported stage before running a model");
  EXPECT_EQ(r["next_action"], "read the reported stage before running a model");
}

TEST(ReportBuilder, ARecognisedErrorsNextActionIsTheReportsOnlyOne) {
  const auto f = failed("L2_BackendDevice", "GpuAvailable", "GPU_UNAVAILABLE", "L2.gpu_available",
                        "torch.cuda: Found no NVIDIA driver on your system");
  const json r = build({f, end(1, 1, 0, f)}, exited(1));
  EXPECT_NE(r["error"]["cause"].get<std::string>().find("no NVIDIA driver"), std::string::npos) << r["error"];
  EXPECT_EQ(r["error"]["signature"], "no-driver");
  EXPECT_NE(r["next_action"].get<std::string>().find("install the NVIDIA driver"), std::string::npos) << r["next_action"];
  EXPECT_EQ(r["error"]["next_action"], r["next_action"]);  // never two different next actions
}

// The same words in a container without /dev/nvidia* nodes: the host's facts choose the signature.
TEST(ReportBuilder, TheHostsFactsChooseTheSignature) {
  const auto f = failed("L2_BackendDevice", "GpuAvailable", "GPU_UNAVAILABLE", "L2.gpu_available",
                        "torch.cuda: Found no NVIDIA driver on your system");
  RunRecord run;
  run.run_id = "run-1";
  run.events = {f, end(1, 1, 0, f)};
  run.worker = exited(1);
  run.host = {{"container", {{"detected", true}, {"kind", "docker"}}}, {"nvidia", {{"device_nodes", json::array()}}}};
  const json r = build_report(run, kLayers);
  EXPECT_EQ(r["error"]["signature"], "container-without-gpus") << r["error"];
  EXPECT_NE(r["next_action"].get<std::string>().find("--gpus all"), std::string::npos) << r["next_action"];
  const json passed_run = build(verified_run("cuda:0"));
  EXPECT_TRUE(passed_run["error"].is_null());  // a pass has no error, so no signature
}

// Warnings before failures, from the host's facts: a small /dev/shm, a low limit, a variable left on.
TEST(ReportBuilder, TheMachinesWarningsComeBeforeAFailure) {
  RunRecord run;
  run.run_id = "run-1";
  run.events = verified_run("cuda:0");
  run.worker = exited(0);
  run.host = {{"shm", {{"size_bytes", 64 << 20}, {"free_bytes", 64 << 20}}},
              {"limits", {{"open_files", {{"soft", 64}, {"hard", 4096}}}, {"locked_memory_bytes", {{"soft", 65536}, {"hard", 65536}}}}},
              {"infiniband_devices", 2},
              {"container", {{"detected", true}, {"cpu_quota_cores", 1.0}, {"cpus", 8}, {"memory_limit_bytes", 4ULL << 30},
                             {"memory_used_bytes", 3ULL << 30}}},
              {"temp", {{"folder", "tmp"}, {"skipped", {"TMPDIR"}}}},
              {"environment", {{{"name", "CUDA_LAUNCH_BLOCKING"}, {"valid", true}, {"value", "1"}, {"note", nullptr}},
                               {{"name", "CUDA_VISIBLE_DEVICES"}, {"valid", false}, {"value", nullptr},
                                {"note", "names one device twice (CUDA then shows none)"}}}}};
  const json r = build_report(run, kLayers);
  EXPECT_EQ(r["code"], "GPU_CHECK_PASSED");
  for (const char* w : {"the shared-memory folder (dev/shm) is 64 MiB", "open-files limit (ulimit -n) is 64", "locked-memory limit (ulimit -l) is 64 KiB",
                        "leaves 1024 MiB free", "may use one CPU", "CUDA_LAUNCH_BLOCKING=1 is set",
                        "CUDA_VISIBLE_DEVICES: names one device twice", "TMPDIR names a folder where nothing can be created"})
    EXPECT_TRUE(has_warning_with(r, w)) << w << "\n" << r["warnings"];
  run.options.device = "cpu";  // a CPU run is not warned of what only CUDA does
  run.events = verified_run("cpu");
  EXPECT_FALSE(has_warning_with(build_report(run, kLayers), "CUDA_LAUNCH_BLOCKING"));
}

TEST(ReportBuilder, LayersShowWhichLayerFailed) {
  const json r = build(failing_product_run(), exited(1));
  ASSERT_EQ(r["layers"].size(), 3u);
  EXPECT_EQ(r["layers"][0]["id"], "L1");
  EXPECT_EQ(r["layers"][0]["status"], "passed");
  EXPECT_EQ(r["layers"][1]["status"], "not_run");
  EXPECT_EQ(r["layers"][2]["status"], "failed");
  EXPECT_EQ(r["layers"][2]["tests"][0]["name"], "Product");
  EXPECT_EQ(r["layers"][2]["tests"][0]["code"], "CHECK_FAILED");
}

TEST(ReportBuilder, FailureMessagesAreRedacted) {
  const auto f = failed("L1_RuntimeImport", "LibTorchLoads", "TORCH_IMPORT_FAILED", "L1.import",
                        "/home/someone/libtorch/lib/libc10.so: file too short\nframe #0 /opt/x");
  const json r = build({stage("L1.import"), f, end(1, 1, 0, f)});
  EXPECT_EQ(r["code"], "TORCH_IMPORT_FAILED");
  EXPECT_EQ(r["exit_code"], 4);
  EXPECT_EQ(r["error"]["message"], "<path>/libc10.so: file too short");
  EXPECT_EQ(r["layers"][0]["tests"][0]["message"], "<path>/libc10.so: file too short");
}

TEST(ReportBuilder, WorkerExitingWithoutVerdictIsWorkerFailed) {
  const json r = build({}, exited(1));
  EXPECT_EQ(r["code"], "WORKER_FAILED");
  EXPECT_EQ(r["stage"], nullptr);
  EXPECT_NE(r["error"]["message"].get<std::string>().find("status 1"), std::string::npos);
}

// Issue 17: a model whose loading crashes the worker (a .pt2 with a truncated library dies by SIGBUS)
// is a model that did not load, with the crash as what happened in that stage.
TEST(ReportBuilder, AWorkerThatDiesLoadingTheModelIsModelLoadFailed) {
  const json r = build({stage("L3.product"), passed("L3_TinyOp", "Product"), stage("L4.model_load")}, killed(SIGBUS));
  EXPECT_EQ(r["code"], "MODEL_LOAD_FAILED");
  EXPECT_EQ(r["exit_code"], 13);
  EXPECT_EQ(r["stage"], "L4.model_load");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("crashed the worker: the worker was killed by signal 7 (SIGBUS)"),
            std::string::npos) << r["error"];
  EXPECT_EQ(r["after_failure"], (json{{"event", "worker_failed"}, {"code", "WORKER_FAILED"}, {"stage", "L4.model_load"},
                                      {"message", "the worker was killed by signal 7 (SIGBUS)"}}));
}

// The first failing test decides, whatever happens after it: the later crash is the report's after_failure.
TEST(ReportBuilder, TheFirstFailureDecidesWhenTheWorkerCrashesAfterIt) {
  const auto f = failed("L1_RuntimeImport", "PythonImportsTorch", "TORCH_MISSING", "L1.python", "python: no module named torch");
  const json r = build({stage("L1.python"), f, stage("L3.inputs")}, killed(SIGABRT));
  EXPECT_EQ(r["code"], "TORCH_MISSING");
  EXPECT_EQ(r["exit_code"], 3);
  EXPECT_EQ(r["stage"], "L1.python");
  EXPECT_EQ(r["error"]["message"], "python: no module named torch");
  EXPECT_EQ(r["after_failure"]["event"], "worker_failed");
  EXPECT_EQ(r["after_failure"]["code"], "WORKER_FAILED");
  EXPECT_EQ(r["after_failure"]["stage"], "L3.inputs");
  EXPECT_NE(r["after_failure"]["message"].get<std::string>().find("SIGABRT"), std::string::npos) << r["after_failure"];
  EXPECT_TRUE(has_warning_with(r, "after the first failure")) << r["warnings"];
}

TEST(ReportBuilder, AFailureWithAVerdictHasNoAfterFailure) {
  const json r = build(failing_product_run(), exited(1));
  EXPECT_EQ(r["after_failure"], nullptr);
}

TEST(ReportBuilder, SignalAfterTheVerdictKeepsTheVerdictAndWarns) {
  const json r = build(verified_run("cuda:0"), killed(SIGSEGV));
  EXPECT_EQ(r["code"], "GPU_CHECK_PASSED");
  EXPECT_TRUE(has_warning_with(r, "SIGSEGV")) << r["warnings"];
}

TEST(ReportBuilder, NoTestRunIsAUsageError) {
  const json r = build({end(0, 0)});
  EXPECT_EQ(r["code"], "USAGE_ERROR");
  EXPECT_EQ(r["exit_code"], 2);
  EXPECT_EQ(r["status"], "failed");
}

TEST(ReportBuilder, VerifiedGpuRunIsGpuCheckPassed) {
  const json r = build(verified_run("cuda:0"));
  EXPECT_EQ(r["status"], "passed");
  EXPECT_EQ(r["code"], "GPU_CHECK_PASSED");
  EXPECT_EQ(r["exit_code"], 0);
  EXPECT_EQ(r["error"], nullptr);
  EXPECT_EQ(r["next_action"], "move to a small input of the application");
  EXPECT_EQ(r["execution"]["device"], "cuda:0");
  EXPECT_EQ(r["execution"]["loss"], 196.0);
}

TEST(ReportBuilder, VerifiedCpuRunIsCpuCheckPassedAndSaysNothingOfTheGpu) {
  std::vector<events::Event> events = verified_run("cpu");
  events.insert(events.begin(), fact("/pytorch/version", "2.11.0"));
  const json r = build(events, exited(0), cpu());
  EXPECT_EQ(r["code"], "CPU_CHECK_PASSED");
  EXPECT_EQ(r["exit_code"], 0);
  EXPECT_EQ(r["next_action"], "conclude nothing about CUDA or ROCm");
  EXPECT_EQ(r["requested"]["device"], "cpu");
  EXPECT_EQ(r["requested"]["device_index"], nullptr);
  EXPECT_TRUE(r["pytorch"].contains("gpu_available"));
  EXPECT_EQ(r["pytorch"]["gpu_available"], nullptr);
  EXPECT_EQ(r["pytorch"]["visible_device_count"], nullptr);
  EXPECT_EQ(r["execution"]["device"], "cpu");
}

TEST(ReportBuilder, PassWithoutTheFullCheckIsSelectedTestsPassed) {
  const json r = build({passed("L1_RuntimeImport", "LibTorchLoads"), end(1, 0)});
  EXPECT_EQ(r["code"], "SELECTED_TESTS_PASSED");
  EXPECT_EQ(r["exit_code"], 0);
  const json product_only =
      build({fact("/execution/product_verified", true), passed("L3_TinyOp", "Product"), end(1, 0)});
  EXPECT_EQ(product_only["code"], "SELECTED_TESTS_PASSED");
}

TEST(ReportBuilder, FactsLandInTheirPlace) {
  const json r = build({fact("/pytorch/version", "2.11.0"), fact("/pytorch/loaded", true),
                        fact("/runtime/arch", "x86_64"), fact("/pytorch/visible_device_count", 8), end(0, 0)});
  EXPECT_EQ(r["pytorch"]["version"], "2.11.0");
  EXPECT_EQ(r["pytorch"]["loaded"], true);
  EXPECT_EQ(r["runtime"]["arch"], "x86_64");
  EXPECT_EQ(r["pytorch"]["visible_device_count"], 8);
}

TEST(ReportBuilder, TimingFactsLandUnderTimingAndTheFloorsAreRequested) {
  EXPECT_TRUE(build({end(0, 0)})["timing"].is_null());  // L6 did not run
  Options o;
  o.min_bandwidth_fraction = 0.7;
  const json r = build({fact("/timing/reference_device", "H200"),
                        fact("/timing/ceilings/copy", {{"measured", 4.3}, {"unit", "TB/s"}}), end(0, 0)},
                       exited(0), o);
  EXPECT_EQ(r["timing"]["reference_device"], "H200");
  EXPECT_EQ(r["timing"]["ceilings"]["copy"]["measured"], 4.3);
  EXPECT_EQ(r["requested"]["min_bandwidth_fraction"], 0.7);
  EXPECT_EQ(r["requested"]["min_matmul_fraction"], 0.5);
}

TEST(ReportBuilder, AnL5OutOfMemoryCarriesThePhaseStageAndThePhasesCause) {
  EXPECT_TRUE(build({end(0, 0)})["memory"].is_null());  // L5 did not run
  const std::string msg = "the first compute ran out of memory: tried to allocate 16.0 MiB; ...";
  const auto f = failed("L5_Memory", "Phases", "OUT_OF_MEMORY", "L5.oom.first_compute", msg);
  Options o;
  o.memory_fraction = 0.0006;
  const json r = build({fact("/memory/device", "cuda:0"),
                        fact("/memory/oom", {{"phase", "first_compute"}, {"requested_bytes", 16u << 20},
                                             {"device_free_bytes", 149000000000u}, {"device_total_bytes", 150110000000u},
                                             {"reserved_bytes", 70u << 20}, {"allocated_bytes", 68u << 20},
                                             {"held_by_others_bytes", 1036000000u}, {"fraction", 0.0006}}),
                        f, end(1, 1, 0, f)},
                       exited(1), o);
  EXPECT_EQ(r["code"], "OUT_OF_MEMORY");
  EXPECT_EQ(r["exit_code"], 9);
  EXPECT_EQ(r["stage"], "L5.oom.first_compute");
  EXPECT_EQ(r["memory"]["oom"]["phase"], "first_compute");
  EXPECT_EQ(r["requested"]["memory_fraction"], 0.0006);
  EXPECT_NE(r["error"]["cause"].get<std::string>().find("activations"), std::string::npos) << r["error"]["cause"];
  EXPECT_NE(r["next_action"].get<std::string>().find("batch size"), std::string::npos);
  EXPECT_EQ(r["error"]["next_action"], r["next_action"]);
}

TEST(ReportBuilder, GrowthIsMemoryCheckFailedWithTheLeaksHint) {
  const std::string msg = "allocated memory grew by 1.5 MiB per iteration over 20 iterations (70.0 MiB to 98.5 MiB), ...";
  const auto f = failed("L5_Memory", "Growth", "MEMORY_CHECK_FAILED", "L5.growth", msg);
  const json r = build({f, end(1, 1, 0, f)}, exited(1));
  EXPECT_EQ(r["code"], "MEMORY_CHECK_FAILED");
  EXPECT_EQ(r["exit_code"], 15);
  EXPECT_EQ(r["error"]["message"], msg);
  EXPECT_NE(r["error"]["cause"].get<std::string>().find("kept alive across iterations"), std::string::npos);
}

TEST(ReportBuilder, FactsOutsideTheAllowedSectionsAreIgnored) {
  const json plain = build({end(0, 0)});
  const json r = build({fact("/secret", "token-123"), fact("/secret/key", "token-123"), fact("/code", "GPU_CHECK_PASSED"),
                        fact("/error", nullptr), fact("/runtimes/x", 1), fact("pytorch/version", "9"), end(0, 0)});
  EXPECT_EQ(r, plain);
  EXPECT_EQ(r.dump().find("token-123"), std::string::npos);
}

// A broken worker may send anything: a fact only fills a field the report has, with a plain value, and a line
// with a field of the wrong type is no event at all. Found by tests/fuzz (the supervisor threw
// nlohmann::json::type_error and died without a report).
TEST(ReportBuilder, EventsOfTheWrongShapeNeitherThrowNorReshapeTheReport) {
  const json plain = build({end(0, 0)});
  const json r = build({fact("/pytorch", 5), fact("/pytorch/loaded", {{"x", 1}}), fact("/pytorch/new_field", "x"),
                        fact("/device", "H200"), fact("/device", {{"name", {1, 2}}}), fact("/runtime", nullptr),
                        events::Unknown{"progress"}, end(0, 0)});
  EXPECT_EQ(r, plain);  // a kind this build does not know changes nothing either
  events::LineCollector lines;
  lines.feed("{\"ev\":\"fact\",\"path\":7,\"value\":1}\n{\"ev\":\"stage\",\"stage\":42}\n"
             "{\"ev\":\"test_end\",\"suite\":3,\"test\":\"X\",\"status\":\"passed\",\"duration_ms\":1}\n"
             "{\"ev\":\"end\",\"ran\":\"two\",\"failed\":null,\"skipped\":0,\"failure\":\"CHECK_FAILED\"}\n");
  RunRecord run;
  run.events = lines.events();
  run.malformed_events = lines.malformed();
  run.worker = exited(0);
  json r2;
  ASSERT_NO_THROW(r2 = build_report(run, kLayers));
  EXPECT_EQ(r2["code"], "WORKER_FAILED");  // its "end" was unreadable: the worker gave no verdict
  EXPECT_TRUE(has_warning_with(r2, "4 unreadable event line(s)")) << r2["warnings"];
}

TEST(ReportBuilder, StringFactsAreRedacted) {
  const json r = build({fact("/pytorch/source", "/opt/conda/lib/python3.11/site-packages/torch/lib/libtorch.so"),
                        fact("/device", {{"name", "NVIDIA H200 at /dev/nvidia0"}, {"index", 0}}), end(0, 0)});
  EXPECT_EQ(r["pytorch"]["source"], "<path>/libtorch.so");
  EXPECT_EQ(r["device"]["name"], "NVIDIA H200 at <path>/nvidia0");
  EXPECT_EQ(r["device"]["index"], 0);
}

TEST(ReportBuilder, RequestedRecordsTheOptionsWithoutTheFileName) {
  Options o;
  o.device_index = 3;
  o.timeout_s = 60;
  o.output = "/home/someone/report.json";
  o.summary_md = "/home/someone/summary.md";
  o.gtest_args = {"--gtest_filter=L3_*"};
  const json r = build({end(0, 0)}, exited(0), o);
  EXPECT_EQ(r["requested"]["device"], "cuda");
  EXPECT_EQ(r["requested"]["device_index"], 3);
  EXPECT_EQ(r["requested"]["timeout_s"], 60);
  EXPECT_EQ(r["requested"]["report_file"], true);
  EXPECT_EQ(r["requested"]["summary_file"], true);
  EXPECT_EQ(r["requested"]["gtest_filter"], "L3_*");
  EXPECT_EQ(r.dump().find("report.json"), std::string::npos);
  EXPECT_EQ(r.dump().find("summary.md"), std::string::npos);
}

TEST(ReportBuilder, FaultInjectionIsRecordedAndWarned) {
  Options o;
  o.fault = "wrong-product";
  const json r = build(failing_product_run(), exited(1), o);
  EXPECT_EQ(r["requested"]["fault_injection"], "wrong-product");
  EXPECT_TRUE(has_warning_with(r, "fault injection 'wrong-product'")) << r["warnings"];
  EXPECT_TRUE(build(failing_product_run(), exited(1))["warnings"].empty());
}

TEST(ReportBuilder, MalformedEventsAreWarned) {
  RunRecord run;
  run.events = verified_run("cuda:0");
  run.worker = exited(0);
  run.malformed_events = 2;
  EXPECT_TRUE(has_warning_with(build_report(run, kLayers), "2 unreadable event line(s)"));
}

TEST(ReportBuilder, SetVerdictRewritesToOutputWriteFailed) {
  json r = build(verified_run("cuda:0"));
  set_verdict(&r, Code::OutputWriteFailed, "report", "'/home/someone/out/report.json' already exists");
  EXPECT_EQ(r["status"], "failed");
  EXPECT_EQ(r["code"], "OUTPUT_WRITE_FAILED");
  EXPECT_EQ(r["exit_code"], 12);
  EXPECT_EQ(r["stage"], "report");
  EXPECT_EQ(r["error"]["code"], "OUTPUT_WRITE_FAILED");
  EXPECT_EQ(r["error"]["message"], "'<path>/report.json' already exists");
  EXPECT_EQ(r["next_action"], "pick a new, writable file name");
}

}  // namespace
}  // namespace kd

namespace kd {
namespace {

TEST(ReportBuilder, MarkersAreFinishedStepsOfThisRunOnly) {
  const json r = build({marker("read_parameters", "", 2), stage("L1.import"), marker("load_library", "L1.import", 300.5),
                        marker("compute", "L4.model_run", 400, "another-run"), end(1, 0)});
  ASSERT_EQ(r["markers"].size(), 2u);
  EXPECT_EQ(r["markers"][0], json({{"name", "read_parameters"}, {"stage", nullptr}, {"t_ms", 2.0}}));
  EXPECT_EQ(r["markers"][1], json({{"name", "load_library"}, {"stage", "L1.import"}, {"t_ms", 300.5}}));
  EXPECT_TRUE(has_warning_with(r, "1 marker(s) without this run's id were ignored"));
}

TEST(ReportBuilder, TimeoutAndCrashNameTheLastFinishedStep) {
  const std::vector<events::Event> ev = {marker("load_weights", "L4.model_load", 5), marker("transfer", "L4.model_run", 9),
                                stage("L4.model_run.compute")};
  const json t = build(ev, timed_out());
  EXPECT_EQ(t["stage"], "L4.model_run.compute");
  EXPECT_NE(t["error"]["message"].get<std::string>().find("last finished step: transfer"), std::string::npos);
  const json c = build(ev, killed(SIGSEGV));
  EXPECT_NE(c["error"]["message"].get<std::string>().find("last finished step: transfer"), std::string::npos);
  const json none = build({stage("L1.import")}, timed_out());
  EXPECT_NE(none["error"]["message"].get<std::string>().find("last finished step: none"), std::string::npos);
}

}  // namespace
}  // namespace kd
