#include "suites/l5_range_axes.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/child_process.h"
#include "fixtures/worker_context.h"
#include "machine/memory_headroom.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int64_t kMaxProcesses = 64;

// What this process may still allocate (MemAvailable, within its cgroup's memory limit); 0 when unknown.
uint64_t available_host_bytes() { return machine::available_memory_bytes().value_or(0); }

// A process' record before it said how it ended: no result yet, in `phase`.
json unfinished(const char* phase) {
  json record;
  report::slot(&record, report::process_result) = nullptr;
  report::put(&record, report::process_phase, phase);
  return record;
}

// The process' record as it said it, or, when it ended without one, the last phase it entered.
json read_record(const std::string& log) {
  const JobOutput job = read_job(log);
  if (const auto* record = job.last<events::ProcessRecord>()) return record->record;
  const auto* phase = job.last<events::Stage>();
  return unfinished(phase ? phase->stage.c_str() : "start");
}

}  // namespace

ProcessesAxis::ProcessesAxis(WorkerContext& ctx, bool gpu, std::string folder, double host_fraction, double device_fraction)
    : ctx_(ctx), gpu_(gpu), folder_(std::move(folder)), host_fraction_(host_fraction), device_fraction_(device_fraction) {}

int64_t ProcessesAxis::max_value() const {
  // On the CPU the processes share its cores: past twice their number nothing new is learnt.
  return gpu_ ? kMaxProcesses : std::clamp<int64_t>(2 * std::thread::hardware_concurrency(), 2, kMaxProcesses);
}

