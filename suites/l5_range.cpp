// L5's operating range: the L4 embeddings workload grown along one axis (--range-axis: batch,
// sequence length, concurrent executions in this process, or processes on the device) by doubling, then bisecting between the last pass and the first failure
// (verdict/range_sweep), until it runs out of memory, out of its memory fraction or out of its
// time (--range-budget). On a GPU the caching allocator is capped at --range-memory-fraction of
// the device, so the out-of-memory that ends a sweep is real and cheap; every one is recovered
// from inside the process, and the recovery is checked: a point that leaves memory allocated
// fails the step (code 9). On the CPU the sweep runs against the host's available memory by the
// workload's own estimate, never trying to exhaust it. Facts go under /memory/range.
// The concurrency axis runs N executions of the fixed workload at once (one host thread each, on a
// GPU each on its own stream) and finds the knee where throughput stops growing; it also stops at
// the latency limit. The processes axis is in l5_range_processes.cpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "machine/memory_headroom.h"
#include "machine/read_text.h"
#include "contract/events.h"
#include "contract/report_parts.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/gpu_watch.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/scratch_folder.h"
#include "suites/l5_range_axes.h"
#include "verdict/performance.h"
#include "verdict/range_sweep.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kRangeWarmRuns = 3;
constexpr int kConcurrencyWarmRuns = 8;  // per execution: enough runs for a p95 at N = 1
// Concurrency: a median latency past this multiple of one execution's median (and past the floor,
// under which scheduling noise dominates a tiny workload's latency) stops the axis. The median, not
// the p95: one slow run among a few must not end the sweep.
constexpr double kLatencyFactor = 8, kLatencyFloorMs = 1;
constexpr int64_t kL4MaxLength = 64, kL4Count = 8;  // fixtures/embeddings_input.h: the set grows from these
constexpr double kAfterSweep = 5;  // seconds of the run the sweep leaves for the report and the exit

std::string gib(uint64_t bytes) { return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1u << 30)); }

struct Sweep {
  Sweep(WorkerContext& c, bool on_gpu, std::string a) : ctx(c), gpu(on_gpu), axis(std::move(a)), length_axis(axis == "length") {}
  WorkerContext& ctx;
  bool gpu;
  std::string axis;
  bool length_axis;
  double host_share = 0;  // CPU: the share of MemAvailable a point's estimate may reach
  std::optional<double> latency_limit_ms;  // concurrency: from one execution's median
  Code failure_code = Code::RuntimeError;
  std::optional<uint64_t> device_total;
  int recoveries = 0;  // out-of-memory points after which the memory was checked back at its baseline

  kd_range_in input(int64_t value, double seconds_left) const {
    kd_range_in in{};
    in.set = embeddings_input(gpu, ctx.device_index());
    const bool batch_axis = axis == "batch";
    in.batch = batch_axis ? value : kL4Count;
    in.max_length = length_axis ? value : kL4MaxLength;
    in.warm_runs = kRangeWarmRuns;
    in.budget_ms = seconds_left * 1000;
    in.host_fraction = host_share;
    in.fault = ctx.probe_fault();
    return in;
  }

  range::Point fail(Code code, std::string note) {
    failure_code = code;
    range::Point p;
    p.result = range::Result::Failed;
    p.note = std::move(note);
    return p;
  }

  range::Point run(int64_t value, double seconds_left) {
    const kd_range_in in = input(value, seconds_left);
    auto out = std::make_unique<kd_range_point>();
    const kd_status s = ctx.probe->range_point(&in, out.get());
    if (s.kind != KD_OK) return fail(s.kind == KD_ERR_OUT_OF_MEMORY ? Code::OutOfMemory : Code::RuntimeError, s.message);
    return judge(out.get(), value);
  }

