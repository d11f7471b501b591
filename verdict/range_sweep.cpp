#include "range_sweep.h"

#include <algorithm>
#include <cmath>

namespace kd::range {

const char* name(Result r) {
  switch (r) {
    case Result::Passed: return "passed";
    case Result::OutOfMemory: return "out_of_memory";
    case Result::MemoryFraction: return "memory_fraction";
    case Result::OverBudget: return "time_budget";
    case Result::LatencyLimit: return "latency_limit";
    case Result::Failed: break;
  }
  return "failed";
}

double cpu_host_share(double range_memory_fraction) {
  return std::isfinite(range_memory_fraction) && range_memory_fraction > 0 ? std::min(range_memory_fraction, kCpuHostShareMax) : 0;
}

uint64_t host_cap_bytes(double share, uint64_t available) {
  return static_cast<uint64_t>(std::floor(cpu_host_share(share) * static_cast<double>(available)));
}


std::optional<int64_t> guided_point(const std::vector<Memory>& passes, uint64_t cap, int64_t lo, int64_t hi,
                                    int64_t step) {
  std::vector<Memory> known;
  for (const Memory& m : passes)
    if (m.value > 0 && m.bytes > 0) known.push_back(m);
  if (known.empty() || cap == 0 || step < 1 || hi - lo <= step) return std::nullopt;
  std::sort(known.begin(), known.end(), [](const Memory& a, const Memory& b) { return a.value < b.value; });
  const Memory& top = known.back();
  double exponent = 1;  // one pass: memory proportional to the value
  if (known.size() >= 2) {
    const Memory& below = known[known.size() - 2];
    if (below.value >= top.value || below.bytes >= top.bytes) return std::nullopt;  // memory that does not grow: no model
    exponent = std::log(static_cast<double>(top.bytes) / static_cast<double>(below.bytes)) /
               std::log(static_cast<double>(top.value) / static_cast<double>(below.value));
  }
  exponent = std::clamp(exponent, 0.5, 4.0);
  const double at_cap = static_cast<double>(top.value) * std::pow(static_cast<double>(cap) / static_cast<double>(top.bytes), 1 / exponent);
  if (!std::isfinite(at_cap)) return std::nullopt;
  const double k = std::floor((std::clamp(at_cap, static_cast<double>(lo), static_cast<double>(hi)) - static_cast<double>(lo)) /
                              static_cast<double>(step));
  const int64_t last = (hi - lo - 1) / step;  // the grid's last point below hi
  return lo + std::clamp(static_cast<int64_t>(k), int64_t(1), last) * step;
}

namespace {

class Sweep {
 public:
  Sweep(const Limits& l, const RunPoint& run, const Clock& now) : limits_(l), run_(run), now_(now), t0_(now()) {}

  // Runs (or declines) one point and records it.
  const Point& at(int64_t value) {
    const double left = limits_.budget_s - (now_() - t0_);
    Point p;
    if (left <= 0 || predicted(value) > left) {  // doubling would overrun the budget: say so, do not run
      p.value = value;
      p.result = Result::OverBudget;
      p.ran = false;
      p.note = left <= 0 ? "the time budget was spent" : "predicted to take longer than the time budget left";
    } else {
      const double t = now_();
      p = run_(value, left);
      p.value = value;
      p.seconds = now_() - t;
      if (p.result == Result::Passed) {
        last_pass_ = p;
        const std::optional<uint64_t>& bytes = p.peak_allocated ? p.peak_allocated : p.estimated_bytes;
        if (bytes) passes_.push_back({p.value, *bytes});
      }
    }
    out_.points.push_back(p);
    return out_.points.back();
  }

  Outcome run() {
    int64_t lo = 0, value = std::max<int64_t>(1, limits_.start);
    const Point* fail = nullptr;
    for (;;) {  // doubling
      const Point& p = at(value);
      if (p.result != Result::Passed) {
        fail = &p;
        break;
      }
      lo = value;
      if (value >= limits_.max_value) return finish(lo, std::nullopt, "axis_limit");
      value = std::min(value * 2, limits_.max_value);
    }
    if (fail->result == Result::Failed || fail->result == Result::OverBudget) return finish(lo, *fail);
    Point hi = *fail;  // bisect: lo passed, hi failed (out of memory or over the fraction)
    const int64_t step = std::max<int64_t>(1, (hi.value - lo) / std::max(1, limits_.bisect_divisor));
    // Over the cap, not out of a device shared with others: the cap says where the limit is.
    const std::optional<uint64_t> cap =
        hi.result == Result::MemoryFraction && limits_.memory_cap ? limits_.memory_cap() : std::nullopt;
    const std::optional<int64_t> guess = cap ? guided_point(passes_, *cap, lo, hi.value, step) : std::nullopt;
    // Guided, the bisection stays on the grid and ends at one step: never a wider bracket than plain halving's.
    const auto open = [&] {
      return guess ? hi.value - lo > step : hi.value - lo > std::max<int64_t>(1, hi.value / std::max(1, limits_.bisect_divisor));
    };
    bool guess_passed = false;
    for (int placed = 0; open(); ++placed) {
      int64_t value = lo + (hi.value - lo) / 2;
      if (guess) {
        const int64_t steps = (hi.value - lo + step - 1) / step, neighbour = guess_passed ? lo + step : hi.value - step;
        value = placed == 0                                           ? *guess
                : placed == 1 && neighbour > lo && neighbour < hi.value ? neighbour  // closes the bracket if the guess was right
                                                                        : lo + steps / 2 * step;
      }
      const Point& p = at(value);
      guess_passed = p.result == Result::Passed;
      if (p.result == Result::Passed) {
        lo = p.value;
      } else if (p.result == Result::Failed) {
        return finish(lo, p);
      } else if (p.result == Result::OverBudget) {
        break;  // the bracket found so far stands
      } else {
        hi = p;
      }
    }
    return finish(lo, hi);
  }

 private:
  // A point's cost grows with its value: the last pass's cost scaled, for the doubling's next step.
  double predicted(int64_t value) const {
    if (!last_pass_ || last_pass_->value <= 0) return 0;
    return last_pass_->seconds * static_cast<double>(value) / static_cast<double>(last_pass_->value);
  }

  Outcome finish(int64_t lo, const Point& fail) {
    out_.first_fail = fail.value;
    out_.stop_reason = name(fail.result);
    if (fail.result == Result::Failed) out_.failure = fail.note;
    return finish(lo, fail.value, out_.stop_reason);
  }
  Outcome finish(int64_t lo, std::optional<int64_t> first_fail, const std::string& reason) {
    if (lo > 0) out_.largest_pass = lo;
    out_.first_fail = first_fail;
    out_.stop_reason = reason;
    out_.seconds = now_() - t0_;
    return out_;
  }

  const Limits& limits_;
  const RunPoint& run_;
  const Clock& now_;
  const double t0_;
  std::optional<Point> last_pass_;
  std::vector<Memory> passes_;  // the passed points' memory, for the guided bisection
  Outcome out_;
};

}  // namespace

Outcome sweep(const Limits& limits, const RunPoint& run, const Clock& now) { return Sweep(limits, run, now).run(); }

std::optional<int64_t> knee(std::vector<Point> points, double min_gain) {
  points.erase(std::remove_if(points.begin(), points.end(),
                              [](const Point& p) { return p.result != Result::Passed || !p.throughput; }),
               points.end());
  std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.value < b.value; });
  for (size_t i = 1; i < points.size(); ++i)
    if (*points[i].throughput < *points[i - 1].throughput * (1 + min_gain)) return points[i - 1].value;
  return std::nullopt;
}

}  // namespace kd::range
