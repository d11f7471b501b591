// L5's operating-range sweep against a fake point runner and a fake clock: the doubling, the
// bisection, each stop reason, and a failed recovery that ends the sweep as a failure.
#include "verdict/range_sweep.h"

#include <gtest/gtest.h>

namespace kd::range {
namespace {

// A workload whose points pass up to `fits` and fail above with `over`; each costs seconds_per_unit * value.
struct Fake {
  int64_t fits = 100;
  Result over = Result::OutOfMemory;
  double seconds_per_unit = 0.001;
  double clock = 0;
  std::vector<int64_t> ran;

  Outcome run(const Limits& l) {
    return sweep(
        l,
        [&](int64_t v, double) {
          ran.push_back(v);
          clock += seconds_per_unit * static_cast<double>(v);
          Point p;
          p.result = v <= fits ? Result::Passed : over;
          if (p.result == Result::Passed) p.warm_median_ms = static_cast<double>(v);
          return p;
        },
        [&] { return clock; });
  }
};

TEST(RangeSweep, DoublesThenBisectsToTheFirstFailure) {
  Fake f;
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 20, 1000});  // bisect down to a gap of 1
  EXPECT_EQ((std::vector<int64_t>(f.ran.begin(), f.ran.begin() + 8)), (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(f.ran[8], 96);  // halfway between the last pass (64) and the first failure (128)
  EXPECT_EQ(o.largest_pass, 100);
  EXPECT_EQ(o.first_fail, 101);
  EXPECT_EQ(o.stop_reason, "out_of_memory");
  EXPECT_FALSE(o.failure);
  EXPECT_EQ(o.points.size(), f.ran.size());
  for (const Point& p : o.points) EXPECT_EQ(p.result == Result::Passed, p.value <= 100) << p.value;
}

TEST(RangeSweep, BisectsOnlyToTheResolutionAsked) {
  Fake f;
  f.fits = 5000;
  f.seconds_per_unit = 0;  // time is not what ends this one
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 20, 16});  // stop when the gap is at most 1/16 of the failure
  ASSERT_TRUE(o.largest_pass && o.first_fail);
  EXPECT_LE(*o.largest_pass, 5000);
  EXPECT_GT(*o.first_fail, 5000);
  EXPECT_LE((*o.first_fail - *o.largest_pass) * 16, *o.first_fail);
  EXPECT_GT((*o.first_fail - *o.largest_pass) * 32, *o.first_fail);  // and not finer: each point costs
}

TEST(RangeSweep, TheMemoryFractionIsAStopReasonOfItsOwn) {
  Fake f;
  f.over = Result::MemoryFraction;
  const Outcome o = f.run(Limits{8, int64_t(1) << 30, 20, 1000});
  EXPECT_EQ(f.ran.front(), 8);
  EXPECT_EQ(o.stop_reason, "memory_fraction");
  EXPECT_EQ(o.largest_pass, 100);
  EXPECT_EQ(o.first_fail, 101);
}

TEST(RangeSweep, TheTimeBudgetStopsTheDoublingBeforeAPointWouldOverrunIt) {
  Fake f;
  f.fits = int64_t(1) << 40;
  f.seconds_per_unit = 0.01;  // 1, 2, 4 ... cost 0.01 s per unit: 1023 units fit in 10.23 s
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 12, 16});
  EXPECT_EQ(o.stop_reason, "time_budget");
  EXPECT_EQ(o.largest_pass, 512);   // 1 + 2 + ... + 512 = 10.23 s; 1024 would take 10.24 s more
  EXPECT_EQ(o.first_fail, 1024);
  EXPECT_EQ(f.ran.back(), 512);     // 1024 was predicted, never run
  EXPECT_FALSE(o.points.back().ran);
  EXPECT_EQ(o.points.back().result, Result::OverBudget);
  EXPECT_LE(o.seconds, 12);
}

TEST(RangeSweep, APointThatRunsOutOfTimeEndsTheSweepWithoutBisecting) {
  Fake f;
  f.fits = 1000;
  f.over = Result::OverBudget;  // the probe stopped the point when the budget ran out
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 20, 16});
  EXPECT_EQ(o.stop_reason, "time_budget");
  EXPECT_EQ(o.largest_pass, 512);
  EXPECT_EQ(o.first_fail, 1024);
  EXPECT_EQ(f.ran.back(), 1024);
}