  // N executions at once; the point's latency is over every warm run of every execution.
  range::Point run_concurrent(int64_t n, double seconds_left) {
    kd_range_in in = input(n, seconds_left);
    in.warm_runs = kConcurrencyWarmRuns;
    auto out = std::make_unique<kd_range_concurrent_out>();
    const kd_status s = ctx.probe->range_concurrent(&in, static_cast<int>(n), out.get());
    if (s.kind != KD_OK) return fail(s.kind == KD_ERR_OUT_OF_MEMORY ? Code::OutOfMemory : Code::RuntimeError, s.message);
    range::Point p = judge(&out->point, n);
    if (p.result == range::Result::Failed || out->runs == 0) return p;
    const std::vector<double> latencies(out->latency_ms, out->latency_ms + out->runs);
    p.p50_ms = perf::round3(perf::median(latencies));
    p.p95_ms = perf::round3(perf::p95(latencies));
    p.warm_median_ms = p.p50_ms;
    if (out->wall_ms > 0) p.throughput = perf::round3(out->runs * static_cast<double>(in.batch) / (out->wall_ms / 1000));
    if (p.result != range::Result::Passed) return p;
    if (n == 1) latency_limit_ms = std::max(kLatencyFloorMs, perf::round3(kLatencyFactor * *p.p50_ms));
    if (latency_limit_ms && *p.p50_ms > *latency_limit_ms) {
      p.result = range::Result::LatencyLimit;
      p.note = fmt::format("the median latency {:.4g} ms is past the limit {:.4g} ms ({} times one execution's median, at "
                           "least {} ms)", *p.p50_ms, *latency_limit_ms, kLatencyFactor, kLatencyFloorMs);
    }
    return p;
  }

  range::Point judge(kd_range_point* out, int64_t value) {
    if (out->counters) device_total = out->baseline.device_total;
    range::Point p;
    p.estimated_bytes = out->estimated_bytes;
    if (out->cold_ms > 0 || out->warm > 0) p.cold_ms = perf::round3(out->cold_ms);
    if (out->warm > 0) p.warm_median_ms = perf::round3(perf::median(std::vector<double>(out->warm_ms, out->warm_ms + out->warm)));
    switch (out->result) {
      case KD_RANGE_PASSED:
        break;
      case KD_RANGE_OVER_BUDGET:
        p.result = range::Result::OverBudget;
        p.note = axis == "concurrency" ? "the time budget ran out during the warm runs"
                                       : fmt::format("the time budget ran out after {} of {} warm runs", out->warm, kRangeWarmRuns);
        break;
      case KD_RANGE_OVER_HOST_MEMORY:
        p.result = range::Result::MemoryFraction;
        p.ran = false;
        p.note = fmt::format("estimated {} is over {} of the host's available memory: not run", gib(out->estimated_bytes),
                             host_share);
        break;
      default:  // out of memory: the capped allocator's refusal while the device had room, or the device itself
        const bool capped = out->counters && out->requested_bytes > 0 && out->at_oom.device_free >= out->requested_bytes;
        p.result = capped ? range::Result::MemoryFraction : range::Result::OutOfMemory;
        p.note = out->message;
    }
    if (!out->counters) return p;
    const kd_memory_counters& held = out->result == KD_RANGE_OUT_OF_MEMORY ? out->at_oom : out->at_peak;
    p.peak_allocated = held.peak_allocated;
    p.reserved = held.reserved;
    // The recovery: once the point's tensors are gone and the cache emptied, allocated memory is
    // back where it was before the point. Anything else is memory the next point cannot have.
    if (out->after.allocated != out->baseline.allocated)
      return fail(Code::OutOfMemory,
                  fmt::format("after {} at {} {}, {} bytes stayed allocated (baseline {}): the recovery did not release "
                              "the point's memory",
                              out->result == KD_RANGE_OUT_OF_MEMORY ? "the out-of-memory" : "the point",
                              axis, value, out->after.allocated, out->baseline.allocated));
    if (out->result == KD_RANGE_OUT_OF_MEMORY) ++recoveries;
    return p;
  }
};

json point_json(const range::Point& p, const std::string& axis, const json& processes) {
  json j = json::object();
  report::put(&j, report::point_value, p.value);
  report::put(&j, report::point_result, range::name(p.result));
  report::put(&j, report::point_ran, p.ran);
  report::put(&j, report::point_warm_median_ms, p.warm_median_ms);
  report::put(&j, report::point_cold_ms, p.cold_ms);
  report::put(&j, report::point_peak_allocated_bytes, p.peak_allocated);
  report::put(&j, report::point_reserved_bytes, p.reserved);
  report::put(&j, report::point_estimated_bytes, p.estimated_bytes);
  report::put(&j, report::point_seconds, perf::round3(p.seconds));
  report::put(&j, report::point_note, report::unless_empty(p.note));
  if (axis == "concurrency") {
    report::put(&j, report::point_throughput_per_s, p.throughput);
    report::put(&j, report::point_p50_ms, p.p50_ms);
    report::put(&j, report::point_p95_ms, p.p95_ms);
  }
  if (axis == "processes") {
    report::put(&j, report::point_rss_peak_bytes, p.rss_peak);
    report::put(&j, report::point_processes, processes.value(std::to_string(p.value), json::array()));
  }
  return j;
}

