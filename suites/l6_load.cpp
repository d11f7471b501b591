// L6 under load (docs/layers.md "L6 under load"): the host link's copies against the link NVML reports; the sustained
// load (--sustained S, off by default) with NVML's clocks, temperature, power and clock-event reasons about every
// 100 ms, and its results compared bitwise (silent data corruption); the memory integrity pass (--memory-integrity,
// off by default). Facts go under /timing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "contract/events.h"
#include "contract/report_parts.h"
#include "fixtures/gpu_watch.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "fixtures/nvml_library.h"
#include "fixtures/target_gpu.h"
#include "suites/steps.h"
#include "verdict/gpu_sharing.h"
#include "verdict/load_checks.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr double kPointSeconds = 0.25;             // the sustained curve's points: one synchronization each
constexpr int64_t kGpuMatrix = 16384, kCpuMatrix = 256;
constexpr int64_t kSilentCorruptionIteration = 5;  // TEST ONLY: the product whose result has a bit flipped
constexpr double kThrottleSlowdown = 100;          // TEST ONLY: the rates after the first seconds, divided
constexpr double kIntegrityShare = 0.92;           // of the free memory: the pass's chunks (>= 90 % covered)
constexpr int64_t kGpuChunk = int64_t(512) << 20, kCpuChunk = int64_t(8) << 20, kCpuIntegrityBytes = int64_t(64) << 20;
constexpr int64_t kIntegrityScratch = int64_t(400) << 20;  // the probe's scratch (two 128 MiB slices, flags), rounded up
constexpr int64_t kIntegritySeed = 40;

double gb_s(int64_t bytes, const double* seconds, int n) {
  const double m = perf::median(std::vector<double>(seconds, seconds + n));
  return m > 0 ? perf::round3(static_cast<double>(bytes) / m / 1e9) : 0;
}

std::optional<int64_t> nvml_int(const std::optional<json>& facts, const report::Field<std::optional<int64_t>>& f) {
  if (!facts) return std::nullopt;
  return report::read(*facts, f);
}

bool v_below(double measured, double expected, double floor) { return measured / expected < floor; }

// --- L6.host_link ---------------------------------------------------------------------------------------------------

struct Link {
  std::optional<std::string> kind;
  std::optional<int64_t> gen, width, gen_max, width_max, c2c_links;
  std::optional<double> expected;
  std::string why_not;  // when expected is unknown
  std::string text() const {
    const auto v = [](const std::optional<int64_t>& x) { return x ? std::to_string(*x) : std::string("?"); };
    if (kind == std::string("nvlink-c2c"))
      return fmt::format("NVLink-C2C ({} active links: {} GB/s each way)", v(c2c_links),
                         expected ? fmt::format("{:.1f}", *expected) : "?");
    return fmt::format("PCIe Gen {} x{} now (Gen {} x{} at most: {} GB/s each way)", v(gen), v(width), v(gen_max),
                       v(width_max), expected ? fmt::format("{:.1f}", *expected) : "?");
  }
};

Link link_of(const WorkerContext& ctx) {
  Link l;
  if (ctx.cpu_mode()) {
    l.why_not = "the CPU has no host link: the stand-in's copies are within host memory and are not judged";
    return l;
  }
  kd_device_props props{};
  if (ctx.probe->device_props(ctx.device_index(), &props).kind != KD_OK) {
    l.why_not = "the device's properties could not be read";
    return l;
  }
  const TargetGpu gpu = target_gpu(ctx, props, Facts::Now);  // after the copies: a link trains down when idle
  if (!gpu.facts) {
    l.why_not = "no NVML facts: " + gpu.why_not;
    return l;
  }
  l.gen = nvml_int(gpu.facts, report::nvml_gpu_pcie_gen);
  l.width = nvml_int(gpu.facts, report::nvml_gpu_pcie_width);
  l.gen_max = nvml_int(gpu.facts, report::nvml_gpu_pcie_gen_max);
  l.width_max = nvml_int(gpu.facts, report::nvml_gpu_pcie_width_max);
  l.c2c_links = nvml_int(gpu.facts, report::nvml_gpu_c2c_links);
  const load::HostLinkExpectation e =
      load::expected_host_link({l.c2c_links, report::read(*gpu.facts, report::nvml_gpu_c2c_gb_s), l.gen_max, l.width_max});
  l.kind = e.kind;
  l.expected = e.expected_gb_s;
  l.why_not = e.why_not;
  return l;
}

