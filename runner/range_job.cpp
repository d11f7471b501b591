#include "range_job.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "contract/events.h"
#include "contract/run_plan.h"
#include "contract/report_parts.h"
#include "fixtures/child_process.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/probe_loader.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kWarmRuns = 3;
constexpr int64_t kBatch = 8, kMaxLength = 64;  // the fixed L4 workload, as on the concurrency axis

// The process' peak resident memory (VmHWM), in bytes; 0 when the kernel does not say.
uint64_t rss_peak_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    uint64_t kib = 0;
    if (key == "VmHWM:" && status >> kib) return kib * 1024;
    status.ignore(1 << 12, '\n');
  }
  return 0;
}

}  // namespace

int run_range_job(const Plan& plan) {
  speak_as_job();
  const Options& options = plan.options;
  const auto t0 = std::chrono::steady_clock::now();
  // The record the step copies into the report's point (its process and exit are the step's to add).
  json result;
  report::put(&result, report::process_result, "failed");
  report::put(&result, report::process_phase, "load");
  for (const auto& row : {report::process_seconds, report::process_warm_median_ms, report::process_cold_ms})
    report::put(&result, row, std::nullopt);
  for (const auto& row : {report::process_rss_peak_bytes, report::process_device_peak_bytes, report::process_device_reserved_bytes})
    report::put(&result, row, std::nullopt);
  report::put(&result, report::process_note, std::nullopt);
  auto finish = [&](int code) {
    report::put(&result, report::process_seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    report::put(&result, report::process_rss_peak_bytes, rss_peak_bytes());
    events::emit(events::ProcessRecord{result});
    return code;
  };
  auto failed = [&](const std::string& note, int code) {
    report::put(&result, report::process_note, note);
    return finish(code);
  };
  auto phase = [](const char* name) { events::stage(name); };  // progress: the phase it is in now
  phase("load");
  const bool gpu = !options.cpu_mode();
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return failed(probe.message, 1);
  if (gpu) {
    const kd_status s = probe.probe->range_memory_fraction(options.device_index, plan.role.allocator_share);
    if (s.kind != KD_OK) return failed(s.message, s.kind == KD_ERR_OUT_OF_MEMORY ? 9 : 1);
  }
  phase("workload");
  report::put(&result, report::process_phase, "model");  // until the point's runs start: the model and the batch are being built
  kd_range_in in{};
  in.set = embeddings_input(gpu, options.device_index);
  in.batch = kBatch;
  in.max_length = kMaxLength;
  in.warm_runs = kWarmRuns;
  in.budget_ms = 1e9;  // the sweep ends this process when its time is up
  in.host_fraction = 1;
  auto out = std::make_unique<kd_range_point>();
  const kd_status s = probe.probe->range_point(&in, out.get());
  if (s.kind != KD_OK) {
    report::put(&result, report::process_result, s.kind == KD_ERR_OUT_OF_MEMORY ? "out_of_memory" : "failed");
    return failed(s.message, s.kind == KD_ERR_OUT_OF_MEMORY ? 9 : 1);
  }
  report::put(&result, report::process_phase, "compute");
  if (out->cold_ms > 0) report::put(&result, report::process_cold_ms, out->cold_ms);
  if (out->warm > 0)
    report::put(&result, report::process_warm_median_ms, perf::median(std::vector<double>(out->warm_ms, out->warm_ms + out->warm)));
  if (out->counters) {
    const kd_memory_counters& held = out->result == KD_RANGE_OUT_OF_MEMORY ? out->at_oom : out->at_peak;
    report::put(&result, report::process_device_peak_bytes, held.peak_allocated);
    report::put(&result, report::process_device_reserved_bytes, held.reserved);
    report::put(&result, report::process_device_total_bytes, out->baseline.device_total);
  }
  if (out->result == KD_RANGE_OUT_OF_MEMORY) {
    report::put(&result, report::process_result, "out_of_memory");
    return failed(out->message, 9);
  }
  report::put(&result, report::process_result, "passed");
  return finish(0);
}

}  // namespace kd
