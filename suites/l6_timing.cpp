// L6 timing: the L4 embeddings workload timed properly (three segments, the cold run
// apart), then the device's ceilings — copy bandwidth and large matrix products — against
// its datasheet figures (verdict/device_ceilings). Off in a plain run; --layers L6 or --full.
// Facts go under /timing.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "contract/events.h"
#include "contract/report_parts.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/gpu_watch.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/target_gpu.h"
#include "verdict/device_ceilings.h"
#include "verdict/floors.h"
#include "verdict/gpu_health.h"
#include "verdict/gpu_sharing.h"
#include "verdict/memory_checks.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kTimingWarmRuns = 20;
// The ceilings' device memory (probe/probe_ceilings_cuda.cpp): the copy's two buffers of 1 GiB each, smaller when
// less is free for them but never under 256 MiB (still five times an H200's L2 cache); the products' three
// 8192 x 8192 matrices and cuBLAS's workspace.
constexpr int64_t kCeilingCopyBytes = int64_t(1) << 30, kMinCeilingCopyBytes = int64_t(256) << 20;
constexpr int64_t kMatmulElements = int64_t(8192) * 8192, kBlasWorkspace = int64_t(64) << 20;

// The median and the p95 of n runs, at a pair of rows (their place in the segments).
void put_stat(json* segments, const report::Field<double>& median, const report::Field<double>& p95, const double* runs, int n) {
  const std::vector<double> v(runs, runs + n);
  report::put(segments, median, perf::round3(perf::median(v)));
  report::put(segments, p95, perf::round3(perf::p95(v)));
}

struct Ceiling {
  int kind;
  const char* key;        // under /timing/ceilings
  const char* what;       // in the message
  const char* stage;      // the step's (its watch's key under /sharing/measurements)
  const char* floor_key;  // its floor in a --floors file (verdict/floors.h)
};

// The reference for one ceiling, or nullopt (unknown device, or a figure we are not sure of).
std::optional<double> reference_for(const std::optional<DeviceCeilings>& dev, int kind) {
  if (!dev) return std::nullopt;
  switch (kind) {
    case KD_CEILING_COPY: return dev->memory_tb_s;
    case KD_CEILING_MATMUL_BF16: return dev->bf16_tflops;
    case KD_CEILING_MATMUL_FP32: return dev->fp32_tflops;
    default: return dev->tf32_tflops;
  }
}

// What NVML shows holding this GPU back (PCIe link, slowdown reasons, low clocks), as the
// shortfall's likely cause; "" when it shows nothing or cannot be asked.
std::string likely_causes(const WorkerContext& ctx, const kd_device_props& props) {
  const TargetGpu gpu = target_gpu(ctx, props, Facts::Now);
  if (!gpu.facts) return "";
  const GpuHealth h = judge_gpu_health(*gpu.facts);
  return h.warnings.empty() ? "" : fmt::format("; likely cause (NVML): {}", fmt::join(h.warnings, "; "));
}

// The memory a ceiling may take of what is free (sharing::budget), when other processes hold some: the copy's size
// each way (0: its own 1 GiB), or why it does not fit. Alone on the GPU it takes what it always did.
struct Sized {
  int64_t copy_bytes = 0;
  std::string too_little;
};
Sized sized(const GpuWatch& watch, int kind, const char* what) {
  Sized z;
  if (!watch.memory() || sharing::others(watch.before()) == 0) return z;
  const sharing::Budget b = sharing::budget(watch.memory()->free, sharing::kStepShare, watch.before());
  const int64_t may = static_cast<int64_t>(b.bytes);
  const int64_t needs = kind == KD_CEILING_COPY ? 2 * kMinCeilingCopyBytes
                                                : 3 * kMatmulElements * (kind == KD_CEILING_MATMUL_BF16 ? 2 : 4) + kBlasWorkspace;
  if (kind == KD_CEILING_COPY) z.copy_bytes = std::min(kCeilingCopyBytes, may / 2 / (int64_t(1) << 20) * (int64_t(1) << 20));
  if (may < needs)
    z.too_little = fmt::format("other processes hold the GPU's memory ({}): the {} needs {}, and this run takes at most {} "
                               "of the {} free ({})", sharing::describe(watch.before()), what,
                               memory::bytes_text(static_cast<double>(needs)), memory::bytes_text(static_cast<double>(may)),
                               memory::bytes_text(static_cast<double>(watch.memory()->free)), b.note);
  return z;
}

// The floor a ceiling is judged against: the --floors file's figure for this device's name, else the option's fraction
// of the datasheet figure, else the default fraction (docs/fleets.md "Floors per SKU").
perf::Floor ceiling_floor(const WorkerContext& ctx, const Ceiling& c, const std::string& device_name) {
  if (const auto absolute = floors::lookup(ctx.role.floors, device_name, c.floor_key))
    return {*absolute, true, "floors_file"};
  const bool copy = c.kind == KD_CEILING_COPY;
  const double fraction = copy ? ctx.options.min_bandwidth_fraction : ctx.options.min_matmul_fraction;
  const double fallback = copy ? kDefaultMinBandwidthFraction : kDefaultMinMatmulFraction;
  return {fraction, false, fraction == fallback ? "default" : "option"};
}