// Every GPU's link alone, then all at once (GPUs behind one PCIe switch or root port share it, as a job's ranks do),
// by GPU 0's worker of --device-index all, as L4's split: recorded, never judged (a shared switch is the machine's
// design, not a fault). TEST ONLY: --inject-fault cpu-host-links, three threads as if three GPUs: on the CPU copies
// within host memory, on a GPU that GPU's link three times (the threads' copies at once share one link).
constexpr int kCpuLinks = 3;
constexpr int64_t kTogetherBytes = int64_t(256) << 20, kCpuTogetherBytes = int64_t(16) << 20;
constexpr int kTogetherRepeats = 3;

std::optional<json> links_together(WorkerContext& ctx, kd_status* failed) {
  const bool stand_in = ctx.fault("cpu-host-links");
  std::vector<int> devices;
  if (stand_in) {
    for (int d = 0; d < kCpuLinks; ++d) devices.push_back(ctx.cpu_mode() ? d : ctx.device_index());
  } else {
    if (ctx.cpu_mode() || !ctx.role.across_devices) return std::nullopt;
    kd_gpu_state g{};
    if (const kd_status s = ctx.probe->gpu_state(&g); s.kind != KD_OK) {
      *failed = s;
      return std::nullopt;
    }
    devices = ctx.options.device_list;
    if (devices.empty())
      for (int d = 0; d < g.device_count; ++d) devices.push_back(d);
    devices.erase(std::remove_if(devices.begin(), devices.end(), [&](int d) { return d >= g.device_count; }), devices.end());
  }
  if (devices.size() < 2 || devices.size() > KD_HOST_LINKS_MAX) return std::nullopt;
  const int on_gpu = ctx.cpu_mode() ? 0 : 1;
  const int64_t bytes = on_gpu ? kTogetherBytes : kCpuTogetherBytes;
  const auto measure = [&](const std::vector<int>& which, std::vector<kd_host_link_out>* outs) {
    outs->assign(which.size(), kd_host_link_out{});
    *failed = ctx.probe->host_links_together(on_gpu, which.data(), static_cast<int>(which.size()), bytes, on_gpu,
                                             kTogetherRepeats, outs->data());
    return failed->kind == KD_OK;
  };
  std::vector<kd_host_link_out> alone, together;
  std::vector<double> alone_h2d, alone_d2h;
  for (const int d : devices) {
    if (!measure({d}, &alone)) return std::nullopt;
    alone_h2d.push_back(gb_s(bytes, alone[0].to_device_s, alone[0].repeats));
    alone_d2h.push_back(gb_s(bytes, alone[0].to_host_s, alone[0].repeats));
  }
  if (!measure(devices, &together)) return std::nullopt;
  json rows = json::array();
  double h2d_total = 0, d2h_total = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    const double h2d = gb_s(bytes, together[i].to_device_s, together[i].repeats);
    const double d2h = gb_s(bytes, together[i].to_host_s, together[i].repeats);
    h2d_total += h2d;
    d2h_total += d2h;
    rows.push_back({{"gpu", devices[i]}, {"h2d_alone_gb_s", alone_h2d[i]}, {"d2h_alone_gb_s", alone_d2h[i]},
                    {"h2d_together_gb_s", h2d}, {"d2h_together_gb_s", d2h}});
  }
  return json{{"workload", together[0].desc}, {"gpus", rows}, {"h2d_total_gb_s", perf::round3(h2d_total)},
              {"d2h_total_gb_s", perf::round3(d2h_total)}};
}

}  // namespace

