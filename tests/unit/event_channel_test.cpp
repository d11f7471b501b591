// Worker -> supervisor events: a byte stream cut anywhere still gives whole events, a damaged line (no JSON,
// or no event of its kind) is counted (the report warns about it) rather than fatal, and every kind crosses
// the pipe as it was sent.
#include "contract/events.h"

#include <unistd.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "worker_event_builders.h"

namespace kd::events {
namespace {

TEST(LineCollector, JoinsLinesSplitAcrossFeeds) {
  LineCollector c;
  c.feed(R"({"ev":"sta)");
  EXPECT_TRUE(c.events().empty());
  c.feed("ge\",\"stage\":\"L3.product\"}\n{\"ev\":\"fact\",\"path\":\"/pytorch/vers");
  ASSERT_EQ(c.events().size(), 1u);
  c.feed("ion\",\"value\":\"2.11.0\"}\n");
  ASSERT_EQ(c.events().size(), 2u);
  EXPECT_EQ(std::get<Stage>(c.events()[0]).stage, "L3.product");
  EXPECT_EQ(std::get<Fact>(c.events()[1]).path, "/pytorch/version");
  EXPECT_EQ(std::get<Fact>(c.events()[1]).value, "2.11.0");
  EXPECT_EQ(c.malformed(), 0);
}

TEST(LineCollector, CountsMalformedLinesAndKeepsTheRest) {
  LineCollector c;
  c.feed("not json\n[1,2]\n{\"no_ev\":1}\n\n{\"ev\":\"end\",\"ran\":5,\"failed\":0,\"skipped\":0,\"failure\":null}\n"
         "{\"ev\":\"fact\",\n{\"ev\":5}\n");
  EXPECT_EQ(c.malformed(), 5);  // an "ev" that is no string too (found by tests/fuzz)
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(std::get<End>(c.events()[0]).ran, 5);
}

TEST(LineCollector, FinishTakesTheLastLineWithoutNewline) {
  LineCollector c;
  c.feed(R"({"ev":"end","ran":1,"failed":0,"skipped":0,"failure":null})");
  EXPECT_TRUE(c.events().empty());
  c.finish();
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_TRUE(std::holds_alternative<End>(c.events()[0]));
  c.finish();
  EXPECT_EQ(c.events().size(), 1u) << "a second finish() must not take the line again";
}

TEST(LineCollector, LineCutByADyingWorkerIsCountedAtFinish) {
  LineCollector c;
  c.feed("{\"ev\":\"stage\",\"stage\":\"L1.import\"}\n{\"ev\":\"fact\",\"pa");
  c.finish();
  EXPECT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.malformed(), 1);
}

class EmitToCollector : public testing::Test {
 protected:
  void SetUp() override {
    set_sink([this](const std::string& line) { collector.feed(line); });
  }
  void TearDown() override { set_sink(nullptr); }
  LineCollector collector;
};

TEST_F(EmitToCollector, StageAndFactArriveAsEvents) {
  stage("L2.backend");
  fact("/pytorch/version", "2.11.0");
  ASSERT_EQ(collector.events().size(), 2u);
  EXPECT_EQ(std::get<Stage>(collector.events()[0]).stage, "L2.backend");
  EXPECT_EQ(std::get<Fact>(collector.events()[1]).path, "/pytorch/version");
  EXPECT_EQ(std::get<Fact>(collector.events()[1]).value, "2.11.0");
}

TEST_F(EmitToCollector, BrokenUtf8InAMessageStillGivesOneEvent) {
  emit(test::failed("L3_TinyOp", "Product", "CHECK_FAILED", "L3.product", "bad \xC3 byte\nsecond line"));
  ASSERT_EQ(collector.events().size(), 1u);
  EXPECT_EQ(collector.malformed(), 0);
  EXPECT_EQ(std::get<TestEnd>(collector.events()[0]).message, "bad \xEF\xBF\xBD byte\nsecond line");  // U+FFFD
}

// A worker that prints without end (--gtest_repeat=-1 once did) cannot make the supervisor hold gigabytes.
TEST(LineCollector, StopsTakingPastItsBoundAndSaysSo) {
  LineCollector c;
  const std::string line = "{\"ev\":\"stage\",\"stage\":\"L3.product\"}\n";
  size_t fed = 0;
  while (!c.overflowed() && fed < 2 * kMaxEventBytes) {
    c.feed(line);
    fed += line.size();
  }
  EXPECT_TRUE(c.overflowed());
  EXPECT_LE(c.events().size() * line.size(), kMaxEventBytes + line.size());
}

TEST(LineCollector, AnOverlongLineIsDroppedAndTheNextOneIsRead) {
  LineCollector c;
  c.feed(std::string(kMaxEventLine + 10, 'x'));
  c.feed(std::string(100, 'x') + "\n{\"ev\":\"start\",\"tests_to_run\":3}\n");
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(std::get<Start>(c.events()[0]).tests_to_run, 3);
  EXPECT_EQ(c.malformed(), 1);
}

// Each kind, every field set (the optional ones too), arrives as it was emitted.
class RoundTrip : public EmitToCollector {
 protected:
  template <class T>
  T sent(const T& event) {
    collector = LineCollector();  // this event's line alone
    emit(event);
    EXPECT_EQ(collector.malformed(), 0);
    EXPECT_EQ(collector.events().size(), 1u);
    const T* back = collector.events().empty() ? nullptr : std::get_if<T>(&collector.events().back());
    EXPECT_NE(back, nullptr) << "another kind came back";
    return back ? *back : T{};
  }
};

TEST_F(RoundTrip, StartStageFactWarningAndTestStart) {
  EXPECT_EQ(sent(Start{12}).tests_to_run, 12);
  EXPECT_EQ(sent(Stage{"L3.product"}).stage, "L3.product");
  const Fact f = sent(Fact{"/memory/oom", {{"phase", "first_compute"}, {"requested_bytes", 1u << 30}}});
  EXPECT_EQ(f.path, "/memory/oom");
  EXPECT_EQ(f.value, (nlohmann::json{{"phase", "first_compute"}, {"requested_bytes", 1u << 30}}));
  EXPECT_EQ(sent(Fact{"/device", nullptr}).value, nullptr) << "a null value is a value";
  EXPECT_EQ(sent(Warning{"GPU 0 (NVML): throttled"}).text, "GPU 0 (NVML): throttled");
  const TestStart t = sent(TestStart{"L3_TinyOp", "Product"});
  EXPECT_EQ(t.suite, "L3_TinyOp");
  EXPECT_EQ(t.test, "Product");
}

TEST_F(RoundTrip, Marker) {
  const Marker m = sent(Marker{"run-7", "load_weights", "L4.model_load", 12345.678});
  EXPECT_EQ(m.run_id, "run-7");
  EXPECT_EQ(m.name, "load_weights");
  EXPECT_EQ(m.stage, "L4.model_load");
  EXPECT_DOUBLE_EQ(m.t_mono_ms, 12345.678);
}

TEST_F(RoundTrip, TestEndWithEveryFieldAndWithNone) {
  const TestEnd full = sent(TestEnd{"L3_TinyOp", "Gradients", 7, TestStatus::skipped, "CHECK_FAILED", "L3.gradients",
                                    "prerequisite failed", "blocked", BlockedBy{"L2.gpu_available", "GPU_UNAVAILABLE"}});
  EXPECT_EQ(full.suite, "L3_TinyOp");
  EXPECT_EQ(full.test, "Gradients");
  EXPECT_EQ(full.duration_ms, 7);
  EXPECT_EQ(full.status, TestStatus::skipped);
  EXPECT_EQ(full.code, "CHECK_FAILED");
  EXPECT_EQ(full.stage, "L3.gradients");
  EXPECT_EQ(full.message, "prerequisite failed");
  EXPECT_EQ(full.skip_kind, "blocked");
  ASSERT_TRUE(full.blocked_by);
  EXPECT_EQ(full.blocked_by->stage, "L2.gpu_available");
  EXPECT_EQ(full.blocked_by->code, "GPU_UNAVAILABLE");
  const TestEnd bare = sent(test::test_end("L1_RuntimeImport", "LibTorchLoads", TestStatus::passed, 0));
  EXPECT_EQ(bare.status, TestStatus::passed);
  EXPECT_FALSE(bare.code || bare.stage || bare.message || bare.skip_kind || bare.blocked_by) << "absent stays absent";
}

TEST_F(RoundTrip, SetupFailure) {
  const SetupFailure s = sent(SetupFailure{"L2_BackendDevice", "GPU_UNAVAILABLE", "L2.setup", "no GPU"});
  EXPECT_EQ(s.suite, "L2_BackendDevice");
  EXPECT_EQ(s.code, "GPU_UNAVAILABLE");
  EXPECT_EQ(s.stage, "L2.setup");
  EXPECT_EQ(s.message, "no GPU");
}

TEST_F(RoundTrip, EndWithEitherFailureOrNone) {
  const End none = sent(End{3, 0, 1, std::nullopt});
  EXPECT_EQ(none.ran, 3);
  EXPECT_EQ(none.failed, 0);
  EXPECT_EQ(none.skipped, 1);
  EXPECT_FALSE(none.failure);
  const End setup = sent(End{2, 1, 1, Failure(SetupFailure{"SetupFails", "GPU_UNAVAILABLE", "L2.gpu_available", "no GPU"})});
  ASSERT_TRUE(setup.failure);
  ASSERT_TRUE(std::holds_alternative<SetupFailure>(*setup.failure));
  EXPECT_EQ(std::get<SetupFailure>(*setup.failure).stage, "L2.gpu_available");
  const End test = sent(End{1, 1, 0, test::failed("L3_TinyOp", "Product", "CHECK_FAILED", "L3.product", "p = [[3,1],[7,2]]")});
  ASSERT_TRUE(test.failure);
  const TestEnd& f = std::get<TestEnd>(*test.failure);
  EXPECT_EQ(f.test, "Product");
  EXPECT_EQ(f.code, "CHECK_FAILED");
  EXPECT_EQ(f.message, "p = [[3,1],[7,2]]");
}

TEST_F(RoundTrip, Exit) {
  EXPECT_EQ(sent(Exit{0}).status, 0);
  EXPECT_EQ(sent(Exit{1}).status, 1);
  LineCollector c;  // its wire form, and a status that is no whole number is no event
  c.feed("{\"ev\":\"exit\",\"status\":0}\n{\"ev\":\"exit\"}\n{\"ev\":\"exit\",\"status\":\"0\"}\n");
  EXPECT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.malformed(), 2);
  EXPECT_EQ(to_json(Exit{3}).dump(), R"({"ev":"exit","status":3})");
}

