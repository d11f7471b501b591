// Layer L5's operating range, one point a call: the L4 embeddings workload grown to
// (batch, max_length), one cold and a few warm forward passes, each synchronized. On a GPU
// the caching allocator is capped (range_memory_fraction) so that running out of memory is
// real and cheap; an out-of-memory is caught here, everything released, the cache emptied,
// and the counters read again so that the suite can check the recovery.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty.h>
#include <c10/core/InferenceMode.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "device_ops.h"
#include "machine/memory_headroom.h"
#include "elapsed.h"
#include "embedding_model.h"
#include "probe_app.h"
#include "probe_status.h"
#include "start_line.h"

namespace kd::probe {
namespace {

// "Tried to allocate 2.00 GiB": the allocation that failed, as every LibTorch since 1.x words it.
uint64_t requested_bytes(const std::string& message) {
  static const std::regex kTried(R"(Tried to allocate ([0-9.]+) ?(bytes|B|KiB|MiB|GiB|TiB))");
  std::smatch m;
  if (!std::regex_search(message, m, kTried)) return 0;
  const std::string unit = m[2];
  const int shift = unit == "KiB" ? 10 : unit == "MiB" ? 20 : unit == "GiB" ? 30 : unit == "TiB" ? 40 : 0;
  return static_cast<uint64_t>(std::strtod(m[1].str().c_str(), nullptr) * static_cast<double>(uint64_t(1) << shift));
}

// What this process may still allocate (MemAvailable, within its cgroup's memory limit), else the free pages.
uint64_t available_host_bytes() {
  if (const auto available = machine::available_memory_bytes()) return *available;
  return static_cast<uint64_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

// The cold run, then the warm ones, until done or the budget is spent. Every tensor of the
// point lives in this scope: when it returns or throws, only the model remains.
void run_point(const kd_range_in& in, const embed::EmbeddingModel& model, const at::Device& device,
               std::chrono::steady_clock::time_point t0, kd_range_point* out) {
  const embed::DeviceBatch batch = embed::grown_batch(in.set, in.batch, in.max_length, device);
  for (int r = 0; r <= in.warm_runs; ++r) {
    if (in.set.on_gpu) synchronize_or_throw(in.set.index);
    const auto t = std::chrono::steady_clock::now();
    const at::Tensor v = model.forward(batch.tokens, batch.mask);
    if (in.set.on_gpu) synchronize_or_throw(in.set.index);
    if (r == 0) {
      out->cold_ms = ms_since(t);
    } else {
      out->warm_ms[out->warm++] = ms_since(t);
    }
    if (r < in.warm_runs && ms_since(t0) > in.budget_ms) {
      out->result = KD_RANGE_OVER_BUDGET;
      return;
    }
  }
  if (in.set.on_gpu) out->at_peak = memory_now(in.set.index);  // before the cache is emptied: reserved still held
}

// One execution of the concurrency axis, in its own thread (InferenceMode is per thread); the executions start their
// warm runs together, each waiting on the start line after its cold run.
// Every tensor it makes lives in this scope.
void concurrent_execution(const kd_range_in& in, const embed::EmbeddingModel& model, const at::Device& device,
                          std::chrono::steady_clock::time_point t0, StartLine& line, double* latency_ms, int* runs,
                          bool* over_budget) {
  c10::InferenceMode guard;
  bool arrived = false;
  try {
    const embed::DeviceBatch batch = embed::grown_batch(in.set, in.batch, in.max_length, device);
    for (int r = 0; r <= in.warm_runs; ++r) {
      const auto t = std::chrono::steady_clock::now();
      const at::Tensor v = model.forward(batch.tokens, batch.mask);
      if (in.set.on_gpu) stream_synchronize_or_throw(in.set.index);  // this execution's stream only
      if (r == 0) {
        arrived = true;
        line.arrive_and_wait();
        continue;
      }
      latency_ms[(*runs)++] = ms_since(t);
      if (r < in.warm_runs && ms_since(t0) > in.budget_ms) {
        *over_budget = true;
        return;
      }
    }
  } catch (...) {
    if (!arrived) line.leave();
    throw;
  }
}

}  // namespace

kd_status range_memory_fraction(int index, double fraction) {
  return guarded([&] {
    if (!(fraction > 0 && fraction <= 1)) throw std::invalid_argument("range_memory_fraction: not in (0, 1]");
    memory_set_fraction(index, fraction);
  });
}

kd_status range_point(const kd_range_in* in, kd_range_point* out) {
  return guarded([&] {
    *out = kd_range_point{};
    if (in->batch < 1 || in->max_length < 1 || in->warm_runs < 1 || in->warm_runs > KD_RANGE_MAX_WARM || in->set.count < 1 || in->set.count > KD_APP_MAX_ITEMS)
      throw std::invalid_argument("range_point: bad input set, batch, max_length or warm_runs");
    const auto t0 = std::chrono::steady_clock::now();
    const at::Device device = embed::target(in->set.on_gpu, in->set.index);
    out->estimated_bytes = embed::grown_batch_bytes(in->batch, in->max_length);
    if (!in->set.on_gpu && static_cast<double>(out->estimated_bytes) > in->host_fraction * static_cast<double>(available_host_bytes())) {
      out->result = KD_RANGE_OVER_HOST_MEMORY;  // never try to exhaust the host's memory
      return;
    }
    c10::InferenceMode guard;
    embed::EmbeddingModel model(device);
    model.training = false;
    if (in->set.on_gpu) {
      synchronize_or_throw(in->set.index);
      out->counters = 1;
      out->baseline = memory_now(in->set.index);  // the model is allocated: the counters exist
      memory_reset_peak(in->set.index);
    }
    try {
      run_point(*in, model, device, t0, out);
    } catch (const c10::Error& e) {
      const std::string m = e.what_without_backtrace();
      if (!looks_like_oom(m)) throw;
      out->result = KD_RANGE_OUT_OF_MEMORY;
      copy_to(out->message, sizeof out->message, summary_line(m));
      out->requested_bytes = requested_bytes(m);
      if (in->set.on_gpu) out->at_oom = memory_now(in->set.index);
      if (in->fault == KD_FAULT_RANGE_LEAK) {  // test-only: what a reference kept by mistake does to the recovery
        static std::vector<at::Tensor> kept;
        kept.push_back(at::empty({int64_t(1) << 20}, at::TensorOptions().dtype(at::kFloat).device(device)));
      }
    } catch (const std::bad_alloc& e) {
      out->result = KD_RANGE_OUT_OF_MEMORY;
      copy_to(out->message, sizeof out->message, e.what());
    }
    if (in->set.on_gpu) {  // the recovery: the point's tensors are gone; give the cache back and look
      synchronize_or_throw(in->set.index);
      memory_empty_cache();
      out->after = memory_now(in->set.index);
    }
  });
}

kd_status range_concurrent(const kd_range_in* in, int executions, kd_range_concurrent_out* out) {
  return guarded([&] {
    *out = kd_range_concurrent_out{};
    if (executions < 1 || executions > KD_RANGE_MAX_EXECUTIONS || in->batch < 1 || in->max_length < 1 || in->warm_runs < 1 ||
        in->warm_runs > KD_RANGE_MAX_WARM || in->set.count < 1 || in->set.count > KD_APP_MAX_ITEMS)
      throw std::invalid_argument("range_concurrent: bad executions, batch, max_length, warm_runs or input set");
    const auto t0 = std::chrono::steady_clock::now();
    const at::Device device = embed::target(in->set.on_gpu, in->set.index);
    kd_range_point& p = out->point;
    p.estimated_bytes = embed::grown_batch_bytes(in->batch, in->max_length) * static_cast<uint64_t>(executions);
    if (!in->set.on_gpu && static_cast<double>(p.estimated_bytes) > in->host_fraction * static_cast<double>(available_host_bytes())) {
      p.result = KD_RANGE_OVER_HOST_MEMORY;
      return;
    }
    c10::InferenceMode guard;
    embed::EmbeddingModel model(device);  // shared, read only, as a serving process shares its weights
    model.training = false;
    if (in->set.on_gpu) {
      synchronize_or_throw(in->set.index);
      memory_release_blas_workspaces();  // earlier products' workspaces: the baseline and the recovery read alike
      p.counters = 1;
      p.baseline = memory_now(in->set.index);
      memory_reset_peak(in->set.index);
    }
    StartLine line(executions);
    std::vector<std::vector<double>> latencies(executions, std::vector<double>(in->warm_runs));
    std::vector<int> runs(executions, 0);
    std::vector<char> over(executions, 0);
    std::vector<std::string> oom(executions), error(executions);
    std::vector<std::thread> threads;
    for (int e = 0; e < executions; ++e)
      threads.emplace_back([&, e] {
        auto run = [&] {
          bool over_budget = false;
          concurrent_execution(*in, model, device, t0, line, latencies[e].data(), &runs[e], &over_budget);
          over[e] = over_budget;
        };
        try {
          if (in->set.on_gpu) {
            on_pool_stream(in->set.index, run);
          } else {
            run();
          }
        } catch (const c10::Error& x) {
          const std::string m = x.what_without_backtrace();
          (looks_like_oom(m) ? oom : error)[e] = summary_line(m);
        } catch (const std::bad_alloc& x) {
          oom[e] = x.what();
        } catch (const std::exception& x) {
          error[e] = x.what();
        }
      });
    for (auto& t : threads) t.join();
    out->wall_ms = ms_since(line.t0());
    for (int e = 0; e < executions; ++e) {
      for (int r = 0; r < runs[e]; ++r) out->latency_ms[out->runs++] = latencies[e][r];
      if (over[e]) p.result = KD_RANGE_OVER_BUDGET;
    }
    for (int e = 0; e < executions; ++e)
      if (!error[e].empty()) throw std::runtime_error("execution " + std::to_string(e) + ": " + error[e]);
    for (int e = 0; e < executions; ++e)
      if (!oom[e].empty()) {
        p.result = KD_RANGE_OUT_OF_MEMORY;
        copy_to(p.message, sizeof p.message, "execution " + std::to_string(e) + ": " + oom[e]);
        p.requested_bytes = requested_bytes(oom[e]);
        if (in->set.on_gpu) p.at_oom = memory_now(in->set.index);
        break;
      }
    if (in->set.on_gpu) {
      if (p.result != KD_RANGE_OUT_OF_MEMORY) p.at_peak = memory_now(in->set.index);
      synchronize_or_throw(in->set.index);
      memory_release_blas_workspaces();  // the pool streams' own: not the point's tensors
      memory_empty_cache();
      p.after = memory_now(in->set.index);
    }
  });
}

}  // namespace kd::probe
