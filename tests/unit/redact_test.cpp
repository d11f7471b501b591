// What an error message may show of the machine: its first line, file names without
// their folders, and never the user's name, home or host.
#include "reporters/redact.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace kd {
namespace {

const Identity kAlice{"alice", "/home/alice", "gpu-box-17"};

TEST(Redact, KeepsTheFirstLineOnly) {
  EXPECT_EQ(redact("CUDA error: out of memory\nException raised from /build/c10/x.cpp\nframe #0", kAlice),
            "CUDA error: out of memory");
}

TEST(Redact, ReducesAbsolutePathsToTheFileName) {
  EXPECT_EQ(redact("/opt/x/lib/libc10.so: cannot open shared object file", kAlice),
            "<path>/libc10.so: cannot open shared object file");
  EXPECT_EQ(redact("cannot read '/var/lib/kd/data.bin' (errno 13)", kAlice), "cannot read '<path>/data.bin' (errno 13)");
  EXPECT_EQ(redact("LD_LIBRARY_PATH=/usr/local/cuda/lib64 was set", kAlice), "LD_LIBRARY_PATH=<path>/lib64 was set");
  EXPECT_EQ(redact("in folder /srv/models/", kAlice), "in folder <path>");
  EXPECT_EQ(redact("LD_LIBRARY_PATH=/opt/a/lib:/opt/b/lib64:~/lib was set", kAlice),
            "LD_LIBRARY_PATH=<path>/lib:<path>/lib64:<path>/lib was set");  // found by tests/fuzz
}

TEST(Redact, ReducesHomeRelativePaths) {
  EXPECT_EQ(redact("cannot open ~/models/net.pt", kAlice), "cannot open <path>/net.pt");
}

TEST(Redact, LeavesSlashedWordsAndUrlsAlone) {
  for (const char* text : {"capability N/A on this device", "I/O error while reading",
                           "install a driver from http://www.nvidia.com/Download/index.aspx",
                           "a = [[1,2],[3,4]] on cuda:0"})
    EXPECT_EQ(redact(text, kAlice), text);
}

// Issue 37: CUDA error 803's words were shown as "display driver <path> cuda driver combination".
TEST(Redact, ASlashBetweenWordsIsNoPath) {
  const std::string m = "Error 803: system has unsupported display driver / cuda driver combination";
  EXPECT_EQ(redact(m, kAlice), m);
  EXPECT_EQ(redact("a / b and a trailing /", kAlice), "a / b and a trailing /");
  EXPECT_EQ(redact("driver / /opt/x/libcuda.so.1", kAlice), "driver / <path>/libcuda.so.1");
}

// Issue 17: the gaps found by trying bad inputs.
TEST(Redact, RelativePathsAndPathsWithSpacesKeepOnlyTheFileName) {
  EXPECT_EQ(redact("cannot open ../../home/alice/models/net.pt here", kAlice), "cannot open <path>/net.pt here");
  EXPECT_EQ(redact("cannot open ./secret/net.pt", kAlice), "cannot open <path>/net.pt");
  EXPECT_EQ(redact("cannot open /srv/team data/q3 plan/net.pt (errno 2)", kAlice), "cannot open <path>/net.pt (errno 2)");
  EXPECT_EQ(redact("cannot read '/srv/my models/x.pt': no", kAlice), "cannot read '<path>/x.pt': no");
  EXPECT_EQ(redact("in /srv/x and then more", kAlice), "in <path>/x and then more");  // a word without '/' ends it
  EXPECT_EQ(redact("version 2.11.0 ... done", kAlice), "version 2.11.0 ... done");
}

TEST(Redact, NamesFollowedByADashAndShortHostNames) {
  EXPECT_EQ(redact("job alice-7 failed", kAlice), "job <user>-7 failed");
  EXPECT_EQ(redact("on gpu-box-17-ib0 and gpu-box-17", kAlice), "on <host>-ib0 and <host>");
  const Identity short_host{"bob", "/home/bob", "n1"};
  EXPECT_EQ(redact("node n1 lost, n1-ib0 down, n10 fine", short_host), "node <host> lost, <host>-ib0 down, n10 fine");
  EXPECT_EQ(redact("first line only, /a/b\nsecond", kAlice), "first line only, <path>/b");  // the rule stays
}

TEST(Redact, ReplacesTheUserHomeAndHost) {
  const std::string out = redact("alice@gpu-box-17: /home/alice/run/libtorch.so failed; HOME=/home/alice", kAlice);
  EXPECT_EQ(out, "<user>@<host>: <path>/libtorch.so failed; HOME=~");
  EXPECT_EQ(out.find("alice"), std::string::npos);
  EXPECT_EQ(out.find("gpu-box-17"), std::string::npos);
}

// A short user name ("ray" in Ray's images, "dev") is a name, not every word containing it.
TEST(Redact, LeavesWordsThatMerelyContainTheUserName) {
  const Identity ray{"ray", "/home/ray", "gpu-box-17"};
  EXPECT_EQ(redact("expected a float array on ray@gpu-box-17", ray), "expected a float array on <user>@<host>");
}

TEST(Redact, DoesNotTreatRootAsAPersonsName) {
  const Identity root{"root", "/root", "gpu-box-17"};
  EXPECT_EQ(redact("the root cause: /root/work/model.pt is missing", root),
            "the root cause: <path>/model.pt is missing");
}

TEST(Redact, TruncatesLongText) {
  const std::string out = redact(std::string(1000, 'x'), kAlice);
  EXPECT_LE(out.size(), 403u);
  EXPECT_EQ(out.substr(out.size() - 3), "...");
  EXPECT_EQ(out.substr(0, 10), "xxxxxxxxxx");
  EXPECT_EQ(redact(std::string(400, 'y'), kAlice), std::string(400, 'y'));
}

TEST(Redact, TruncationDoesNotCutAWordIntoTheUserName) {  // found by tests/fuzz's properties
  const std::string out = redact(std::string(395, ' ') + "alice_laptop is the host", kAlice);
  EXPECT_EQ(out, std::string(395, ' ') + "...");
}

// A long message with non-ASCII text (a user's folder name, a localised error) must stay
// valid UTF-8 after truncation: the report is JSON, and JSON refuses broken UTF-8.
TEST(Redact, TruncationKeepsValidUtf8) {
  std::string text = "x";
  for (int i = 0; i < 300; ++i) text += "\xC3\xA9";  // "é"
  const std::string out = redact(text, kAlice);
  EXPECT_NO_THROW((void)nlohmann::json(out).dump()) << "truncated inside a multi-byte character";
}

TEST(Redact, DefaultIdentityIsThisMachine) {
  const Identity me = Identity::of_this_machine();
  ASSERT_FALSE(me.home.empty());
  const std::string out = redact(me.home + "/weights/model.pt not found");
  EXPECT_EQ(out, "<path>/model.pt not found");
  if (me.host.size() >= 3) {
    EXPECT_EQ(redact("running on " + me.host), "running on <host>");
  }
}

TEST(Redact, TruncationDoesNotLeaveAUrlLookingLikeAPath) {  // found by fuzz_report
  const std::string text = std::string(393, 'x') + " http://www.nvidia.com/Download";  // cut after "http:/"
  const std::string out = redact(text, Identity{});
  EXPECT_EQ(out.find(":/"), std::string::npos) << out;
  EXPECT_EQ(out.substr(out.size() - 3), "...");
}

TEST(Redact, TruncationDoesNotLeaveALoneSlashLookingLikeAPath) {  // found by fuzz_report in CI
  // "driver / cuda" cut right after its lone slash: " /..." would read as a path.
  const std::string out = redact(std::string(398, 'x') + " / cuda driver combination", Identity{});
  EXPECT_EQ(out, std::string(398, 'x') + " ...");
}

}  // namespace
}  // namespace kd
