#include "range_job.h"

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures/embeddings_input.h"
#include "fixtures/probe_loader.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kWarmRuns = 3;
constexpr int64_t kBatch = 8, kMaxLength = 64;  // the fixed L4 workload, as on the concurrency axis

void say(const json& line) {
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
}

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

int run_range_job(const Options& options) {
  const auto t0 = std::chrono::steady_clock::now();
  json result = {{"result", "failed"}, {"phase", "load"}, {"seconds", nullptr}, {"warm_median_ms", nullptr},
                 {"cold_ms", nullptr}, {"rss_peak_bytes", nullptr}, {"device_peak_bytes", nullptr},
                 {"device_reserved_bytes", nullptr}, {"note", nullptr}};
  auto finish = [&](int code) {
    result["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result["rss_peak_bytes"] = rss_peak_bytes();
    say(result);
    return code;
  };
  auto failed = [&](const std::string& note, int code) {
    result["note"] = note;
    return finish(code);
  };
  say({{"phase", "load"}});
  const bool gpu = !options.cpu_mode();
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return failed(probe.message, 1);
  if (gpu) {
    const kd_status s = probe.probe->range_memory_fraction(options.device_index, *options.range_job_share);
    if (s.kind != KD_OK) return failed(s.message, s.kind == KD_ERR_OUT_OF_MEMORY ? 9 : 1);
  }
  say({{"phase", "workload"}});
  result["phase"] = "model";  // until the point's runs start: the model and the batch are being built
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
    result["result"] = s.kind == KD_ERR_OUT_OF_MEMORY ? "out_of_memory" : "failed";
    return failed(s.message, s.kind == KD_ERR_OUT_OF_MEMORY ? 9 : 1);
  }
  result["phase"] = "compute";
  if (out->cold_ms > 0) result["cold_ms"] = out->cold_ms;
  if (out->warm > 0) result["warm_median_ms"] = perf::median(std::vector<double>(out->warm_ms, out->warm_ms + out->warm));
  if (out->counters) {
    const kd_memory_counters& held = out->result == KD_RANGE_OUT_OF_MEMORY ? out->at_oom : out->at_peak;
    result["device_peak_bytes"] = held.peak_allocated;
    result["device_reserved_bytes"] = held.reserved;
    result["device_total_bytes"] = out->baseline.device_total;
  }
  if (out->result == KD_RANGE_OUT_OF_MEMORY) {
    result["result"] = "out_of_memory";
    return failed(out->message, 9);
  }
  result["result"] = "passed";
  return finish(0);
}

}  // namespace kd