std::string workload(const std::string& axis, const std::string& device) {
  if (axis == "concurrency")
    return fmt::format("L4 embeddings: N executions at once in one process, each the {} inputs of up to {} tokens, one "
                       "host thread each{}, one shared model, built on {}", kL4Count, kL4MaxLength,
                       device == "cpu" ? "" : " and its own stream", device);
  if (axis == "processes")
    return fmt::format("L4 embeddings: N processes at once, each loading LibTorch and running the {} inputs of up to {} "
                       "tokens, on {}", kL4Count, kL4MaxLength, device);
  return axis == "length" ? fmt::format("L4 embeddings: the {} inputs, lengths scaled to a longest of N tokens, int64 tokens, "
                                   "built on {}", kL4Count, device)
                     : fmt::format("L4 embeddings: the {} inputs repeated to N sequences of up to {} tokens, int64 tokens, "
                                   "built on {}", kL4Count, kL4MaxLength, device);
}

}  // namespace

Outcome l5_operating_range(WorkerContext& ctx) {
  const Options& o = ctx.options;
  // Under --gtest_filter the command line could not check the budget against --timeout: fit it here.
  const double budget = std::min(o.range_budget_s, ctx.seconds_left() - kAfterSweep);
  if (budget < 1)
    return Outcome::not_applicable(fmt::format("not enough of --timeout {} s left for the range sweep ({:.1f} s)", o.timeout_s,
                                               ctx.seconds_left()));
  const std::string& axis = o.range_axis;
  Sweep s(ctx, !ctx.cpu_mode(), axis);
  s.host_share = range::cpu_host_share(o.range_memory_fraction);  // a shared node keeps most of its memory
  const std::optional<uint64_t> available = s.gpu ? std::nullopt : machine::available_memory_bytes();
  const std::optional<uint64_t> machine_available = machine::mem_available(machine::read_text("/proc/meminfo").value_or(""));
  if (available && machine_available && *available < *machine_available)  // the cgroup's limit binds first
    events::warning(fmt::format("L5's sweep keeps under this cgroup's memory limit: {} MiB left of it, though the machine "
                                "has {} MiB available", *available >> 20, *machine_available >> 20));
  std::unique_ptr<ScratchFolder> folder;  // the processes' output, removed afterwards
  if (axis == "processes") {
    folder = std::make_unique<ScratchFolder>("kd-range");
    if (folder->path.empty()) return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the range's processes");
  }
  // No harm to the others: the sweep may use the fraction of the memory that is free when it begins, shared with
  // the other processes on the GPU then (sharing::budget), never a fraction of the device's total. The allocator's
  // cap counts what it already holds, so it is that plus the share.
  std::optional<GpuWatch> watch;
  std::optional<sharing::Budget> share;
  std::optional<uint64_t> cap_bytes;
  double device_fraction = o.range_memory_fraction;  // of the device's total, as the caching allocator takes it
  if (watches_gpu(ctx)) {
    watch.emplace(ctx, std::vector<int>{ctx.device_index()});
    if (const std::optional<DeviceMemory>& m = watch->memory(); m && m->total > 0) {
      share = sharing::budget(m->free, o.range_memory_fraction, watch->before());
      cap_bytes = m->reserved + share->bytes;
      device_fraction = std::clamp(static_cast<double>(*cap_bytes) / static_cast<double>(m->total), 1e-6, 1.0);
      if (!s.gpu && available && *available > 0)  // the stand-in GPU (test only): its free memory bounds the CPU's sweep
        s.host_share = std::min(s.host_share, static_cast<double>(*cap_bytes) / static_cast<double>(*available));
    }
  }
  ProcessesAxis procs(ctx, s.gpu, folder ? folder->path : "", s.host_share, device_fraction);
  if (s.gpu && axis != "processes") {  // the processes cap their own allocators, at the cap's share each
    const kd_status st = ctx.probe->range_memory_fraction(ctx.device_index(), device_fraction);
    if (st.kind != KD_OK) return backend_failure(st);
  }
  // The memory a point may reach: the capped allocator's share of the device, or the CPU guard's share of the
  // host's available memory.
  const auto memory_cap = [&]() -> std::optional<uint64_t> {
    if (s.gpu && cap_bytes) return cap_bytes;
    if (s.device_total) return static_cast<uint64_t>(*s.device_total * device_fraction);
    if (available) return range::host_cap_bytes(s.host_share, *available);
    return std::nullopt;
  };
  range::Limits limits{1, int64_t(1) << 30, budget, 16, memory_cap};
  range::RunPoint run = [&](int64_t v, double left) { return s.run(v, left); };
  if (axis == "concurrency") {
    // On the CPU past four executions a core nothing new is learnt; on a GPU the probe's own bound.
    limits.max_value = s.gpu ? KD_RANGE_MAX_EXECUTIONS
                             : std::clamp<int64_t>(4 * std::thread::hardware_concurrency(), 2, KD_RANGE_MAX_EXECUTIONS);
    limits.bisect_divisor = 1;  // the doubling's bracket is the answer: no bisection between executions
    run = [&](int64_t v, double left) { return s.run_concurrent(v, left); };
  } else if (axis == "processes") {
    limits.max_value = procs.max_value();
    limits.bisect_divisor = 1;
    run = [&](int64_t v, double left) {
      range::Point p = procs.run(v, left);
      if (p.result == range::Result::Failed) s.failure_code = procs.failure_code;
      return p;
    };
  }
  const auto t0 = std::chrono::steady_clock::now();
  const range::Outcome r = range::sweep(
      limits, run, [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); });
  if (s.gpu && axis != "processes") {  // the rest of the run gets the whole device again
    const kd_status st = ctx.probe->range_memory_fraction(ctx.device_index(), 1.0);
    if (st.kind != KD_OK && !r.failure) return backend_failure(st);
  }
  if (procs.device_total) s.device_total = procs.device_total;
  if (watch) record_sharing(ctx, "L5.range", watch->before(), watch->during(), "none");
  json points = json::array();
  for (const range::Point& p : r.points) points.push_back(point_json(p, axis, procs.processes));
  const bool capped = budget < o.range_budget_s;
  json fixed = json::object();  // the other axis' value, or both for the concurrency and processes axes
  if (axis != "batch") report::put(&fixed, report::fixed_batch, kL4Count);
  if (axis != "length") report::put(&fixed, report::fixed_max_length, kL4MaxLength);
  const std::optional<uint64_t> cap = memory_cap();
  json fact = json::object();
  report::put(&fact, report::range_axis, axis);
  report::put(&fact, report::range_workload, workload(axis, s.gpu ? fmt::format("cuda:{}", ctx.device_index()) : "cpu"));
  report::put(&fact, report::range_fixed, fixed);
  report::put(&fact, report::range_warm_runs, axis == "concurrency" ? kConcurrencyWarmRuns : kRangeWarmRuns);
  report::put(&fact, report::range_budget_s, perf::round3(budget));
  report::put(&fact, report::range_budget_capped_by_timeout, capped);
  report::put(&fact, report::range_memory_fraction, o.range_memory_fraction);
  report::put(&fact, report::range_memory_limit, s.gpu ? "allocator" : "host_estimate");
  report::put(&fact, report::range_memory_cap_bytes, cap);
  report::put(&fact, report::range_device_free_bytes, watch && watch->memory() ? std::optional(watch->memory()->free) : std::nullopt);
  report::put(&fact, report::range_memory_note, share ? report::unless_empty(share->note) : std::nullopt);
  report::put(&fact, report::range_host_memory_share, axis == "processes" || !s.gpu ? std::optional(s.host_share) : std::nullopt);
  report::put(&fact, report::range_points, points);
  report::put(&fact, report::range_largest_pass, r.largest_pass);
  report::put(&fact, report::range_first_fail, r.first_fail);
  report::put(&fact, report::range_stop_reason, r.stop_reason);
  report::put(&fact, report::range_recoveries,
              s.gpu && axis != "processes" ? std::optional<int64_t>(s.recoveries) : std::nullopt);
  report::put(&fact, report::range_seconds, perf::round3(r.seconds));
  if (axis == "concurrency") {
    report::put(&fact, report::range_knee, range::knee(r.points));
    report::put(&fact, report::range_knee_min_gain, range::kKneeMinGain);
    report::put(&fact, report::range_latency_limit_ms, s.latency_limit_ms);
  }
  if (axis == "processes") report::put(&fact, report::range_limit, procs.limit);
  ctx.fact(report::memory_range, fact);
  if (r.failure) return Outcome::fail(s.failure_code, *r.failure);
  return Outcome::pass();
}

}  // namespace kd