Outcome l6_host_link(WorkerContext& ctx) {
  const bool gpu = !ctx.cpu_mode();
  struct Size {
    int64_t bytes;
    int repeats;
  };
  // --full runs every layer within its time budget (about 7 s on an H200 before this step): there the copies stop at
  // 256 MiB, with fewer repeats; the 1 GiB copies when L6 is asked for on its own (--layers L6).
  const std::vector<Size> sizes = !gpu                ? std::vector<Size>{{int64_t(1) << 20, 5}, {int64_t(16) << 20, 5}}
                                  : ctx.options.full ? std::vector<Size>{{int64_t(1) << 20, 5}, {int64_t(16) << 20, 5},
                                                                          {int64_t(256) << 20, 3}}
                                                      : std::vector<Size>{{int64_t(1) << 20, 10}, {int64_t(16) << 20, 10},
                                                                          {int64_t(256) << 20, 5}, {int64_t(1) << 30, 3}};
  // Another process's copies or kernels share the link and the memory (an H200 beside a job computing: 0.42 of the
  // link host to device): its floor is not applied then, as the ceilings' are not (docs/shared-gpus.md).
  std::optional<GpuWatch> watch;
  if (watches_gpu(ctx)) watch.emplace(ctx, std::vector<int>{ctx.device_index()});
  json rows = json::array();
  double h2d = 0, d2h = 0;
  std::string workload;
  for (const Size& size : sizes) {
    json row = {{"bytes", size.bytes}, {"h2d_pinned", nullptr}, {"h2d_pageable", nullptr}, {"d2h_pinned", nullptr},
                {"d2h_pageable", nullptr}};
    for (const int pinned : gpu ? std::vector<int>{1, 0} : std::vector<int>{0}) {
      auto out = std::make_unique<kd_host_link_out>();
      const kd_status s = ctx.probe->host_link(gpu, ctx.device_index(), size.bytes, pinned, size.repeats, out.get());
      if (s.kind != KD_OK) return backend_failure(s);
      const char* kind = pinned ? "pinned" : "pageable";
      row[fmt::format("h2d_{}", kind)] = gb_s(size.bytes, out->to_device_s, out->repeats);
      row[fmt::format("d2h_{}", kind)] = gb_s(size.bytes, out->to_host_s, out->repeats);
      if (pinned == (gpu ? 1 : 0)) {  // the judged kind, at the last (largest) size
        h2d = row[fmt::format("h2d_{}", kind)];
        d2h = row[fmt::format("d2h_{}", kind)];
        workload = out->desc;
      }
    }
    rows.push_back(row);
  }
  kd_status failed{};
  const std::optional<json> together = links_together(ctx, &failed);
  if (failed.kind != KD_OK) return backend_failure(failed);
  const Link link = link_of(ctx);
  const double floor = ctx.options.min_host_link_fraction;
  const auto fraction = [&](double v) { return link.expected ? std::optional(perf::round3(v / *link.expected)) : std::nullopt; };
  const bool below = link.expected && (v_below(h2d, *link.expected, floor) || v_below(d2h, *link.expected, floor));
  json hl = json::object();
  report::put(&hl, report::host_link_workload, fmt::format("sizes 1 MiB to {} MiB; the largest: {}",
                                                            sizes.back().bytes >> 20, workload));
  report::put(&hl, report::host_link_link_kind, link.kind);
  report::put(&hl, report::host_link_generation, link.gen);
  report::put(&hl, report::host_link_width, link.width);
  report::put(&hl, report::host_link_generation_max, link.gen_max);
  report::put(&hl, report::host_link_width_max, link.width_max);
  report::put(&hl, report::host_link_expected_gb_s, link.expected ? std::optional(perf::round3(*link.expected)) : std::nullopt);
  report::put(&hl, report::host_link_sizes, rows);
  report::put(&hl, report::host_link_h2d_gb_s, h2d);
  report::put(&hl, report::host_link_d2h_gb_s, d2h);
  report::put(&hl, report::host_link_h2d_fraction, fraction(h2d));
  report::put(&hl, report::host_link_d2h_fraction, fraction(d2h));
  report::put(&hl, report::host_link_floor, floor);
  report::put(&hl, report::host_link_below_floor, below);
  report::put(&hl, report::host_link_note, report::unless_empty(link.why_not));
  report::put(&hl, report::host_link_together, together.value_or(json(nullptr)));
  ctx.fact(report::timing_host_link, hl);
  const auto record = [&](const sharing::Seen& during, const char* judged) {
    if (watch) record_sharing(ctx, "L6.host_link", watch->before(), during, judged);
  };
  const sharing::Seen during = watch ? watch->during() : sharing::Seen{};
  if (!link.expected) {
    record(during, "none");
    return Outcome::not_applicable("host link measured, not judged: " + link.why_not);
  }
  const std::string message =
      fmt::format("host link: pinned copies of {} MiB reach {} GB/s host to device ({} of the link's) and {} GB/s device "
                  "to host ({}){}; NVML: {}",
                  sizes.back().bytes >> 20, h2d, *fraction(h2d), d2h, *fraction(d2h),
                  below ? fmt::format(", below the floor {} (--min-host-link-fraction)", floor) : "", link.text());
  const sharing::Floor checked =
      sharing::floor_check(watch ? sharing::judge(during) : sharing::Contention{}, ctx.options.judge_shared_gpu, message);
  if (checked.outcome == sharing::Floor::Outcome::NotJudged) {
    record(during, "not_applied");
    return Outcome::not_applicable(checked.message);
  }
  record(during, "applied");
  return below ? Outcome::fail(Code::PerformanceBelowFloor, message) : Outcome::pass();
}

