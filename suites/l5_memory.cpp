// L5 memory: the L4 embeddings workload, scaled up (a 64 MiB token table, inputs 256 times
// longer) and run with gradients on through named steps — baseline, load, first compute,
// N iterations, emptyCache — with the caching allocator's allocated, reserved and peak bytes
// after each. Says which phase runs out of memory (code 9, stage L5.oom.<phase>), that
// emptyCache returns cached memory but not referenced memory, and whether allocated memory
// grows across iterations (code 15). Off in a plain run; --layers L5 or --full. Facts: /memory.
#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/gpu_watch.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "contract/events.h"
#include "verdict/gpu_sharing.h"
#include "verdict/memory_checks.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int64_t kVocab = int64_t(1) << 19;  // 2^19 x 32 float32: 64 MiB of weights
constexpr int kLengthScale = 256;             // L4's lengths (up to 64) x 256: up to 16384 tokens
constexpr int kIterations = 20;
constexpr double kGrowthTolerance = 64 * 1024;  // bytes per iteration; a clean loop stays exactly flat
constexpr const char* kStepNames[KD_MEM_STEPS] = {"baseline", "after_load", "after_first_compute", "after_iterations",
                                                  "after_empty_cache"};
constexpr const char* kPhaseNames[KD_MEM_STEPS] = {"baseline", "load", "first_compute", "iterations", "empty_cache"};

kd_memory_in workload_input(const WorkerContext& ctx) {
  kd_memory_in in{};
  in.input = embeddings_input(!ctx.cpu_mode(), ctx.device_index());
  for (int i = 0; i < in.input.count; ++i) in.input.lengths[i] *= kLengthScale;
  in.input.batch_size = in.input.count;  // one batch of [8, 16384] tokens: 16 MiB per float32 activation
  in.vocab = kVocab;
  in.iterations = kIterations;
  in.leak = ctx.fault("leak");
  in.fraction = ctx.options.memory_fraction.value_or(0);
  return in;
}

// L5.phases runs the workload once; the later steps judge what it recorded.
struct WorkloadRun {
  kd_status status{};
  kd_memory_out out{};
};
WorkloadRun& workload() {
  static WorkloadRun r;
  return r;
}

json step_json(const char* name, const kd_memory_counters& c) {
  json step = json::object();
  report::put(&step, report::step_name, name);
  report::put(&step, report::step_allocated_bytes, c.allocated);
  report::put(&step, report::step_reserved_bytes, c.reserved);
  report::put(&step, report::step_peak_allocated_bytes, c.peak_allocated);
  report::put(&step, report::step_device_free_bytes, c.device_free);
  report::put(&step, report::step_device_total_bytes, c.device_total);
  return step;
}

std::string bytes(uint64_t b) { return memory::bytes_text(static_cast<double>(b)); }

// The probe is in a named step: a timeout or crash there names it.
void step_started(void*, const char* name) { events::stage(std::string("L5.phases.") + name); }

// With other processes on the GPU, the workload's allocator is capped at what is free for it (sharing::budget),
// and never above --memory-fraction: it must not take memory another process then needs. The fraction of the
// device's total the allocator takes; 0: no cap (the GPU to itself, and no --memory-fraction).
double shared_cap(const GpuWatch& watch, double asked) {
  const std::optional<DeviceMemory>& m = watch.memory();
  if (!m || m->total == 0 || sharing::others(watch.before()) == 0) return asked;
  const sharing::Budget b = sharing::budget(m->free, sharing::kStepShare, watch.before());
  const double kept_to_itself = static_cast<double>(m->reserved + b.bytes) / static_cast<double>(m->total);
  return std::clamp(asked > 0 ? std::min(asked, kept_to_itself) : kept_to_itself, 1e-6, 1.0);
}

