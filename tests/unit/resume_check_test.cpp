// The stop/resume check on hand-made output files: each rule fires on exactly its fault.
#include "verdict/resume_check.h"

#include <gtest/gtest.h>

namespace kd::resume {
namespace {

std::string records(int64_t from, int64_t to) {  // ids [from, to), batch by id
  std::string s;
  for (int64_t id = from; id < to; ++id) s += record_line(id, static_cast<int>(id / kBatchSize), 0.5 + id);
  return s;
}

Checkpoint covering(const std::string& file, int64_t n) { return {static_cast<int>(n / kBatchSize), n, static_cast<int64_t>(file.size())}; }

TEST(ResumeCheck, EveryIdOnceWithItsCheckpointPasses) {
  const std::string f = records(0, kItems);
  EXPECT_FALSE(verify(f, covering(f, kItems), kItems));
}

TEST(ResumeCheck, ADuplicatedIdIsNamed) {
  const std::string f = records(0, 24) + records(16, kItems);  // batch 2 written again after a resume
  const auto v = verify(f, covering(f, kItems + 8), kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "duplicate");
  EXPECT_EQ(v->output, "id 16");
}

TEST(ResumeCheck, AMissingIdIsNamed) {
  const std::string f = records(0, 40) + records(48, kItems);
  const auto v = verify(f, covering(f, kItems - 8), kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "missing");
  EXPECT_EQ(v->output, "id 40");
}

TEST(ResumeCheck, ATornRecordIsNamed) {
  const std::string whole = records(0, kItems);
  const std::string cut = whole.substr(0, whole.size() - 10);  // the last record without its end
  auto v = verify(cut, covering(cut, kItems), kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "torn");
  // A complete-looking line whose bytes changed is torn too: the checksum disagrees.
  std::string changed = whole;
  changed[changed.find("\"value\":") + 8] = '9';
  v = verify(changed, covering(changed, kItems), kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "torn");
  EXPECT_EQ(v->output, "record 1 (byte 0)");
}

TEST(ResumeCheck, ACheckpointAheadOfOrBehindTheRecordsIsNamed) {
  const std::string f = records(0, kItems);
  Checkpoint ahead = covering(f, kItems);
  ahead.records += 8;
  ahead.bytes += 100;
  auto v = verify(f, ahead, kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "checkpoint");
  v = verify(f, Checkpoint{7, 56, 1000}, kItems);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "checkpoint");
  EXPECT_EQ(verify(f, std::nullopt, kItems)->rule, "checkpoint");
}

TEST(ResumeCheck, AnIdOutsideTheItemsIsNamed) {
  const std::string f = records(0, kItems) + record_line(kItems, 8, 1.0);
  EXPECT_EQ(verify(f, covering(f, kItems + 1), kItems)->rule, "ids");
}

TEST(ResumeCheck, CheckpointTextRoundTrips) {
  const auto c = parse_checkpoint(checkpoint_text({3, 24, 1234}));
  ASSERT_TRUE(c);
  EXPECT_EQ((std::tuple{c->batches_done, c->records, c->bytes}), (std::tuple{3, int64_t{24}, int64_t{1234}}));
  EXPECT_FALSE(parse_checkpoint("{\"batches_done\":3}"));
  EXPECT_FALSE(parse_checkpoint("{\"batches_done\":3,\"records\":24,\"by"));  // a torn checkpoint is none
}

}  // namespace
}  // namespace kd::resume
