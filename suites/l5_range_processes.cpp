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
#include "verdict/json_read.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int64_t kMaxProcesses = 64;

// What the kernel says could be allocated without swapping (MemAvailable); 0 when it does not say.
uint64_t available_host_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

// The process' last JSON line with a result, or its last phase when it ended without one.
json read_record(const std::string& log) {
  std::ifstream in(log);
  std::string line;
  json record = {{"result", nullptr}, {"phase", "start"}};
  while (std::getline(in, line)) {
    const json j = json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    if (j.contains("result")) {
      record = j;
    } else if (j.contains("phase") && record["result"].is_null()) {
      record["phase"] = j["phase"];
    }
  }
  return record;
}

}  // namespace

ProcessesAxis::ProcessesAxis(WorkerContext& ctx, bool gpu, std::string folder, double host_fraction)
    : ctx_(ctx), gpu_(gpu), folder_(std::move(folder)), host_fraction_(host_fraction) {}

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
  const double share = gpu_ ? ctx_.options.range_memory_fraction / static_cast<double>(n) : 1.0;
  std::vector<pid_t> pids;
  for (int64_t i = 0; i < n; ++i) {
    Options plan;
    plan.range_job_share = share;
    plan.device = ctx_.options.device;
    plan.device_index = ctx_.device_index();
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
    json r = pids[i] > 0 ? read_record(fmt::format("{}/process-{}-{}.log", folder_, n, i))
                         : json{{"result", nullptr}, {"phase", "start"}, {"note", "the process could not be started"}};
    r["process"] = i;
    r["exit"] = pids[i] > 0 ? json(how_it_ended(status[i])) : json();
    if (r["result"].is_null()) {
      // Ended without its result: by the sweep's budget, or killed from outside (as the kernel's
      // out-of-memory killer does, with SIGKILL), or it crashed.
      const bool killed = pids[i] > 0 && WIFSIGNALED(status[i]) && WTERMSIG(status[i]) == SIGKILL;
      r["result"] = over_budget ? "time_budget" : killed ? "out_of_memory" : "failed";
      if (!r.contains("note") || r["note"].is_null())
        r["note"] = fmt::format("ended in phase {} without a result ({})", r["phase"].get<std::string>(), r["exit"].get<std::string>());
    }
    const std::string result = r["result"];
    if (result == "passed") {
      if (auto w = json_read::number(r, "warm_median_ms")) warm.push_back(*w);
      if (auto c = json_read::number(r, "cold_ms")) cold.push_back(*c);
    }
    if (auto rss = json_read::count(r, "rss_peak_bytes")) p.rss_peak = std::max(p.rss_peak.value_or(0), *rss);
    if (auto d = json_read::count(r, "device_peak_bytes")) p.peak_allocated = std::max(p.peak_allocated.value_or(0), *d);
    if (auto d = json_read::count(r, "device_reserved_bytes")) p.reserved = std::max(p.reserved.value_or(0), *d);
    if (auto d = json_read::count(r, "device_total_bytes")) device_total = *d;
    // The first to run out: the one that got there soonest by its own clock.
    auto sooner = [&](const std::optional<json>& have) {
      return !have || json_read::number(r, "seconds").value_or(1e300) < json_read::number(*have, "seconds").value_or(1e300);
    };
    if (result == "out_of_memory" && sooner(first_oom)) first_oom = r;
    if (result == "failed" && sooner(first_failure)) first_failure = r;
    records.push_back(r);
  }
  processes[std::to_string(n)] = records;
  if (!warm.empty()) p.warm_median_ms = perf::median(warm);
  if (!cold.empty()) p.cold_ms = perf::median(cold);
  auto named = [](const json& r) {
    return fmt::format("process {} in phase {}: {}", r["process"].get<size_t>(), r["phase"].get<std::string>(),
                       r["note"].is_string() ? r["note"].get<std::string>() : "");
  };
  if (first_failure) {
    failure_code = Code::RuntimeError;
    p.result = range::Result::Failed;
    p.note = named(*first_failure);
  } else if (first_oom) {
    p.result = range::Result::OutOfMemory;
    p.note = named(*first_oom);
    if (limit.is_null() || n < limit["processes"].get<int64_t>()) {  // the bisection's smallest N that ran out
      const json& r = *first_oom;
      limit = json::object();
      report::put(&limit, report::limit_processes, n);
      report::put(&limit, report::limit_process, r["process"].get<int64_t>());
      report::put(&limit, report::limit_phase, r["phase"].get<std::string>());
      report::put(&limit, report::limit_seconds, json_read::number(r, "seconds"));
      report::put(&limit, report::limit_note, r["note"].is_string() ? std::optional(r["note"].get<std::string>()) : std::nullopt);
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