Outcome out_of_memory(const WorkerContext& ctx, const kd_memory_in& in, const WorkloadRun& r) {
  const kd_memory_out& o = r.out;
  memory::OomEvent e;
  e.phase = kPhaseNames[o.failed_step];
  e.requested = memory::requested_bytes(r.status.message);
  e.device_numbers = o.counters != 0;
  e.device_free = o.at_failure.device_free;
  e.device_total = o.at_failure.device_total;
  e.reserved = o.at_failure.reserved;
  e.allocated = o.at_failure.allocated;
  if (in.fraction > 0) e.fraction = in.fraction;
  const memory::OomVerdict v = memory::classify_oom(e);
  auto number = [&](uint64_t x) { return e.device_numbers ? std::optional(x) : std::nullopt; };
  json oom = json::object();
  report::put(&oom, report::oom_phase, e.phase);
  report::put(&oom, report::oom_requested_bytes, e.requested);
  report::put(&oom, report::oom_device_free_bytes, number(e.device_free));
  report::put(&oom, report::oom_device_total_bytes, number(e.device_total));
  report::put(&oom, report::oom_reserved_bytes, number(e.reserved));
  report::put(&oom, report::oom_allocated_bytes, number(e.allocated));
  report::put(&oom, report::oom_held_by_others_bytes, number(memory::held_by_others(e)));
  report::put(&oom, report::oom_fraction, e.fraction);
  ctx.fact(report::memory_oom, oom);
  return Outcome::fail_at(Code::OutOfMemory, v.stage, v.message);
}

constexpr const char* kNotOnCpu = "not supported on CPU: ";

}  // namespace


Outcome l5_phases(WorkerContext& ctx) {
  kd_memory_in in = workload_input(ctx);
  const double asked = in.fraction;
  std::optional<GpuWatch> watch;
  if (!ctx.cpu_mode()) {
    watch.emplace(ctx, std::vector<int>{ctx.device_index()});
    in.fraction = shared_cap(*watch, asked);
  }
  WorkloadRun& r = workload();
  r.status = ctx.probe->memory_workload(&in, &r.out, step_started, nullptr);
  const kd_memory_out& o = r.out;
  ctx.fact(report::memory_device, ctx.cpu_mode() ? std::string("cpu") : fmt::format("cuda:{}", ctx.device_index()));
  ctx.fact(report::memory_workload, o.desc);
  ctx.fact(report::memory_fraction, asked > 0 ? std::optional(asked) : std::nullopt);
  const std::optional<sharing::Seen> during = watch ? std::optional(watch->during()) : std::nullopt;
  if (watch) record_sharing(ctx, "L5.phases", watch->before(), *during, "none");
  ctx.fact(report::memory_weights_bytes, o.weights_bytes);
  ctx.fact(report::memory_activation_bytes, o.activation_bytes);
  json steps = json::array();
  for (int s = 0; s < o.steps_done && o.counters; ++s) steps.push_back(step_json(kStepNames[s], o.at[s]));
  ctx.fact(report::memory_steps, o.counters ? steps : json());
  json iterations = json::object();
  report::put(&iterations, report::iterations_n, o.iterations_done);
  report::put(&iterations, report::iterations_allocated_bytes,
              o.counters ? json(std::vector<uint64_t>(o.iteration_allocated, o.iteration_allocated + o.iterations_done)) : json());
  report::put(&iterations, report::iterations_leak_injected, in.leak != 0);
  ctx.fact(report::memory_iterations, iterations);
  if (r.status.kind == KD_ERR_OUT_OF_MEMORY && o.failed_step >= 0 && o.failed_step < KD_MEM_STEPS) {
    const Outcome oom = out_of_memory(ctx, in, r);
    // Other processes held the memory it needed (or this run kept their share free): a shared GPU, not the workload.
    if (during && (sharing::others(watch->before()) > 0 || sharing::judge(*during).contended)) {
      const std::string who = sharing::describe(*during);
      return Outcome::not_applicable(fmt::format("other processes hold the GPU's memory ({}): the workload ran out of the "
                                                 "memory left to this run in phase {}",
                                                 who.empty() ? sharing::describe(watch->before()) : who, kPhaseNames[o.failed_step]));
    }
    return oom;
  }
  if (r.status.kind != KD_OK) return backend_failure(r.status);
  return Outcome::pass();
}