TEST(RangeSweep, AFailedRecoveryEndsTheSweepAsAFailure) {
  Fake f;
  int calls = 0;
  const Outcome o = sweep(
      Limits{1, int64_t(1) << 30, 20, 16},
      [&](int64_t v, double) {
        ++calls;
        Point p;
        if (v >= 64) {  // the out-of-memory at 64 left memory allocated: the runner says Failed
          p.result = Result::Failed;
          p.note = "after the out-of-memory at batch 64, 4096 bytes stayed allocated";
        }
        return p;
      },
      [] { return 0.0; });
  EXPECT_EQ(calls, 7);  // 1 ... 64, no bisection after a failure
  EXPECT_EQ(o.stop_reason, "failed");
  ASSERT_TRUE(o.failure);
  EXPECT_NE(o.failure->find("stayed allocated"), std::string::npos);
  EXPECT_EQ(o.largest_pass, 32);
  EXPECT_EQ(o.first_fail, 64);
}

TEST(RangeSweep, ABisectionCutShortByTheBudgetKeepsTheBracketItFound) {
  Fake f;
  f.fits = 5000;  // 1 ... 8192 cost 16.4 s; the first bisection point (6144) is predicted at 6.1 s, 3.6 s are left
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 20, 16});
  EXPECT_EQ(o.largest_pass, 4096);
  EXPECT_EQ(o.first_fail, 8192);
  EXPECT_EQ(o.stop_reason, "out_of_memory");  // what failed at 8192, not the budget
  EXPECT_EQ(o.points.back().value, 6144);
  EXPECT_EQ(o.points.back().result, Result::OverBudget);
  EXPECT_FALSE(o.points.back().ran);
}

TEST(RangeSweep, AFailureInsideTheBisectionIsStillAFailure) {
  Fake f;
  const Outcome o = sweep(
      Limits{1, int64_t(1) << 30, 20, 16},
      [&](int64_t v, double) {
        Point p;
        if (v > 100) p.result = v == 128 ? Result::OutOfMemory : Result::Failed;  // the point after the OOM fails oddly
        return p;
      },
      [] { return 0.0; });
  EXPECT_EQ(o.stop_reason, "failed");
  EXPECT_EQ(o.first_fail, 112);  // 64 passed, 128 out of memory, 96 passed, 112 failed
  EXPECT_EQ(o.largest_pass, 96);
}

TEST(RangeSweep, TheFirstPointFailingLeavesNoPass) {
  Fake f;
  f.fits = 0;
  const Outcome o = f.run(Limits{1, int64_t(1) << 30, 20, 16});
  EXPECT_FALSE(o.largest_pass);
  EXPECT_EQ(o.first_fail, 1);
  EXPECT_EQ(f.ran, std::vector<int64_t>{1});
}

TEST(RangeSweep, TheAxisCeilingEndsASweepThatNeverFails) {
  Fake f;
  f.fits = int64_t(1) << 40;
  f.seconds_per_unit = 0;
  const Outcome o = f.run(Limits{3, 100, 20, 16});
  EXPECT_EQ(f.ran, (std::vector<int64_t>{3, 6, 12, 24, 48, 96, 100}));  // the last step is the ceiling itself
  EXPECT_EQ(o.stop_reason, "axis_limit");
  EXPECT_EQ(o.largest_pass, 100);
  EXPECT_FALSE(o.first_fail);
}

// A GPU point's memory, as the probe reports it: bytes_per_unit * value (peak allocated), refused by the
// capped allocator above `fits`; `reported` scales what the point reports against what it really uses.
struct CappedFake {
  int64_t fits = 5000;
  double reported = 1;
  std::vector<int64_t> ran = {};