// One measurement of a ceiling, its copy sized as `size` says: the repeats' rates in TB/s or TFLOP/s (both 1e12 per
// second). A failure ends the watch: an out-of-memory beside other processes is theirs, a visible skip. TEST ONLY
// (--inject-fault slow-first-measurement): the first reads 100 times slower, as a throttled card's would.
std::optional<Outcome> measure_once(WorkerContext& ctx, const Ceiling& c, const Sized& size, GpuWatch& watch,
                                    kd_ceiling_out* out, std::vector<double>* rates, bool first) {
  const kd_status s =
      ctx.probe->ceiling(ctx.device_index(), c.kind, size.copy_bytes == kCeilingCopyBytes ? 0 : size.copy_bytes, out);
  if (s.kind != KD_OK) {
    const sharing::Seen during = watch.during();
    record_sharing(ctx, c.stage, watch.before(), during, "none");
    if (s.kind == KD_ERR_OUT_OF_MEMORY && (sharing::judge(during).contended || sharing::others(watch.before()) > 0))
      return Outcome::not_applicable(fmt::format("other processes hold the GPU's memory ({}): the {} ran out of it: {}",
                                                 sharing::describe(during), c.what, s.message));
    return backend_failure(s);
  }
  if (out->repeats < 1) return Outcome::fail(Code::RuntimeError, "the probe timed no repeat");
  const double slowed = first && ctx.fault("slow-first-measurement") ? 100 : 1;
  rates->clear();
  for (int i = 0; i < out->repeats; ++i) rates->push_back(out->work / out->seconds[i] / 1e12 / slowed);
  return std::nullopt;
}

Outcome measure(WorkerContext& ctx, const Ceiling& c) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("not supported on CPU: the device ceilings are GPU measurements");
  kd_device_props props{};
  kd_status s = ctx.probe->device_props(ctx.device_index(), &props);
  if (s.kind != KD_OK) return backend_failure(s);
  const std::optional<DeviceCeilings> dev = find_ceilings(props.name);
  ctx.fact(report::timing_reference_device, dev ? std::optional<std::string>(dev->key) : std::nullopt);
  GpuWatch watch(ctx, {ctx.device_index()});
  const Sized size = sized(watch, c.kind, c.what);
  if (!size.too_little.empty()) {
    record_sharing(ctx, c.stage, watch.before(), watch.before(), "none");
    return Outcome::not_applicable(size.too_little);
  }
  auto out = std::make_unique<kd_ceiling_out>();
  const bool copy = c.kind == KD_CEILING_COPY;
  const perf::Floor floor = ceiling_floor(ctx, c, props.name);
  const std::string unit = copy ? "TB/s" : "TFLOP/s";
  const std::optional<double> ref = reference_for(dev, c.kind);
  // A ceiling below its floor is measured once more before it fails; the report keeps both measurements.
  std::vector<double> rates, measurements;
  perf::Judged j;
  for (int attempt = 0; attempt < 2 && (attempt == 0 || j.below_floor); ++attempt) {
    if (auto failed = measure_once(ctx, c, size, watch, out.get(), &rates, attempt == 0)) return *failed;
    measurements.push_back(perf::round3(perf::median(rates)));
    j = perf::judge(c.what, perf::median(rates), ref, floor, unit,
                    floor.absolute ? std::string(props.name) : dev ? std::string(dev->key) : "device");
  }
  if (measurements.size() > 1 && !j.below_floor)
    events::warning(fmt::format("L6 {}: the first measurement {} {} was below its floor; the second {} {} was not",
                                c.what, measurements[0], unit, measurements[1], unit));
  const double measured = perf::median(rates);
  const sharing::Seen during = watch.during();  // every measurement of it
  const sharing::Contention shared = sharing::judge(during);
  json ceiling = json::object();
  report::put(&ceiling, report::ceiling_workload, out->desc);
  report::put(&ceiling, report::ceiling_measured, perf::round3(measured));
  report::put(&ceiling, report::ceiling_unit, unit);
  report::put(&ceiling, report::ceiling_reference, ref);
  report::put(&ceiling, report::ceiling_fraction, j.fraction ? std::optional(perf::round3(*j.fraction)) : std::nullopt);
  report::put(&ceiling, report::ceiling_floor, floor.value);
  report::put(&ceiling, report::ceiling_repeats, out->repeats);
  report::put(&ceiling, report::ceiling_min, perf::round3(*std::min_element(rates.begin(), rates.end())));
  report::put(&ceiling, report::ceiling_max, perf::round3(*std::max_element(rates.begin(), rates.end())));
  report::put(&ceiling, report::ceiling_floor_kind, floor.absolute ? "absolute" : "fraction");
  report::put(&ceiling, report::ceiling_floor_source, floor.source);
  report::put(&ceiling, report::ceiling_below_floor, j.below_floor);
  report::put(&ceiling, report::ceiling_measurements, measurements);
  ctx.fact(report::timing_ceilings, c.key, ceiling);
  if (!j.fraction && !floor.absolute) {  // no reference figure and no --floors figure: nothing to judge
    record_sharing(ctx, c.stage, watch.before(), during, "none");
    return Outcome::pass();
  }
  const sharing::Floor checked = sharing::floor_check(shared, ctx.options.judge_shared_gpu, j.message);
  if (checked.outcome == sharing::Floor::Outcome::NotJudged) {
    record_sharing(ctx, c.stage, watch.before(), during, "not_applied");
    return Outcome::not_applicable(checked.message);
  }
  record_sharing(ctx, c.stage, watch.before(), during, "applied");
  if (!j.below_floor) return Outcome::pass();
  const std::string others = shared.contended ? "; other processes used the GPU during the measurement: " + shared.what : "";
  return Outcome::fail(Code::PerformanceBelowFloor,
                       fmt::format("{} (measured twice: {} then {} {}){}{}", j.message, measurements[0], measurements[1],
                                   unit, others, likely_causes(ctx, props)));
}

}  // namespace