Outcome l5_steps(WorkerContext& ctx) {
  if (ctx.cpu_mode())
    return Outcome::not_applicable(std::string(kNotOnCpu) + "allocated, reserved and peak are the CUDA caching allocator's counters");
  const kd_memory_out& o = workload().out;
  const kd_memory_counters* a = o.at;
  std::vector<std::string> wrong;
  for (int s = 0; s < KD_MEM_STEPS; ++s) {
    if (a[s].allocated > a[s].reserved)
      wrong.push_back(fmt::format("{}: allocated {} above reserved {}", kStepNames[s], bytes(a[s].allocated), bytes(a[s].reserved)));
    if (a[s].peak_allocated < a[s].allocated)
      wrong.push_back(fmt::format("{}: peak {} below allocated {}", kStepNames[s], bytes(a[s].peak_allocated), bytes(a[s].allocated)));
  }
  if (a[KD_MEM_LOAD].allocated < a[KD_MEM_BASELINE].allocated + o.weights_bytes)
    wrong.push_back(fmt::format("after_load: allocated {} is less than the baseline {} plus the weights {}",
                                bytes(a[KD_MEM_LOAD].allocated), bytes(a[KD_MEM_BASELINE].allocated), bytes(o.weights_bytes)));
  if (a[KD_MEM_FIRST_COMPUTE].peak_allocated < a[KD_MEM_LOAD].allocated + o.activation_bytes)
    wrong.push_back(fmt::format("after_first_compute: peak {} is less than the weights plus one activation ({} + {})",
                                bytes(a[KD_MEM_FIRST_COMPUTE].peak_allocated), bytes(a[KD_MEM_LOAD].allocated),
                                bytes(o.activation_bytes)));
  if (!wrong.empty())
    return Outcome::fail(Code::MemoryCheckFailed, "the allocator's counters disagree with what the workload held: " + wrong[0]);
  return Outcome::pass();
}

Outcome l5_empty_cache(WorkerContext& ctx) {
  if (ctx.cpu_mode()) return Outcome::not_applicable(std::string(kNotOnCpu) + "emptyCache belongs to the CUDA caching allocator");
  const kd_memory_out& o = workload().out;
  const kd_memory_counters &before = o.at[KD_MEM_ITERATIONS], &after = o.at[KD_MEM_EMPTY_CACHE];
  const uint64_t cached = before.reserved - before.allocated;
  const uint64_t returned = before.reserved > after.reserved ? before.reserved - after.reserved : 0;
  json empty = json::object();
  report::put(&empty, report::empty_cache_cached_before_bytes, cached);
  report::put(&empty, report::empty_cache_returned_bytes, returned);
  report::put(&empty, report::empty_cache_allocated_before_bytes, before.allocated);
  report::put(&empty, report::empty_cache_allocated_after_bytes, after.allocated);
  report::put(&empty, report::empty_cache_referenced_intact, o.referenced_intact != 0);
  ctx.fact(report::memory_empty_cache, empty);
  if (after.allocated != before.allocated)
    return Outcome::fail(Code::MemoryCheckFailed, fmt::format("emptyCache changed allocated memory from {} to {}: memory "
                                                              "still referenced must stay", bytes(before.allocated), bytes(after.allocated)));
  if (!o.referenced_intact)
    return Outcome::fail(Code::MemoryCheckFailed, "after emptyCache the weights no longer compute the first compute's vectors");
  if (cached == 0 || 2 * returned < cached)
    return Outcome::fail(Code::MemoryCheckFailed, fmt::format("emptyCache returned {} of the {} cached (reserved but not "
                                                              "allocated) after the iterations", bytes(returned), bytes(cached)));
  return Outcome::pass();
}

Outcome l5_growth(WorkerContext& ctx) {
  if (ctx.cpu_mode())
    return Outcome::not_applicable(std::string(kNotOnCpu) + "growth is read from the CUDA caching allocator's allocated counter");
  const kd_memory_out& o = workload().out;
  const memory::Growth g = memory::judge_growth(
      std::vector<uint64_t>(o.iteration_allocated, o.iteration_allocated + o.iterations_done), kGrowthTolerance);
  ctx.fact(report::memory_growth_per_iteration_bytes, g.per_iteration);
  ctx.fact(report::memory_growth_tolerance_bytes, kGrowthTolerance);
  return g.beyond ? Outcome::fail(Code::MemoryCheckFailed, g.message) : Outcome::pass();
}

}  // namespace kd