namespace {

// --- the sustained load, shared by its two steps ----------------------------------------------------------------------

struct SustainedRun {
  kd_status status{};
  std::unique_ptr<kd_sustained_out> out = std::make_unique<kd_sustained_out>();
  std::vector<ClockLook> clocks;
  bool watched = false;
  double started_epoch_s = 0;
  sharing::Contention shared;  // whether other processes computed during any point of the load (docs/shared-gpus.md)
};

struct LoadWatch {
  GpuWatch& watch;
  sharing::Contention& shared;
};

void on_point(void* user, double, int64_t) {
  auto* w = static_cast<LoadWatch*>(user);
  if (!w) return;
  // Each answer brings NVML's looks since the last: the load was shared when others computed in any of them.
  const sharing::Contention c = sharing::judge(w->watch.during());
  if (c.contended && !w->shared.contended) w->shared = c;
}

// The load runs once, for whichever of its steps comes first (a --gtest_filter may choose either).
const SustainedRun& sustained_run(WorkerContext& ctx) {
  static std::optional<SustainedRun> run;
  if (run) return *run;
  run.emplace();
  kd_sustained_in in{};
  in.on_gpu = !ctx.cpu_mode();
  in.index = ctx.device_index();
  in.seconds = ctx.options.sustained_s.value_or(0);
  in.point_seconds = kPointSeconds;
  in.n = ctx.cpu_mode() ? kCpuMatrix : kGpuMatrix;
  in.corrupt_iteration = ctx.fault("silent-corruption") ? kSilentCorruptionIteration : -1;
  std::optional<GpuWatch> watch;
  if (watches_gpu(ctx)) watch.emplace(ctx, std::vector<int>{ctx.device_index()});
  run->watched = watch.has_value();
  if (watch) watch->take_clocks();  // only the load's own looks
  run->started_epoch_s = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::optional<LoadWatch> load_watch;
  if (watch) load_watch.emplace(LoadWatch{*watch, run->shared});
  run->status = ctx.probe->sustained(&in, run->out.get(), on_point, load_watch ? &*load_watch : nullptr);
  if (watch) {
    const sharing::Seen during = watch->during();
    if (const sharing::Contention c = sharing::judge(during); c.contended && !run->shared.contended) run->shared = c;
    record_sharing(ctx, "L6.sustained_throughput", watch->before(), during, "none");
    run->clocks = watch->take_clocks();
  }
  return *run;
}

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json();
}

}  // namespace

