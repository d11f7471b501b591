// L7 peer: with two or more GPUs, every ordered pair copies a known pattern from one GPU to the
// other, verified on the destination (CHECK_FAILED names the pair), then the pair's bandwidth
// (CUDA events, median of repeats) and an all-reduce across all GPUs through LibTorch's NCCL
// process group when this LibTorch has one. Peer access is a fact, not a failure: without it
// the copy goes through host memory and is measured as such. Run by --device-index all (with
// two or more GPUs) and by --layers L7; facts go under /peer.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "contract/events.h"
#include "contract/report_parts.h"
#include "fixtures/gpu_watch.h"
#include "verdict/performance.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int64_t kCopyBytes = int64_t(256) << 20;  // well past any cache; ~1 ms a copy over NVLink
constexpr int kRepeats = 10;

// The GPUs of the layer: a --device-index list's, else every visible one; an outcome when the layer
// cannot go on (not applicable, a listed GPU not visible, or the query failed).
std::optional<Outcome> unless_two_gpus(WorkerContext& ctx, std::vector<int>* gpus) {
  if (ctx.cpu_mode()) return Outcome::not_applicable("not supported on CPU: the peer layer copies between GPUs");
  kd_gpu_state g{};
  const kd_status s = ctx.probe->gpu_state(&g);
  if (s.kind != KD_OK) return backend_failure(s);
  *gpus = ctx.options.device_list;
  for (int d : *gpus)
    if (d >= g.device_count)
      return Outcome::fail(Code::DeviceIndexInvalid, fmt::format("GPU {} is not visible ({} visible)", d, g.device_count));
  if (gpus->empty())
    for (int d = 0; d < g.device_count; ++d) gpus->push_back(d);
  if (gpus->size() < 2) return Outcome::not_applicable(fmt::format("needs 2 GPUs; {} visible", g.device_count));
  return std::nullopt;
}

// Calls fn(i, j) for every ordered pair of positions in gpus, each in its own stage (named by the GPUs)
// so that a hang names the pair.
template <class Fn>
std::optional<Outcome> each_pair(const std::vector<int>& gpus, const char* stage, Fn fn) {
  for (size_t i = 0; i < gpus.size(); ++i)
    for (size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) continue;
      events::stage(fmt::format("{}.{}_to_{}", stage, gpus[i], gpus[j]));
      if (auto failed = fn(i, j)) return failed;
    }
  return std::nullopt;
}

json square(int count) { return json(std::vector<json>(static_cast<size_t>(count), json(std::vector<json>(count)))); }

Outcome wrong_copy(int src, int dst, const kd_peer_copy_out& out) {
  return Outcome::fail(Code::CheckFailed,
                       fmt::format("GPU {} -> GPU {}: {} of {} int32 elements differ from what was sent (first at element "
                                   "{}: {}, expected {})",
                                   src, dst, out.mismatches, out.bytes / 4, out.first_bad, out.first_bad_value, out.first_bad));
}

}  // namespace


Outcome l7_copy(WorkerContext& ctx) {
  std::vector<int> gpus;
  if (auto na = unless_two_gpus(ctx, &gpus)) return *na;
  const int count = static_cast<int>(gpus.size());
  ctx.fact(report::peer_device_count, count);
  ctx.fact(report::peer_devices, gpus);  // the matrices' rows and columns, in order
  json access = square(count), copies = json::array();
  const auto failed = each_pair(gpus, "L7.copy", [&](size_t i, size_t j) -> std::optional<Outcome> {
    const int src = gpus[i], dst = gpus[j];
    kd_peer_copy_out out{};
    const kd_status s = ctx.probe->peer_copy(src, dst, kCopyBytes, 0, ctx.probe_fault(), &out);
    if (s.kind != KD_OK) return backend_failure(s);
    access[i][j] = out.peer_access != 0;
    json copy;
    report::put(&copy, report::copy_src, src);
    report::put(&copy, report::copy_dst, dst);
    report::put(&copy, report::copy_path, out.peer_access ? "peer" : "host");
    report::put(&copy, report::copy_bytes, out.bytes);
    report::put(&copy, report::copy_mismatches, out.mismatches);
    report::put(&copy, report::copy_verified, out.mismatches == 0);
    copies.push_back(std::move(copy));
    if (out.mismatches) return wrong_copy(src, dst, out);
    return std::nullopt;
  });
  ctx.fact(report::peer_access, access);  // what was learned, also when a pair failed
  ctx.fact(report::peer_copies, copies);
  return failed.value_or(Outcome::pass());
}