// Lines exactly as the listener and the steps wrote them before the events were typed (the listener's from
// tests/listener_cases; nlohmann writes keys sorted): each is still its event, and written back byte for byte.
TEST(WireLines, TheOldLinesReadAsTheirEventsAndWriteBackTheSame) {
  const std::string failed_product =
      R"({"code":"CHECK_FAILED","duration_ms":0,"ev":"test_end","message":"a @ b = [[3,3],[7,7]]","stage":"L3.product","status":"failed","suite":"Fail","test":"WithCode"})";
  const std::vector<std::string> lines = {
      R"({"ev":"start","tests_to_run":6})",
      R"({"ev":"test_start","suite":"Pass","test":"One"})",
      R"({"duration_ms":0,"ev":"test_end","status":"passed","suite":"Pass","test":"One"})",
      R"({"duration_ms":0,"ev":"test_end","message":"needs 2 GPUs; 1 visible","skip_kind":"not_applicable","status":"skipped","suite":"SkipKind","test":"NotApplicable"})",
      R"({"blocked_by":{"code":"CHECK_FAILED","stage":"L3.product"},"duration_ms":0,"ev":"test_end","message":"","skip_kind":"blocked","status":"skipped","suite":"SetupFails","test":"Body"})",
      failed_product,
      R"({"code":"GPU_UNAVAILABLE","ev":"setup_failure","message":"no GPU in suite setup","stage":"L2.gpu_available","status":"failed","suite":"SetupFails"})",
      R"({"ev":"end","failed":2,"failure":)" + failed_product + R"(,"ran":6,"skipped":4})",
      R"({"ev":"end","failed":0,"failure":null,"ran":1,"skipped":0})",
      R"({"ev":"stage","stage":"L1.import"})",
      R"({"ev":"fact","path":"/pytorch/version","value":"2.11.0"})",
      R"({"ev":"marker","name":"load_library","run_id":"run-1","stage":"L1.import","t_mono_ms":1234.5})",
      R"({"ev":"warning","text":"GPU 0 (NVML): clocks throttled"})"};
  LineCollector c;
  for (const auto& l : lines) c.feed(l + "\n");
  ASSERT_EQ(c.malformed(), 0);
  ASSERT_EQ(c.events().size(), lines.size());
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(to_json(c.events()[i]).dump(), lines[i]);
  const auto& ev = c.events();
  EXPECT_EQ(std::get<Start>(ev[0]).tests_to_run, 6);
  EXPECT_EQ(std::get<TestStart>(ev[1]).test, "One");
  EXPECT_EQ(std::get<TestEnd>(ev[2]).status, TestStatus::passed);
  EXPECT_EQ(std::get<TestEnd>(ev[3]).skip_kind, "not_applicable");
  EXPECT_EQ(std::get<TestEnd>(ev[4]).blocked_by->code, "CHECK_FAILED");
  EXPECT_EQ(std::get<TestEnd>(ev[5]).stage, "L3.product");
  EXPECT_EQ(std::get<SetupFailure>(ev[6]).suite, "SetupFails");
  const End& end = std::get<End>(ev[7]);
  EXPECT_EQ(end.ran, 6);
  EXPECT_EQ(std::get<TestEnd>(*end.failure).message, "a @ b = [[3,3],[7,7]]");
  EXPECT_FALSE(std::get<End>(ev[8]).failure);
  EXPECT_EQ(std::get<Stage>(ev[9]).stage, "L1.import");
  EXPECT_EQ(std::get<Fact>(ev[10]).value, "2.11.0");
  EXPECT_EQ(std::get<Marker>(ev[11]).name, "load_library");
  EXPECT_EQ(std::get<Warning>(ev[12]).text, "GPU 0 (NVML): clocks throttled");
}