range::Point ProcessesAxis::run(int64_t n, double seconds_left) {
  range::Point p;
  const uint64_t available = available_host_bytes();
  if (last_rss_ && static_cast<double>(*last_rss_ * n) > host_fraction_ * static_cast<double>(available)) {
    p.result = range::Result::MemoryFraction;
    p.ran = false;
    p.estimated_bytes = *last_rss_ * n;
    p.note = fmt::format("{} processes of {:.2f} GiB each are over {} of the host's available memory: not run", n,
                         static_cast<double>(*last_rss_) / (1u << 30), host_fraction_);
    return p;
  }
  // On a GPU the sweep's cap is shared out: together the processes' allocators may hold at most the cap.
  const double share = gpu_ ? device_fraction_ / static_cast<double>(n) : 1.0;
  std::vector<pid_t> pids;
  for (int64_t i = 0; i < n; ++i) {
    Plan plan;
    plan.role.kind = ProcessRole::RangeJob;
    plan.role.allocator_share = share;
    plan.options.device = ctx_.options.device;
    plan.options.device_index = ctx_.device_index();
    const pid_t pid = start_job(ctx_, plan, folder_, fmt::format("{}/process-{}-{}.log", folder_, n, i));
    pids.push_back(pid);
    if (pid < 0) break;
  }
  // Wait for all of them, within what is left of the sweep's time; past it, they are ended.
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<int> status(pids.size(), 0);
  std::vector<bool> done(pids.size(), false);
  bool over_budget = false;
  for (size_t left = std::count_if(pids.begin(), pids.end(), [](pid_t x) { return x > 0; }); left > 0;) {
    for (size_t i = 0; i < pids.size(); ++i)
      if (pids[i] > 0 && !done[i] && ::waitpid(pids[i], &status[i], WNOHANG) == pids[i]) done[i] = true, --left;
    if (left == 0) break;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds_left) {
      over_budget = true;
      for (size_t i = 0; i < pids.size(); ++i)
        if (pids[i] > 0 && !done[i]) ::kill(pids[i], SIGKILL), status[i] = wait_exit(pids[i]), done[i] = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  json records = json::array();
  std::vector<double> warm, cold;
  std::optional<json> first_oom, first_failure;
  for (size_t i = 0; i < pids.size(); ++i) {
    json r = pids[i] > 0 ? read_record(fmt::format("{}/process-{}-{}.log", folder_, n, i)) : unfinished("start");
    if (pids[i] <= 0) report::put(&r, report::process_note, "the process could not be started");
    report::put(&r, report::process_index, static_cast<int64_t>(i));
    report::put(&r, report::process_exit, pids[i] > 0 ? std::optional(how_it_ended(status[i])) : std::nullopt);
    const std::string phase = report::read(r, report::process_phase).value_or("start");
    if (!report::read(r, report::process_result)) {
      // Ended without its result: by the sweep's budget, or killed from outside (as the kernel's
      // out-of-memory killer does, with SIGKILL), or it crashed.
      const bool killed = pids[i] > 0 && WIFSIGNALED(status[i]) && WTERMSIG(status[i]) == SIGKILL;
      report::put(&r, report::process_result, over_budget ? "time_budget" : killed ? "out_of_memory" : "failed");
      if (!report::read(r, report::process_note))
        report::put(&r, report::process_note, fmt::format("ended in phase {} without a result ({})", phase,
                                                          report::read(r, report::process_exit).value_or("not started")));
    }
    const std::string result = report::read(r, report::process_result).value_or("failed");
    if (result == "passed") {
      if (auto w = report::read(r, report::process_warm_median_ms)) warm.push_back(*w);
      if (auto c = report::read(r, report::process_cold_ms)) cold.push_back(*c);
    }
    if (auto rss = report::read(r, report::process_rss_peak_bytes)) p.rss_peak = std::max(p.rss_peak.value_or(0), *rss);
    if (auto d = report::read(r, report::process_device_peak_bytes)) p.peak_allocated = std::max(p.peak_allocated.value_or(0), *d);
    if (auto d = report::read(r, report::process_device_reserved_bytes)) p.reserved = std::max(p.reserved.value_or(0), *d);
    if (auto d = report::read(r, report::process_device_total_bytes)) device_total = *d;
    // The first to run out: the one that got there soonest by its own clock.
    const auto seconds = [](const json& record) { return report::read(record, report::process_seconds).value_or(1e300); };
    auto sooner = [&](const std::optional<json>& have) { return !have || seconds(r) < seconds(*have); };
    if (result == "out_of_memory" && sooner(first_oom)) first_oom = r;
    if (result == "failed" && sooner(first_failure)) first_failure = r;
    records.push_back(r);
  }
  processes[std::to_string(n)] = records;
  if (!warm.empty()) p.warm_median_ms = perf::median(warm);
  if (!cold.empty()) p.cold_ms = perf::median(cold);
  auto named = [](const json& r) {
    return fmt::format("process {} in phase {}: {}", report::read(r, report::process_index).value_or(0),
                       report::read(r, report::process_phase).value_or("start"), report::read(r, report::process_note).value_or(""));
  };
  if (first_failure) {
    failure_code = Code::RuntimeError;
    p.result = range::Result::Failed;
    p.note = named(*first_failure);
  } else if (first_oom) {
    p.result = range::Result::OutOfMemory;
    p.note = named(*first_oom);
    // the bisection's smallest N that ran out
    if (limit.is_null() || n < report::read(limit, report::limit_processes).value_or(INT64_MAX)) {
      const json& r = *first_oom;
      limit = json::object();
      report::put(&limit, report::limit_processes, n);
      report::put(&limit, report::limit_process, report::read(r, report::process_index).value_or(0));
      report::put(&limit, report::limit_phase, report::read(r, report::process_phase).value_or("start"));
      report::put(&limit, report::limit_seconds, report::read(r, report::process_seconds));
      report::put(&limit, report::limit_note, report::read(r, report::process_note));
    }
  } else if (over_budget) {
    p.result = range::Result::OverBudget;
    p.note = "the time budget ran out before every process had finished";
  } else if (p.rss_peak) {
    last_rss_ = p.rss_peak;
  }
  return p;
}

}  // namespace kd