Outcome l6_segments(WorkerContext& ctx) {
  const kd_app_embed_in in = embeddings_input(!ctx.cpu_mode(), ctx.device_index());
  auto out = std::make_unique<kd_timing_out>();
  std::optional<GpuWatch> watch;  // the segments have no floor: who else was there is recorded with them
  if (watches_gpu(ctx)) watch.emplace(ctx, std::vector<int>{ctx.device_index()});
  const kd_status s = ctx.probe->timing_segments(&in, 1 + kTimingWarmRuns, out.get());
  if (watch) record_sharing(ctx, "L6.segments", watch->before(), watch->during(), "none");
  if (s.kind != KD_OK) return backend_failure(s);
  const int warm = out->runs - 1;
  const double* w_events = out->compute_event_ms + 1;
  const bool events = !ctx.cpu_mode();
  json seg = json::object();
  report::put(&seg, report::segments_workload, out->desc);
  report::put(&seg, report::segments_load_ms, perf::round3(out->load_ms));
  report::put(&seg, report::segments_cold_prepare_ms, perf::round3(out->prepare_ms[0]));
  report::put(&seg, report::segments_cold_compute_ms, perf::round3(out->compute_ms[0]));
  report::put(&seg, report::segments_cold_compute_event_ms,
              events ? std::optional(perf::round3(out->compute_event_ms[0])) : std::nullopt);
  report::put(&seg, report::segments_cold_write_ms, perf::round3(out->write_ms[0]));
  report::put(&seg, report::segments_warm_n, warm);
  put_stat(&seg, report::segments_warm_prepare_median_ms, report::segments_warm_prepare_p95_ms, out->prepare_ms + 1, warm);
  put_stat(&seg, report::segments_warm_compute_median_ms, report::segments_warm_compute_p95_ms, out->compute_ms + 1, warm);
  if (events)
    put_stat(&seg, report::segments_warm_compute_event_median_ms, report::segments_warm_compute_event_p95_ms, w_events, warm);
  else
    report::put(&seg, report::segments_warm_compute_event, json());
  put_stat(&seg, report::segments_warm_write_median_ms, report::segments_warm_write_p95_ms, out->write_ms + 1, warm);
  ctx.fact(report::timing_segments, seg);
  return Outcome::pass();
}

Outcome l6_copy_bandwidth(WorkerContext& ctx) {
  return measure(ctx, {KD_CEILING_COPY, "copy", "copy", "L6.copy_bandwidth", "copy_tb_s"});
}

Outcome l6_matmul_bf16(WorkerContext& ctx) {
  return measure(ctx, {KD_CEILING_MATMUL_BF16, "matmul_bf16", "bf16 matmul", "L6.matmul_bf16", "matmul_bf16_tflops"});
}

Outcome l6_matmul_fp32(WorkerContext& ctx) {
  return measure(ctx, {KD_CEILING_MATMUL_FP32, "matmul_fp32", "fp32 matmul (TF32 off)", "L6.matmul_fp32",
                       "matmul_fp32_tflops"});
}

Outcome l6_matmul_tf32(WorkerContext& ctx) {
  return measure(ctx, {KD_CEILING_MATMUL_TF32, "matmul_tf32", "TF32 matmul", "L6.matmul_tf32", "matmul_tf32_tflops"});
}

}  // namespace kd
