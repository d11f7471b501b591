// The verdict's decision chain (verdict/decision.h), one branch at a time: which code and stage a
// run gets from the worker's events and how the worker ended, and what happened after a first failure.
#include "verdict/decision.h"

#include <csignal>

#include <gtest/gtest.h>

#include "reporters/worker_events.h"
#include "worker_ends.h"
#include "worker_event_builders.h"

namespace kd {
namespace {

using namespace kd::test;
using events::TestStatus;

events::TestStart test_start(const std::string& test) { return test::test_start("L3_TinyOp", test); }
events::TestEnd test_end(const std::string& test, TestStatus status) { return test::test_end("L3_TinyOp", test, status); }
events::TestEnd failed(const std::string& code, const std::string& st, const std::string& message) {
  return test::failed("L1_RuntimeImport", "X", code, st, message);
}
// A failure inside "end" that names only some of code, stage and message (a listener's never lacks one).
events::TestEnd failure_naming(std::optional<std::string> code, std::optional<std::string> st) {
  events::TestEnd t = test::test_end("L3_TinyOp", "X", TestStatus::failed);
  t.code = std::move(code);
  t.stage = std::move(st);
  return t;
}

struct Run {
  std::vector<events::Event> events;
  WorkerEnd worker = exited(0);
  bool verified = false, cpu = false;
  std::string last_finished = "none";
};
Decision decide_on(const Run& r) {
  DecisionInput in;
  in.events = read_worker_events(r.events);
  in.worker = r.worker;
  in.last_finished_step = r.last_finished;
  in.timeout_s = 30;
  in.cpu_mode = r.cpu;
  in.verified = r.verified;
  return decide(in);
}

// 1. The first failing test decides, whatever happens after it. Its code is lower (3) and higher (14) than the
// later event's (10, 11), so neither "last wins" nor "lowest code wins" passes these.
TEST(Decision, TheFirstFailureDecidesAndALaterCrashIsWhatHappenedNext) {
  const auto f = failed("TORCH_MISSING", "L1.python", "python: no module named torch");
  const Decision d = decide_on({{stage("L1.python"), f, stage("L3.inputs"), failed("CHECK_FAILED", "L3.product", "later")},
                                killed(SIGABRT)});
  EXPECT_EQ(d.code, Code::TorchMissing);
  EXPECT_EQ(d.stage, "L1.python");
  EXPECT_EQ(d.message, "python: no module named torch");
  EXPECT_TRUE(d.worker_message);  // a test's own text: the hints read it
  ASSERT_TRUE(d.after_failure);
  EXPECT_EQ(d.after_failure->event, "worker_failed");
  EXPECT_EQ(d.after_failure->code, Code::WorkerFailed);
  EXPECT_EQ(d.after_failure->stage, "L3.inputs");
  EXPECT_EQ(d.after_failure->message, "the worker was killed by signal 6 (SIGABRT)");
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "after the first failure, the worker was killed by signal 6 (SIGABRT) in stage L3.inputs");
}

TEST(Decision, AfterTheFirstFailureATimeoutOrAnInterruptionIsNamedAsSuch) {
  const auto f = failed("APP_CHECK_FAILED", "L4.contract", "output 0 has NaN");
  const Decision t = decide_on({{stage("L4.contract"), f, stage("L4.stop_resume")}, timed_out()});
  EXPECT_EQ(t.code, Code::AppCheckFailed);
  EXPECT_EQ(t.stage, "L4.contract");
  ASSERT_TRUE(t.after_failure);
  EXPECT_EQ(t.after_failure->event, "timeout");
  EXPECT_EQ(t.after_failure->code, Code::Timeout);
  EXPECT_EQ(t.after_failure->message, "the run reached its 30 s limit");
  const Decision i = decide_on({{f}, interrupted()});
  EXPECT_EQ(i.code, Code::AppCheckFailed);
  ASSERT_TRUE(i.after_failure);
  EXPECT_EQ(i.after_failure->event, "interrupted");
  EXPECT_EQ(i.after_failure->code, Code::WorkerFailed);
  EXPECT_EQ(i.after_failure->stage, "");  // no stage was announced
  EXPECT_EQ(i.warnings, std::vector<std::string>{"after the first failure, the run was interrupted and the worker stopped"});
}

TEST(Decision, ASetupFailureCountsAsAFailureAndAnUnknownCodeIsARuntimeError) {
  const events::SetupFailure setup{"L2_BackendDevice", "GPU_UNAVAILABLE", "L2.setup", "no GPU"};
  EXPECT_EQ(decide_on({{setup}, exited(1)}).code, Code::GpuUnavailable);
  EXPECT_EQ(decide_on({{failed("SOMETHING_NEW", "L3.product", "boom")}, exited(1)}).code, Code::RuntimeError);
  // A failed test without a code is not the listener's verdict: the worker ended without one.
  const auto no_code = failed("", "L3.product", "boom");
  EXPECT_EQ(decide_on({{no_code}, exited(1)}).code, Code::WorkerFailed);
}

// 2. No failure and no verdict within the limit.
TEST(Decision, ATimeoutNamesTheStageAndTheLastFinishedStep) {
  const Decision d = decide_on({{stage("L1.import"), stage("L3.synchronize")}, timed_out(), false, false, "transfer"});
  EXPECT_EQ(d.code, Code::Timeout);
  EXPECT_EQ(d.stage, "L3.synchronize");
  EXPECT_EQ(d.message, "no verdict within 30 s; the worker was stopped while in stage L3.synchronize; last finished step: transfer");
  EXPECT_FALSE(d.worker_message);
  EXPECT_FALSE(d.after_failure);
  EXPECT_EQ(decide_on({{}, timed_out()}).message,
            "no verdict within 30 s; the worker was stopped while in stage (start); last finished step: none");
  // The limit decides even in L4.model_load: the supervisor stopped the worker, the model did not crash it.
  EXPECT_EQ(decide_on({{stage("L4.model_load")}, timed_out()}).code, Code::Timeout);
}

// 3. The model's loader crashed the worker (a .pt2 with a truncated library dies by SIGBUS).
TEST(Decision, AWorkerThatDiesLoadingTheModelIsModelLoadFailed) {
  const Decision d = decide_on({{stage("L3.product"), stage("L4.model_load.aoti")}, killed(SIGBUS)});
  EXPECT_EQ(d.code, Code::ModelLoadFailed);
  EXPECT_EQ(d.stage, "L4.model_load.aoti");
  EXPECT_EQ(d.message, "loading the model crashed the worker: the worker was killed by signal 7 (SIGBUS) "
                       "(a truncated or corrupt model file?)");
  ASSERT_TRUE(d.after_failure);
  EXPECT_EQ(d.after_failure->event, "worker_failed");
  EXPECT_EQ(d.after_failure->code, Code::WorkerFailed);
  EXPECT_EQ(d.after_failure->stage, "L4.model_load.aoti");
  EXPECT_EQ(d.after_failure->message, "the worker was killed by signal 7 (SIGBUS)");
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_EQ(decide_on({{stage("L4.model_load")}, exited(3)}).after_failure->message, "the worker exited with status 3");
  // Elsewhere, or stopped by the supervisor, it stays what it was.
  EXPECT_EQ(decide_on({{stage("L4.model_run")}, killed(SIGBUS)}).code, Code::WorkerFailed);
  EXPECT_EQ(decide_on({{stage("L4.model_load")}, interrupted()}).code, Code::WorkerFailed);
  EXPECT_EQ(decide_on({{stage("L4.model_load")}, flooded()}).code, Code::WorkerFailed);
}

// 4. The worker ended without a verdict.
TEST(Decision, AWorkerThatEndsWithoutAVerdictIsWorkerFailedAndSaysHow) {
  const Decision k = decide_on({{stage("L2.gpu_available")}, killed(SIGKILL), false, false, "load_library"});
  EXPECT_EQ(k.code, Code::WorkerFailed);
  EXPECT_EQ(k.stage, "L2.gpu_available");
  EXPECT_EQ(k.message, "the worker was killed by signal 9 (SIGKILL) in stage L2.gpu_available; last finished step: load_library");
  EXPECT_FALSE(k.after_failure);
  const Decision e = decide_on({{}, exited(1)});
  EXPECT_EQ(e.stage, "");
  EXPECT_EQ(e.message, "the worker exited with status 1 without a verdict; last finished step: none");
  EXPECT_EQ(decide_on({{stage("L1.import")}, interrupted()}).message,
            "the run was interrupted and the worker stopped in stage L1.import; last finished step: none");
  EXPECT_EQ(decide_on({{}, flooded()}).message,
            "the worker sent more than 16 MiB of events and was stopped; last finished step: none");
  EXPECT_EQ(decide_on({{}, WorkerEnd{}}).message, "the worker produced no verdict; last finished step: none");
}

// 5. and 6. A verdict that checked nothing is a usage error.
TEST(Decision, NoTestRunOrEverySelectedTestSkippedIsAUsageError) {
  const Decision none = decide_on({{end(0, 0)}});
  EXPECT_EQ(none.code, Code::UsageError);
  EXPECT_EQ(none.stage, "");
  EXPECT_EQ(none.message, "the test filter matched no test (see --gtest_list_tests)");
  const Decision skipped = decide_on({{stage("L3.synchronize"), end(2, 0, 2)}, exited(0), true});
  EXPECT_EQ(skipped.code, Code::UsageError);
  EXPECT_EQ(skipped.message, "every selected test was skipped: nothing was checked");
  // An end whose counts are unreadable is no end at all: event_channel_test.cpp (a malformed line).
}

// 7. The listener's verdict in the end event.
TEST(Decision, TheEndsFailureGivesItsCodeAndStageOrTheLastStage) {
  const auto f = failed("CHECK_FAILED", "L3.product", "p = [[3,1],[7,2]]");
  const Decision d = decide_on({{stage("L3.product"), end(5, 1, 0, f)}, exited(1)});
  EXPECT_EQ(d.code, Code::CheckFailed);
  EXPECT_EQ(d.stage, "L3.product");
  EXPECT_EQ(d.message, "p = [[3,1],[7,2]]");
  EXPECT_TRUE(d.worker_message);
  EXPECT_FALSE(d.after_failure);  // the worker gave its verdict: nothing happened after
  const Decision unnamed = decide_on({{stage("L2.gpu_available"), end(1, 1, 0, failure_naming("GPU_UNAVAILABLE", std::nullopt))}, exited(1)});
  EXPECT_EQ(unnamed.code, Code::GpuUnavailable);
  EXPECT_EQ(unnamed.stage, "L2.gpu_available");
  EXPECT_EQ(decide_on({{end(1, 1, 0, failure_naming(std::nullopt, "L3.product"))}, exited(1)}).code, Code::RuntimeError);
}

// 8. A pass: which one depends on what was verified and where.
TEST(Decision, APassIsTheOneTheRunEarned) {
  const std::vector<events::Event> run = {stage("L3.product"), test_end("Product", TestStatus::passed),
                                         stage("L3.gradients"), test_end("Gradients", TestStatus::passed), end(2, 0)};
  EXPECT_EQ(decide_on({run, exited(0), true}).code, Code::GpuCheckPassed);
  EXPECT_EQ(decide_on({run, exited(0), true, true}).code, Code::CpuCheckPassed);
  const Decision selected = decide_on({run, exited(0), false});
  EXPECT_EQ(selected.code, Code::SelectedTestsPassed);
  EXPECT_EQ(selected.stage, "L3.gradients");
  EXPECT_EQ(selected.message, "");
  EXPECT_FALSE(selected.after_failure);
  EXPECT_TRUE(selected.warnings.empty());
}

TEST(Decision, APassNamesTheLastStepThatPassedNotASkippedOne) {
  const std::vector<events::Event> run = {test_start("Product"), stage("L3.product"), test_end("Product", TestStatus::passed),
                                         test_start("Synchronize"), stage("L3.synchronize"),
                                         test_end("Synchronize", TestStatus::skipped), end(2, 0, 1)};
  const Decision d = decide_on({run, exited(0), true, true});
  EXPECT_EQ(d.code, Code::CpuCheckPassed);
  EXPECT_EQ(d.stage, "L3.product");
  // No test passed inside a stage of its own: the last stage announced.
  EXPECT_EQ(decide_on({{stage("L1.import"), end(1, 0)}}).stage, "L1.import");
}

TEST(Decision, ASignalAfterTheVerdictKeepsTheVerdictAndWarns) {
  const Decision d = decide_on({{end(2, 0)}, killed(SIGSEGV), true});
  EXPECT_EQ(d.code, Code::GpuCheckPassed);
  EXPECT_EQ(d.warnings, std::vector<std::string>{"the worker was killed by signal 11 (SIGSEGV) after its verdict"});
}

// A failure in "end" that names a code of no known kind and an empty stage: a runtime error at no stage (the
// empty stage is named, so it is not replaced by the last one announced). A wrong-typed field never gets here.
TEST(Decision, AnEndFailureWithAnUnknownCodeAndAnEmptyStage) {
  const WorkerEvents e = read_worker_events({stage("L3.product"), end(1, 1, 0, failure_naming("3", ""))});
  ASSERT_TRUE(e.end);
  EXPECT_EQ(e.end->ran, 1);
  ASSERT_TRUE(e.end->failure);
  EXPECT_EQ(e.end->failure->code, Code::RuntimeError);
  EXPECT_EQ(e.end->failure->stage, "");
  EXPECT_FALSE(e.first_failure) << "the end's failure is not a test_end of its own";
}

}  // namespace
}  // namespace kd
