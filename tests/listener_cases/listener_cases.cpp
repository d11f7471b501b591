// Synthetic tests that drive the real VerdictListener through real GoogleTest events.
// tests/e2e/test_listener.py runs this with filters and reads the "EVENT {...}" lines.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include <gtest/gtest.h>

#include "fixtures/listener.h"

TEST(Pass, One) { SUCCEED(); }
TEST(Pass, Two) { SUCCEED(); }
TEST(Skip, Plain) { GTEST_SKIP() << "not supported here"; }
TEST(SkipKind, NotApplicable) { kd::skip_not_applicable("needs 2 GPUs; 1 visible"); }
TEST(SkipKind, Blocked) {
  kd::skip_blocked("L2.gpu_available", "GPU_UNAVAILABLE", "prerequisite L2.gpu_available failed earlier (GPU_UNAVAILABLE)");
}
TEST(Fail, WithCode) { kd::fail_test("CHECK_FAILED", "L3.product", "a @ b = [[3,3],[7,7]]"); }
TEST(Fail, SecondWithCode) { kd::fail_test("OUT_OF_MEMORY", "L3.loss", "second failure"); }
TEST(Fail, WithoutCode) { EXPECT_EQ(1, 2); }
TEST(Fail, Throws) { throw std::runtime_error("boom"); }

class SetupFails : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    RecordProperty("code", "GPU_UNAVAILABLE");
    RecordProperty("stage", "L2.gpu_available");
    ADD_FAILURE() << "no GPU in suite setup";
  }
};
TEST(LaterSkip, Plain) { GTEST_SKIP() << "not supported here either"; }  // registered after the failures

TEST_F(SetupFails, Body) { kd::fail_test("CHECK_FAILED", "L3.product", "after the setup failure"); }

// KD_LISTENER_INJECTED_FAULT: the listener is told of a test-only fault injection, as the worker is of --inject-fault.
int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* fault = std::getenv("KD_LISTENER_INJECTED_FAULT");
  testing::UnitTest::GetInstance()->listeners().Append(new kd::VerdictListener([](const kd::events::Event& ev) {
    std::printf("EVENT %s\n", kd::events::to_json(ev).dump().c_str());
    std::fflush(stdout);
  }, fault ? fault : ""));
  return RUN_ALL_TESTS() == 0 ? 0 : 1;
}