// A known kind with a required field absent or of another type, or an optional one of another type, is no event.
TEST(WireLines, AFieldAbsentOrOfAnotherTypeIsAMalformedLine) {
  const std::string failure = R"("failure":{"ev":"test_end","suite":"S","test":"T","duration_ms":0,"status":"failed"})";
  const std::vector<std::string> lines = {
           R"({"ev":"start"})",
           R"({"ev":"start","tests_to_run":"3"})",
           R"({"ev":"stage","stage":42})",
           R"({"ev":"stage","stage":null})",
           R"({"ev":"fact","path":7,"value":1})",
           R"({"ev":"fact","path":"/pytorch/version"})",
           R"({"ev":"marker","name":"compute","stage":"L4.model_run","t_mono_ms":5})",
           R"({"ev":"marker","run_id":"r","name":"compute","stage":"L4.model_run","t_mono_ms":"5"})",
           R"({"ev":"warning","text":["x"]})",
           R"({"ev":"test_start","suite":"L3_TinyOp"})",
           R"({"ev":"test_end","suite":3,"test":"X","duration_ms":1,"status":"passed"})",
           R"({"ev":"test_end","suite":"S","test":"X","status":"passed"})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":1.5,"status":"passed"})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":1,"status":"maybe"})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":1,"status":"failed","code":14})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":0,"status":"skipped","skip_kind":3})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":0,"status":"skipped","blocked_by":"L2"})",
           R"({"ev":"test_end","suite":"S","test":"X","duration_ms":0,"status":"skipped","blocked_by":{"stage":"L2.x"}})",
           R"({"ev":"setup_failure","suite":"S","status":"passed","code":"GPU_UNAVAILABLE","stage":"L2.x","message":""})",
           R"({"ev":"setup_failure","suite":"S","status":"failed","code":"GPU_UNAVAILABLE","stage":"L2.x"})",
           R"({"ev":"end","ran":"two","failed":null,"skipped":0})",
           R"({"ev":"end","ran":1,"failed":0,"skipped":0,"failure":"CHECK_FAILED"})",
           R"({"ev":"end","ran":1,"failed":0,"skipped":0,"failure":{"code":3,"stage":null}})",
           R"({"ev":"end","ran":1,"failed":0,"skipped":0,"failure":{"ev":"end","ran":1,"failed":0,"skipped":0}})",
           R"({"ev":"end","ran":1,"failed":1,"skipped":0,)" + failure.substr(0, failure.size() - 1) + R"(,"code":7}})"};
  for (const auto& line : lines) {
    LineCollector c;
    c.feed(line + "\n");
    EXPECT_EQ(c.malformed(), 1) << line;
    EXPECT_TRUE(c.events().empty()) << line;
  }
  LineCollector c;  // the same end with a well-formed failure, to show that the lines above fail for their field
  c.feed(R"({"ev":"end","ran":1,"failed":1,"skipped":0,)" + failure + "}\n");
  EXPECT_EQ(c.malformed(), 0);
}

// A kind this build does not know is kept as such, as every line with a string "ev" always was: readers pass it by.
TEST(WireLines, AnUnknownKindIsKeptAsUnknown) {
  LineCollector c;
  c.feed("{\"ev\":\"progress\",\"percent\":40}\n");
  EXPECT_EQ(c.malformed(), 0);
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(std::get<Unknown>(c.events()[0]).ev, "progress");
}

TEST(FdSink, WritesWholeLinesToTheDescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  fd_sink(fds[1])("{\"ev\":\"start\"}\n");
  ::close(fds[1]);
  char buf[64] = {};
  const ssize_t n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "{\"ev\":\"start\"}\n");
}

}  // namespace
}  // namespace kd::events
