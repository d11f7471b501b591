// Worker -> supervisor events: a byte stream cut anywhere still gives whole events, and
// a damaged line is counted (the report warns about it) rather than fatal.
#include "contract/events.h"

#include <unistd.h>

#include <gtest/gtest.h>

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
  EXPECT_EQ(c.events()[0], (nlohmann::json{{"ev", "stage"}, {"stage", "L3.product"}}));
  EXPECT_EQ(c.events()[1]["value"], "2.11.0");
  EXPECT_EQ(c.malformed(), 0);
}

TEST(LineCollector, CountsMalformedLinesAndKeepsTheRest) {
  LineCollector c;
  c.feed("not json\n[1,2]\n{\"no_ev\":1}\n\n{\"ev\":\"end\",\"ran\":5}\n{\"ev\":\"fact\",\n{\"ev\":5}\n");
  EXPECT_EQ(c.malformed(), 5);  // an "ev" that is no string too (found by tests/fuzz)
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.events()[0]["ran"], 5);
}

TEST(LineCollector, FinishTakesTheLastLineWithoutNewline) {
  LineCollector c;
  c.feed(R"({"ev":"end","ran":1})");
  EXPECT_TRUE(c.events().empty());
  c.finish();
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.events()[0]["ev"], "end");
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
  EXPECT_EQ(collector.events()[0], (nlohmann::json{{"ev", "stage"}, {"stage", "L2.backend"}}));
  EXPECT_EQ(collector.events()[1],
            (nlohmann::json{{"ev", "fact"}, {"path", "/pytorch/version"}, {"value", "2.11.0"}}));
}

TEST_F(EmitToCollector, BrokenUtf8InAMessageStillGivesOneEvent) {
  emit({{"ev", "test_end"}, {"message", std::string("bad \xC3 byte\nsecond line")}});
  EXPECT_EQ(collector.events().size(), 1u);
  EXPECT_EQ(collector.malformed(), 0);
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
  c.feed(std::string(100, 'x') + "\n{\"ev\":\"start\"}\n");
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.events()[0]["ev"], "start");
  EXPECT_EQ(c.malformed(), 1);
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