Outcome l7_bandwidth(WorkerContext& ctx) {
  std::vector<int> gpus;
  if (auto na = unless_two_gpus(ctx, &gpus)) return *na;
  json matrix = square(static_cast<int>(gpus.size())), pairs = json::array();
  GpuWatch watch(ctx, gpus);  // no floor here: who else was on these GPUs is recorded with the figures
  const auto failed = each_pair(gpus, "L7.bandwidth", [&](size_t i, size_t j) -> std::optional<Outcome> {
    const int src = gpus[i], dst = gpus[j];
    auto out = std::make_unique<kd_peer_copy_out>();
    const kd_status s = ctx.probe->peer_copy(src, dst, kCopyBytes, kRepeats, ctx.probe_fault(), out.get());
    if (s.kind != KD_OK) return backend_failure(s);
    if (out->mismatches) return wrong_copy(src, dst, *out);
    if (out->repeats < 1) return Outcome::fail(Code::RuntimeError, "the probe timed no repeat");
    std::vector<double> rates;  // GB/s: bytes copied (each crosses the link once)
    for (int i = 0; i < out->repeats; ++i) rates.push_back(static_cast<double>(out->bytes) / out->seconds[i] / 1e9);
    const double median = std::round(perf::median(rates) * 10) / 10;
    matrix[i][j] = median;
    json pair;
    report::put(&pair, report::pair_src, src);
    report::put(&pair, report::pair_dst, dst);
    report::put(&pair, report::pair_median, median);
    report::put(&pair, report::pair_min, *std::min_element(rates.begin(), rates.end()));
    report::put(&pair, report::pair_max, *std::max_element(rates.begin(), rates.end()));
    report::put(&pair, report::pair_repeats, out->repeats);
    report::put(&pair, report::pair_workload, out->desc);
    pairs.push_back(std::move(pair));
    return std::nullopt;
  });
  json bandwidth;
  report::put(&bandwidth, report::bandwidth_unit, "GB/s");
  report::put(&bandwidth, report::bandwidth_bytes, kCopyBytes);
  report::put(&bandwidth, report::bandwidth_matrix, matrix);
  report::put(&bandwidth, report::bandwidth_pairs, pairs);
  ctx.fact(report::peer_bandwidth, bandwidth);
  record_sharing(ctx, "L7.bandwidth", watch.before(), watch.during(), "none");
  return failed.value_or(Outcome::pass());
}

Outcome l7_all_reduce(WorkerContext& ctx) {
  std::vector<int> gpus;
  if (auto na = unless_two_gpus(ctx, &gpus)) return *na;
  kd_all_reduce_out out{};
  const kd_status s = ctx.probe->all_reduce(gpus.data(), static_cast<int>(gpus.size()), &out);
  json fact;
  if (s.kind == KD_ERR_UNSUPPORTED) {
    report::put(&fact, report::all_reduce_status, "not_supported");
    report::put(&fact, report::all_reduce_message, s.message);
    ctx.fact(report::peer_all_reduce, fact);
    return Outcome::not_applicable(s.message);
  }
  if (s.kind != KD_OK) return backend_failure(s);
  report::put(&fact, report::all_reduce_status, out.verified ? "passed" : "failed");
  report::put(&fact, report::all_reduce_ranks, out.ranks);
  report::put(&fact, report::all_reduce_elements, out.elements);
  report::put(&fact, report::all_reduce_expected, out.expected);
  report::put(&fact, report::all_reduce_ms, std::round(out.seconds * 1e6) / 1e3);
  report::put(&fact, report::all_reduce_workload, out.desc);
  ctx.fact(report::peer_all_reduce, fact);
  if (!out.verified)
    return Outcome::fail(Code::CheckFailed,
                         fmt::format("all-reduce over {} GPUs: rank {} (GPU {}) holds {}, expected the sum {}", out.ranks,
                                     out.wrong_rank, gpus[static_cast<size_t>(out.wrong_rank)], out.first_wrong, out.expected));
  return Outcome::pass();
}

}  // namespace kd