Outcome l6_sustained_throughput(WorkerContext& ctx) {
  if (!ctx.options.sustained_s) return Outcome::not_applicable("off: --sustained S runs the sustained load for S seconds");
  const SustainedRun& run = sustained_run(ctx);
  if (run.status.kind != KD_OK) return backend_failure(run.status);
  const kd_sustained_out& o = *run.out;
  const double seconds = *ctx.options.sustained_s;
  const bool throttle = ctx.fault("throttle");
  const double first_end = std::min(seconds / 5, 10.0);
  std::vector<double> t, rates;
  json curve = json::array();
  for (int i = 0; i < o.points; ++i) {
    const double span = o.t_s[i] - (i > 0 ? o.t_s[i - 1] : 0);
    double rate = span > 0 ? static_cast<double>(o.products[i]) * o.flops_per_product / span / 1e12 : 0;
    if (throttle && o.t_s[i] > first_end) rate /= kThrottleSlowdown;  // TEST ONLY: as a throttled card's would read
    t.push_back(o.t_s[i]);
    rates.push_back(rate);
    curve.push_back({{"t_s", perf::round3(o.t_s[i])}, {"rate", perf::round3(rate)}});
  }
  const load::Steady steady = load::steady_fraction(t, rates, seconds);
  std::optional<int64_t> hottest, lowest_clock;
  std::optional<double> power;
  std::vector<std::vector<std::string>> held;
  json looks = json::array();
  for (const ClockLook& c : run.clocks) {
    const double at = c.t_s - run.started_epoch_s;
    if (c.temperature_c) hottest = std::max(hottest.value_or(*c.temperature_c), *c.temperature_c);
    if (c.power_w) power = std::max(power.value_or(*c.power_w), *c.power_w);
    const std::vector<std::string> reasons = c.reasons ? nvml::clock_event_reasons(*c.reasons) : std::vector<std::string>{};
    if (at > seconds / 2) {
      if (c.sm_clock_mhz) lowest_clock = std::min(lowest_clock.value_or(*c.sm_clock_mhz), *c.sm_clock_mhz);
      held.push_back(reasons);
    }
    looks.push_back({{"t_s", perf::round3(at)}, {"sm_clock_mhz", or_null(c.sm_clock_mhz)}, {"temperature_c", or_null(c.temperature_c)},
                     {"power_w", or_null(c.power_w)}, {"reasons", reasons}});
  }
  const std::vector<std::string> reasons = load::held_reasons(held);
  const double floor = ctx.options.min_sustained_fraction;
  const bool below = steady.fraction < floor;
  json su = json::object();
  report::put(&su, report::sustained_workload, std::string(o.desc));
  report::put(&su, report::sustained_seconds, seconds);
  report::put(&su, report::sustained_products, o.total_products);
  report::put(&su, report::sustained_unit, "TFLOP/s");
  report::put(&su, report::sustained_first_rate, perf::round3(steady.first));
  report::put(&su, report::sustained_steady_rate, perf::round3(steady.steady));
  report::put(&su, report::sustained_fraction, perf::round3(steady.fraction));
  report::put(&su, report::sustained_floor, floor);
  report::put(&su, report::sustained_below_floor, below);
  report::put(&su, report::sustained_hottest_c, hottest);
  report::put(&su, report::sustained_lowest_sm_clock_mhz, lowest_clock);
  report::put(&su, report::sustained_highest_power_w, power);
  report::put(&su, report::sustained_reasons, reasons);
  report::put(&su, report::sustained_nvml_samples, static_cast<int64_t>(run.clocks.size()));
  report::put(&su, report::sustained_curve, curve);
  report::put(&su, report::sustained_nvml, looks);
  report::put(&su, report::sustained_fault, throttle ? std::optional<std::string>("throttle") : std::nullopt);
  ctx.fact(report::timing_sustained, su);
  // The CPU's rate is the host's, shared with whatever else the machine runs (a loaded 2-core machine's fell to 0.06
  // of its first seconds in 2 s): recorded, never judged, unless a stand-in GPU is watched (the test-only faults).
  if (ctx.cpu_mode() && !run.watched)
    return Outcome::not_applicable(fmt::format("the CPU's sustained rate ({:.4g} -> {:.4g} TFLOP/s, {:.2f} of the first "
                                               "seconds) is recorded, not judged: the host's cores are shared with "
                                               "whatever else runs there", steady.first, steady.steady, steady.fraction));
  if (!below) return Outcome::pass();
  const std::string message = load::sustained_below_floor(steady, floor, "TFLOP/s", reasons, !run.clocks.empty());
  // Another process's work starting or ending during the load changes its rate: never the card's fault.
  if (const sharing::Floor f = sharing::floor_check(run.shared, ctx.options.judge_shared_gpu, message);
      f.outcome == sharing::Floor::Outcome::NotJudged)
    return Outcome::not_applicable(f.message);
  return Outcome::fail(Code::PerformanceBelowFloor, message);
}

