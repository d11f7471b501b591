// L4 across GPUs: the split over the devices and the gather on the host, with two (or three) CPU
// shards computing a real function of the id — every id exactly once, the input order restored,
// equal to the unsplit result, an uneven split, and a failing shard named by its device.
#include "verdict/shard_gather.h"

#include <cmath>

#include <gtest/gtest.h>

namespace kd::shard {
namespace {

std::vector<double> row_of(int64_t id) { return {std::sin(static_cast<double>(id)), static_cast<double>(id) * 0.5, 1.0 / (1 + id)}; }

// A shard computes its ids' rows, in its own (reversed, as a length-bucketing job might) order.
ShardOutput compute(const Shard& s) {
  ShardOutput o;
  o.device = s.device;
  for (auto it = s.ids.rbegin(); it != s.ids.rend(); ++it) {
    o.ids.push_back(*it);
    o.rows.push_back(row_of(*it));
  }
  return o;
}

std::vector<int64_t> ids(int n) {
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(1000 + 7 * i);
  return v;
}

std::vector<std::vector<double>> unsplit(const std::vector<int64_t>& in) {
  std::vector<std::vector<double>> rows;
  for (int64_t id : in) rows.push_back(row_of(id));
  return rows;
}

TEST(ShardGather, TwoShardsGiveEveryIdOnceInOrderEqualToTheUnsplitResult) {
  const auto in = ids(8);
  const auto shards = split(in, {0, 1});
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].ids, std::vector<int64_t>(in.begin(), in.begin() + 4));
  EXPECT_EQ(shards[1].ids, std::vector<int64_t>(in.begin() + 4, in.end()));
  const Gathered g = gather(in, {compute(shards[0]), compute(shards[1])});
  ASSERT_FALSE(g.violation) << g.violation->message;
  EXPECT_EQ(g.rows, unsplit(in));  // order restored though each shard answered in its own order
  EXPECT_FALSE(compare(in, g.rows, unsplit(in), shards, 1e-6, 1e-5));
}

TEST(ShardGather, AnUnevenSplitGivesTheFirstShardsOneMore) {
  const auto in = ids(7);
  const auto shards = split(in, {0, 1, 2});
  ASSERT_EQ(shards.size(), 3u);
  EXPECT_EQ(shards[0].ids.size(), 3u);
  EXPECT_EQ(shards[1].ids.size(), 2u);
  EXPECT_EQ(shards[2].ids.size(), 2u);
  EXPECT_EQ(split(ids(1), {0, 1})[1].ids.size(), 0u);  // fewer ids than GPUs: a shard may be empty
  const Gathered g = gather(in, {compute(shards[2]), compute(shards[0]), compute(shards[1])});  // any arrival order
  ASSERT_FALSE(g.violation) << g.violation->message;
  EXPECT_EQ(g.rows, unsplit(in));
}

TEST(ShardGather, AFailingShardIsNamedByItsGpu) {
  const auto in = ids(5);
  const auto shards = split(in, {0, 3});
  ShardOutput failed{3, std::string("CUDA out of memory. Tried to allocate 2.00 GiB"), {}, {}};
  const Gathered g = gather(in, {compute(shards[0]), failed});
  ASSERT_TRUE(g.violation);
  EXPECT_EQ(g.violation->rule, "shard_failed");
  EXPECT_EQ(g.violation->device, 3);
  EXPECT_EQ(g.violation->message, "the shard on GPU 3 failed: CUDA out of memory. Tried to allocate 2.00 GiB");
}

TEST(ShardGather, ALostDoubledOrForeignIdIsFound) {
  const auto in = ids(6);
  const auto shards = split(in, {0, 1});
  ShardOutput a = compute(shards[0]), b = compute(shards[1]);
  ShardOutput lost = b;
  lost.ids.pop_back(), lost.rows.pop_back();
  Gathered g = gather(in, {a, lost});
  ASSERT_TRUE(g.violation);
  EXPECT_EQ(g.violation->rule, "lost");
  EXPECT_EQ(g.violation->message, "id 1021 did not come back from any GPU");
  ShardOutput doubled = b;
  doubled.ids.push_back(in[0]), doubled.rows.push_back(row_of(in[0]));
  g = gather(in, {a, doubled});
  ASSERT_TRUE(g.violation);
  EXPECT_EQ(g.violation->rule, "doubled");
  EXPECT_EQ(g.violation->message, "id 1000 came back twice (from GPU 0 and GPU 1)");
  ShardOutput foreign = b;
  foreign.ids[0] = 5;
  g = gather(in, {a, foreign});
  ASSERT_TRUE(g.violation);
  EXPECT_EQ(g.violation->rule, "foreign");
  EXPECT_EQ(g.violation->device, 1);
}

TEST(ShardGather, AGatheredValueOffTheSingleDeviceResultNamesTheIdAndGpu) {
  const auto in = ids(4);
  const auto shards = split(in, {0, 1});
  Gathered g = gather(in, {compute(shards[0]), compute(shards[1])});
  ASSERT_FALSE(g.violation);
  g.rows[3][1] += 1e-7;  // within the tolerance
  EXPECT_FALSE(compare(in, g.rows, unsplit(in), shards, 1e-6, 1e-5));
  g.rows[3][1] += 0.01;
  const auto v = compare(in, g.rows, unsplit(in), shards, 1e-6, 1e-5);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->rule, "mismatch");
  EXPECT_EQ(v->device, 1);
  EXPECT_NE(v->message.find("id 1021 (from GPU 1), element 1"), std::string::npos) << v->message;
  g.rows[2][0] = NAN;  // never equal
  EXPECT_EQ(compare(in, g.rows, unsplit(in), shards, 1e-6, 1e-5)->message.substr(0, 23), "id 1014 (from GPU 1), e");
}

}  // namespace
}  // namespace kd::shard
