// nvidia-smi's answers -> the report's "host" object. The process side is tested end to end
// with stand-in nvidia-smi scripts (tests/e2e/test_host_check.py).
#include <gtest/gtest.h>

#include "runner/host_check.h"

namespace kd {
namespace {

TEST(HostCheck, TwoGpus) {
  const auto h = host_from_nvidia_smi(true, false, 0, "580.159.04, 143771\n580.159.04, 143771\n", 0.025);
  EXPECT_EQ(h["status"], "ok");
  ASSERT_EQ(h["gpus"].size(), 2u);
  EXPECT_EQ(h["gpus"][1]["driver_version"], "580.159.04");
  EXPECT_EQ(h["gpus"][1]["memory_total_mib"], 143771);
  EXPECT_NE(h["note"].get<std::string>().find("not an equivalent check for ROCm"), std::string::npos);
}

TEST(HostCheck, AbsentTimedOutFailedGarbage) {
  EXPECT_EQ(host_from_nvidia_smi(false, false, 0, "", 0)["status"], "absent");
  EXPECT_EQ(host_from_nvidia_smi(true, true, -1, "", 3)["status"], "timed_out");
  const auto failed = host_from_nvidia_smi(true, false, 9, "NVIDIA-SMI has failed because it couldn't communicate "
                                                           "with the NVIDIA driver.\nsecond line\n", 0.1);
  EXPECT_EQ(failed["status"], "failed");
  EXPECT_EQ(failed["message"], "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.");
  const auto garbage = host_from_nvidia_smi(true, false, 0, "<xml>not csv</xml>\n", 0.1);
  EXPECT_EQ(garbage["status"], "failed");
  EXPECT_TRUE(garbage["gpus"].empty());
  EXPECT_EQ(host_from_nvidia_smi(true, false, 0, "580.1, lots\n", 0.1)["status"], "failed");
  // A number no GPU has: refused as unexpected output, never an exception out of the host check.
  EXPECT_EQ(host_from_nvidia_smi(true, false, 0, "580.1, 99999999999999999999999\n", 0.1)["status"], "failed");
}

TEST(HostCheck, FailureMessagesAreRedacted) {
  const auto h = host_from_nvidia_smi(true, false, 1, "cannot open /home/alice/.nv/state: denied", 0.1);
  EXPECT_EQ(h["message"].get<std::string>().find("/home/alice"), std::string::npos) << h["message"];
}

}  // namespace
}  // namespace kd
