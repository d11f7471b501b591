// Layer L5's operating range, torch-free and unit-tested: grow one axis of a workload by
// doubling until a point fails, then bisect between the last pass and the first failure.
// When the failure was the memory cap and the cap is known, the bisection's first two points are
// where the passed points' memory says the cap is reached (guided), the rest halve the bracket.
// The points themselves are run by a callback (the probe in the worker, a fake in the tests).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kd::range {

enum class Result {
  Passed,
  OutOfMemory,     // the allocation failed: the device (or the allocator's capped share of it) is full
  MemoryFraction,  // refused by the memory fraction: the capped allocator, or the CPU guard before running
  OverBudget,      // the sweep's time ran out during the point, or would run out (predicted, not run)
  LatencyLimit,    // concurrency axis: the p95 latency passed the limit (a multiple of one execution's median)
  Failed,          // anything else: a runtime error, or an out-of-memory that was not recovered from
};
const char* name(Result r);  // "passed", "out_of_memory", "memory_fraction", "time_budget", "latency_limit", "failed"

struct Point {
  int64_t value = 0;
  Result result = Result::Passed;
  bool ran = true;                          // false: decided without running (budget predicted, CPU guard)
  std::optional<double> warm_median_ms;     // synchronized, the warm runs after one cold
  std::optional<double> cold_ms;
  std::optional<uint64_t> peak_allocated, reserved;  // GPU: the caching allocator's counters
  std::optional<uint64_t> estimated_bytes;  // the workload's own estimate of its peak, when the runner made one
  std::optional<double> throughput;         // concurrency and processes axes: sequences per second, all together
  std::optional<double> p50_ms, p95_ms;     // concurrency axis: over every warm run of every execution
  std::optional<uint64_t> rss_peak;         // processes axis: the largest peak resident memory of one process
  std::string note;                         // why it failed, in words
  double seconds = 0;                       // what the point cost the sweep (filled by sweep())
};

struct Limits {
  int64_t start = 1;
  int64_t max_value = int64_t(1) << 30;  // the axis' own ceiling: a sweep always ends
  double budget_s = 20;
  int bisect_divisor = 16;  // bisect until the gap is at most max(1, first failure / bisect_divisor)
  // The memory a point may reach (the capped allocator's share of the device; the CPU guard's share of
  // the host), once known. Unset or nullopt: plain bisection.
  std::function<std::optional<uint64_t>()> memory_cap = {};
};

// Guided bisection: between lo (passed) and hi (failed by the memory cap), on the grid of steps
// max(1, (hi - lo) / divisor) from lo that plain bisection would reach, the largest point whose memory,
// extrapolated from the two largest passes (m = c * v^a; one pass: proportional), stays within cap.
// Its neighbour on the grid then closes the bracket when the guess was right. nullopt without a model.
struct Memory {
  int64_t value;
  uint64_t bytes;  // peak allocated on a GPU, the workload's estimate on the CPU
};
std::optional<int64_t> guided_point(const std::vector<Memory>& passes, uint64_t cap, int64_t lo, int64_t hi,
                                    int64_t step);


struct Outcome {
  std::vector<Point> points;                // in the order they ran
  std::optional<int64_t> largest_pass, first_fail;
  std::string stop_reason;                  // name(Result) of the first failure, or "axis_limit"
  std::optional<std::string> failure;       // a Failed point's note: the step fails (code 9)
  double seconds = 0;
};

// On the CPU the sweep shares its node with other work: a point whose estimated size passes this share
// of the host's available memory (MemAvailable) is not run, whatever --range-memory-fraction allows
// (issue 17: 0.9 of it reached 9.4 GB of RSS). docs/limits.md.
inline constexpr double kCpuHostShareMax = 0.25;
double cpu_host_share(double range_memory_fraction);  // min(fraction, kCpuHostShareMax)
uint64_t host_cap_bytes(double share, uint64_t available);  // the estimate a CPU point may reach

// run(value, seconds_left) runs one point; now() is the sweep's clock in seconds.
using RunPoint = std::function<Point(int64_t value, double seconds_left)>;
using Clock = std::function<double()>;
Outcome sweep(const Limits& limits, const RunPoint& run, const Clock& now);

// The knee of the concurrency axis: the value after which throughput stops growing, i.e. the
// first passed point whose next passed point (by value) gains less than min_gain over it.
// nullopt while every step still gains (the knee lies beyond the points) or with under two points.
inline constexpr double kKneeMinGain = 0.10;
std::optional<int64_t> knee(std::vector<Point> points, double min_gain = kKneeMinGain);

}  // namespace kd::range