Outcome l6_sustained_results(WorkerContext& ctx) {
  if (!ctx.options.sustained_s) return Outcome::not_applicable("off: --sustained S compares the sustained load's results");
  const SustainedRun& run = sustained_run(ctx);
  if (run.status.kind != KD_OK) return backend_failure(run.status);
  const kd_sustained_out& o = *run.out;
  const bool bad = o.bad_products > 0;
  json r = json::object();
  report::put(&r, report::sustained_results_compared, o.total_products);
  report::put(&r, report::sustained_results_differing_products, o.bad_products);
  report::put(&r, report::sustained_results_first_iteration, bad ? std::optional(o.first_bad_product) : std::nullopt);
  report::put(&r, report::sustained_results_first_elements, bad ? std::optional(o.first_bad_elements) : std::nullopt);
  report::put(&r, report::sustained_results_first_max_diff, bad ? std::optional(o.first_bad_max_diff) : std::nullopt);
  report::put(&r, report::sustained_results_reference_rows, o.reference_rows);
  report::put(&r, report::sustained_results_reference_tolerance, o.reference_tolerance);
  report::put(&r, report::sustained_results_reference_start_bad, o.reference_bad[0]);
  report::put(&r, report::sustained_results_reference_end_bad, o.reference_bad[1]);
  report::put(&r, report::sustained_results_reference_max_diff, std::max(o.reference_max_diff[0], o.reference_max_diff[1]));
  ctx.fact(report::timing_sustained_results, r);
  if (bad)
    return Outcome::fail(Code::CheckFailed,
                         fmt::format("silent data corruption: product {} of {} differed from the first product's result in "
                                     "{} element(s), the largest difference {}; {} product(s) differed in all",
                                     o.first_bad_product, o.total_products, o.first_bad_elements, o.first_bad_max_diff,
                                     o.bad_products));
  for (int at = 0; at < o.reference_checks; ++at)
    if (o.reference_bad[at] > 0)
      return Outcome::fail(Code::CheckFailed,
                           fmt::format("the product's rows 0-{} differ from a float64 CPU reference at the {}: {} element(s) "
                                       "beyond the relative tolerance {}, the largest difference {}",
                                       o.reference_rows - 1, at == 0 ? "start" : "end", o.reference_bad[at],
                                       o.reference_tolerance, o.reference_max_diff[at]));
  if (o.reference_checks < 2) return Outcome::fail(Code::RuntimeError, "the sustained load ended without its CPU comparisons");
  return Outcome::pass();
}

// --- L6.memory_integrity --------------------------------------------------------------------------------------------

namespace {

json ecc_counts(const WorkerContext& ctx) {
  if (ctx.cpu_mode()) return json();
  kd_device_props props{};
  if (ctx.probe->device_props(ctx.device_index(), &props).kind != KD_OK) return json();
  const TargetGpu gpu = target_gpu(ctx, props, Facts::Now);
  const auto c = nvml_int(gpu.facts, report::nvml_gpu_ecc_volatile_corrected);
  const auto u = nvml_int(gpu.facts, report::nvml_gpu_ecc_volatile_uncorrected);
  if (!c && !u) return json();
  return {{"corrected", or_null(c)}, {"uncorrected", or_null(u)}};
}

}  // namespace