  Outcome run(bool cap_known) {
    Limits l{1, int64_t(1) << 30, 20, 16};
    if (cap_known) l.memory_cap = [this] { return std::optional<uint64_t>(1000 * static_cast<uint64_t>(fits)); };
    return sweep(
        l,
        [&](int64_t v, double) {
          ran.push_back(v);
          Point p;
          p.result = v <= fits ? Result::Passed : Result::MemoryFraction;
          p.peak_allocated = static_cast<uint64_t>(reported * 1000 * static_cast<double>(v));
          return p;
        },
        [] { return 0.0; });
  }
};

TEST(RangeSweep, AKnownCapGuidesTheBisectionToTheSameBracketInTwoPoints) {
  CappedFake plain, guided;
  const Outcome a = plain.run(false), b = guided.run(true);
  EXPECT_EQ(a.largest_pass, 4864);  // 4096 passed, 8192 over the cap: 6144, 5120, 4608, 4864
  EXPECT_EQ(a.first_fail, 5120);
  EXPECT_EQ(b.largest_pass, a.largest_pass);
  EXPECT_EQ(b.first_fail, a.first_fail);
  EXPECT_EQ(b.stop_reason, "memory_fraction");
  // The same doubling; then 4864, where 2048's and 4096's memory reach the cap, and its neighbour 5120.
  EXPECT_EQ(std::vector<int64_t>(guided.ran.end() - 2, guided.ran.end()), (std::vector<int64_t>{4864, 5120}));
  EXPECT_EQ(guided.ran.size() + 2, plain.ran.size());
}

TEST(RangeSweep, AGuidedBisectionFindsTheSameLimitAsAPlainOneWhereverItLies) {
  for (int64_t fits : {3, 5, 9, 100, 1023, 1025, 5000, 6143, 6144, 7900, 8191, 100000, 123456789})
    for (double reported : {1.0, 0.5, 0.9, 1.1, 2.0}) {  // exact, and memory the model reads too low or too high
      CappedFake plain{fits, reported}, guided{fits, reported};
      const Outcome a = plain.run(false), b = guided.run(true);
      ASSERT_TRUE(b.largest_pass && b.first_fail) << fits;
      EXPECT_LE(*b.largest_pass, fits);
      EXPECT_GT(*b.first_fail, fits);
      EXPECT_LE((*b.first_fail - *b.largest_pass) * 16, std::max<int64_t>(16, *b.first_fail)) << fits;
      // Never a coarser bracket than plain bisection's; as many points at most when the model is right.
      EXPECT_GE(*b.largest_pass, *a.largest_pass) << fits << " " << reported;
      EXPECT_LE(*b.first_fail, *a.first_fail) << fits << " " << reported;
      if (reported == 1.0) {
        EXPECT_LE(guided.ran.size(), plain.ran.size()) << fits;
      }
      // Wrong by any factor, the guess costs three points at most: itself, its neighbour, one more halving.
      EXPECT_LE(guided.ran.size(), plain.ran.size() + 3) << fits << " " << reported;
    }
}

TEST(RangeSweep, ADeviceFullOfOthersIsBisectedPlainly) {
  Fake f;  // out_of_memory: the device itself, whose free memory the cap does not tell
  f.fits = 5000;
  f.seconds_per_unit = 0;
  Limits l{1, int64_t(1) << 30, 20, 16};
  l.memory_cap = [] { return std::optional<uint64_t>(5000); };
  f.run(l);
  EXPECT_EQ(std::vector<int64_t>(f.ran.end() - 4, f.ran.end()), (std::vector<int64_t>{6144, 5120, 4608, 4864}));
}

TEST(RangeSweep, TheGuessNeedsMemoryThatGrows) {
  EXPECT_EQ(guided_point({}, 1000, 64, 128, 4), std::nullopt);
  EXPECT_EQ(guided_point({{32, 500}, {64, 500}}, 1000, 64, 128, 4), std::nullopt);  // flat: no model
  EXPECT_EQ(guided_point({{64, 640}}, 900, 64, 128, 4), 88);                        // proportional: 90 fits
  EXPECT_EQ(guided_point({{32, 320}, {64, 640}}, 900, 64, 128, 4), 88);
  EXPECT_EQ(guided_point({{32, 100}, {64, 400}}, 1000, 64, 128, 4), 100);           // quadratic: 101 fits
  EXPECT_EQ(guided_point({{64, 640}}, 100000, 64, 128, 4), 124);  // past hi: the grid's last point below it
  EXPECT_EQ(guided_point({{64, 640}}, 10, 64, 128, 4), 68);       // below lo: the grid's first point above it
  EXPECT_EQ(guided_point({{64, 640}}, 1000, 64, 68, 4), std::nullopt);  // no grid point inside
}

}  // namespace
}  // namespace kd::range