Outcome l6_memory_integrity(WorkerContext& ctx) {
  if (!ctx.options.memory_integrity) return Outcome::not_applicable("off: --memory-integrity runs the memory integrity pass");
  const bool gpu = !ctx.cpu_mode();
  kd_integrity_in in{};
  in.on_gpu = gpu;
  in.index = ctx.device_index();
  in.seed = kIntegritySeed;
  in.chunk_bytes = gpu ? kGpuChunk : kCpuChunk;
  std::optional<int64_t> free_bytes;
  if (gpu) {
    kd_memory_counters c{};
    const kd_status s = ctx.probe->memory_counters(ctx.device_index(), &c);
    if (s.kind != KD_OK) return backend_failure(s);
    // What this run may take: the driver's free memory and what the caching allocator holds unused.
    free_bytes = static_cast<int64_t>(c.device_free + (c.reserved > c.allocated ? c.reserved - c.allocated : 0));
    in.bytes = static_cast<int64_t>(static_cast<double>(*free_bytes) * kIntegrityShare) - kIntegrityScratch;
  } else {
    in.bytes = kCpuIntegrityBytes;
  }
  if (in.bytes < in.chunk_bytes) return Outcome::not_applicable("too little free memory for the pass");
  // The pass takes nearly all free memory: beside other processes it could leave them none (the next job can start).
  if (watches_gpu(ctx)) {
    const GpuWatch watch(ctx, {ctx.device_index()});
    if (sharing::others(watch.before()) > 0)
      return Outcome::not_applicable(fmt::format("{} use this GPU: the pass would take the memory they may need; run "
                                                 "--memory-integrity on a GPU no other process uses",
                                                 sharing::describe(watch.before())));
  }
  in.corrupt_chunk = ctx.fault("memory-corrupt") ? static_cast<int>(in.bytes / in.chunk_bytes / 2) : -1;
  const json ecc_before = ecc_counts(ctx);
  auto out = std::make_unique<kd_integrity_out>();
  const kd_status s = ctx.probe->memory_integrity(&in, out.get());
  if (s.kind != KD_OK) return backend_failure(s);
  const json ecc_after = ecc_counts(ctx);
  static constexpr const char* kNames[KD_INTEGRITY_PATTERNS] = {"address-in-address", "walking ones", "seeded pseudo-random"};
  json patterns = json::array();
  double pass = 0;
  for (int p = 0; p < KD_INTEGRITY_PATTERNS; ++p) {
    patterns.push_back({{"name", kNames[p]}, {"seconds", perf::round3(out->pattern_seconds[p])}});
    pass = std::max(pass, out->pattern_seconds[p]);
  }
  const std::optional<double> coverage =
      free_bytes && *free_bytes > 0 ? std::optional(perf::round3(static_cast<double>(out->bytes_tested) / static_cast<double>(*free_bytes)))
                                    : std::nullopt;
  json first_bad;
  if (out->first_bad_pattern >= 0)
    first_bad = {{"pattern", kNames[out->first_bad_pattern]}, {"chunk", out->first_bad_chunk},
                 {"offset_bytes", out->first_bad_chunk_offset}, {"mismatches", out->first_bad_chunk_mismatches},
                 {"word_offset_bytes", out->first_bad_word_offset}, {"address", fmt::format("{:#x}", out->first_bad_address)}};
  json mi = json::object();
  report::put(&mi, report::integrity_workload, std::string(out->desc));
  report::put(&mi, report::integrity_free_bytes, free_bytes);
  report::put(&mi, report::integrity_bytes_tested, out->bytes_tested);
  report::put(&mi, report::integrity_coverage, coverage);
  report::put(&mi, report::integrity_chunks, out->chunks);
  report::put(&mi, report::integrity_chunk_bytes, in.chunk_bytes);
  report::put(&mi, report::integrity_patterns, patterns);
  report::put(&mi, report::integrity_pass_seconds, perf::round3(pass));
  report::put(&mi, report::integrity_mismatches, out->mismatches);
  report::put(&mi, report::integrity_bad_chunks, out->bad_chunks);
  report::put(&mi, report::integrity_first_bad, first_bad);
  report::put(&mi, report::integrity_ecc_before, ecc_before);
  report::put(&mi, report::integrity_ecc_after, ecc_after);
  ctx.fact(report::timing_memory_integrity, mi);
  if (out->first_bad_pattern >= 0)
    return Outcome::fail(Code::CheckFailed,
                         fmt::format("memory integrity: {} word(s) read back wrong in chunk {} at offset {} (bytes into the "
                                     "tested region), pattern {}, the first {} bytes into the chunk (device address {:#x}); "
                                     "{} wrong word(s) in {} chunk(s) in all",
                                     out->first_bad_chunk_mismatches, out->first_bad_chunk, out->first_bad_chunk_offset,
                                     kNames[out->first_bad_pattern], out->first_bad_word_offset, out->first_bad_address,
                                     out->mismatches, out->bad_chunks));
  const auto uncorrected = [](const json& e) { return e.is_object() && e["uncorrected"].is_number() ? e["uncorrected"].get<int64_t>() : 0; };
  if (uncorrected(ecc_after) > uncorrected(ecc_before))
    return Outcome::fail(Code::CheckFailed, fmt::format("memory integrity: NVML's uncorrected ECC count rose from {} to {} "
                                                        "during the pass", uncorrected(ecc_before), uncorrected(ecc_after)));
  if (coverage && *coverage < 0.9)
    return Outcome::not_applicable(fmt::format("the pass covered {} of the free memory, under 90 %: other processes took "
                                               "memory while it allocated", *coverage));
  return Outcome::pass();
}

}  // namespace kd