// Issue 17: on the CPU the sweep reached 9.4 GB of RSS under the default 0.9. A point's estimate may reach
// at most a quarter of the available memory, and never more than --range-memory-fraction of it.
namespace kd::range {
namespace {

TEST(RangeSweep, TheCpuSweepKeepsToAQuarterOfTheAvailableMemoryAtMost) {
  EXPECT_EQ(cpu_host_share(0.9), 0.25);  // the default fraction
  EXPECT_EQ(cpu_host_share(1.0), 0.25);
  EXPECT_EQ(cpu_host_share(0.1), 0.1);   // a smaller fraction is kept
  EXPECT_EQ(cpu_host_share(0.000001), 0.000001);
  EXPECT_EQ(cpu_host_share(0), 0);
  EXPECT_EQ(host_cap_bytes(0.9, 16ull << 30), 4ull << 30);
  EXPECT_EQ(host_cap_bytes(0.1, 1000), 100u);
  for (uint64_t available : {uint64_t(0), uint64_t(1) << 20, uint64_t(64) << 30, uint64_t(2) << 40})
    for (double f : {0.000001, 0.25, 0.5, 0.9, 1.0}) {
      EXPECT_LE(host_cap_bytes(f, available), available / 4);
      EXPECT_LE(static_cast<double>(host_cap_bytes(f, available)), f * static_cast<double>(available));
    }
}

Point at(int64_t v, double throughput, Result r = Result::Passed) {
  Point p;
  p.value = v;
  p.result = r;
  p.throughput = throughput;
  return p;
}

TEST(RangeKnee, IsWhereTheNextDoublingGainsUnderTenPercent) {
  // 1 -> 2 doubles, 2 -> 4 gains 50 %, 4 -> 8 gains 5 %: throughput stopped growing after 4.
  EXPECT_EQ(knee({at(1, 100), at(2, 200), at(4, 300), at(8, 315), at(16, 310)}), 4);
  // In any order, and a point that fell (10 -> 9) is a knee too.
  EXPECT_EQ(knee({at(4, 90), at(1, 50), at(2, 100)}), 2);
}

TEST(RangeKnee, NoneWhileEveryStepGainsOrWithUnderTwoPasses) {
  EXPECT_EQ(knee({at(1, 100), at(2, 180), at(4, 300)}), std::nullopt);
  EXPECT_EQ(knee({at(1, 100)}), std::nullopt);
  EXPECT_EQ(knee({}), std::nullopt);
  // Points that did not pass do not count: the out-of-memory at 8 is not a fall in throughput.
  EXPECT_EQ(knee({at(1, 100), at(2, 190), at(4, 0, Result::OutOfMemory)}), std::nullopt);
  EXPECT_EQ(knee({at(1, 100), at(2, 109)}, 0.10), 1);
  EXPECT_EQ(knee({at(1, 100), at(2, 109)}, 0.05), std::nullopt);
}

TEST(RangeKnee, TheLatencyLimitIsAStopReasonOfItsOwn) {
  EXPECT_STREQ(name(Result::LatencyLimit), "latency_limit");
  double clock = 0;
  const Outcome o = sweep(
      Limits{1, 64, 20, 1},
      [&](int64_t v, double) {
        clock += 0.01;
        Point p;
        p.result = v < 8 ? Result::Passed : Result::LatencyLimit;
        return p;
      },
      [&] { return clock; });
  EXPECT_EQ(o.largest_pass, 4);
  EXPECT_EQ(o.first_fail, 8);
  EXPECT_EQ(o.stop_reason, "latency_limit");
  EXPECT_EQ(o.points.size(), 4u);  // divisor 1: the doubling's bracket stands, no bisection
  EXPECT_FALSE(o.failure);
}

}  // namespace
}  // namespace kd::range
