// L8 collective: this process is one rank of a job (torchrun, a Slurm step, a Kubernetes Indexed
// Job, or --rendezvous). Every rank joins one process group through LibTorch's c10d (a TCPStore
// at rank 0, then NCCL on GPUs, Gloo on the CPU); then an all-reduce and a broadcast whose results
// each rank checks element by element, a barrier, and the all-reduce's bus bandwidth over a few
// sizes. A rank that never joins, or a transport that fails, is COLLECTIVE_UNREACHABLE (17) naming
// the ranks; a wrong result is CHECK_FAILED at its stage. Facts go under /collective; the report
// records where the rendezvous came from and the world size, never a host or an address.
#include <algorithm>
#include <cmath>
#include <csignal>
#include <regex>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "contract/events.h"
#include "fixtures/gpu_watch.h"
#include "fixtures/rendezvous.h"
#include "verdict/gpu_sharing.h"
#include "verdict/floors.h"

namespace kd {
namespace {

using nlohmann::json;

// What each operation's limit leaves of --timeout: the verdict and the report must still fit.
constexpr double kRoomSeconds = 3;
constexpr double kSecondsPerSize = 0.5;

struct Joined {
  kd_collective_in in{};
  bool joined = false;
  std::string not_applicable;  // why L8.join did not apply: the later steps do not either
};

Joined& joined() {
  static Joined j;
  return j;
}

double limit(const WorkerContext& ctx) { return std::max(1.0, ctx.seconds_left() - kRoomSeconds); }

std::string ranks_text(const int* ranks, int count) {
  std::vector<int> shown(ranks, ranks + std::min(count, KD_COLLECTIVE_MAX_MISSING));
  return fmt::format("{} {}{}", count == 1 ? "rank" : "ranks", fmt::join(shown, ", "),
                     count > static_cast<int>(shown.size()) ? fmt::format(" and {} more", count - shown.size()) : "");
}

// The report never names a host or an address: rank 0's host, any IPv4 address and the transport's own
// "[file.cc:123]" prefix go from the transport's messages.
std::string scrubbed(std::string m) {
  const std::string host = joined().in.host;
  for (size_t at = host.empty() ? std::string::npos : m.find(host); at != std::string::npos; at = m.find(host, at))
    m.replace(at, host.size(), "<rank 0's host>");
  static const std::regex location(R"(\[[^\]\s]*\.(cc|cpp|h):[0-9]+\] )"), ipv4(R"(\[?\b[0-9]{1,3}(\.[0-9]{1,3}){3}\b\]?(:[0-9]+)?)");
  return std::regex_replace(std::regex_replace(m, location, ""), ipv4, "<address>");
}

Outcome unreachable(const std::string& message) { return Outcome::fail(Code::CollectiveUnreachable, scrubbed(message)); }

std::optional<Outcome> unless_joined() {
  if (!joined().not_applicable.empty()) return Outcome::not_applicable(joined().not_applicable);
  if (!joined().joined) return Outcome::fail(Code::RuntimeError, "the collective group was not joined");
  return std::nullopt;
}

// L8.join's outcome when it does not apply, kept for the steps after it.
Outcome not_applicable(const std::string& why) {
  joined().not_applicable = why;
  return Outcome::not_applicable(why);
}

// A failed operation: its ranks that never got there, when the store still knew.
Outcome operation_failure(const kd_status& s, const kd_collective_check_out& out) {
  if (s.kind != KD_ERR_UNREACHABLE) return backend_failure(s);
  if (!out.missing_count || std::string(s.message).find("never reached") != std::string::npos) return unreachable(s.message);
  return unreachable(fmt::format("{} ({} never reached it)", s.message, ranks_text(out.missing, out.missing_count)));
}

// Where one verified operation's fact goes: its section's field, and the rows inside it.
struct CheckRows {
  report::Field<json> field;
  report::Field<std::string> status;
  report::Field<int64_t> elements, wrong;
  report::Field<double> ms;
  report::Field<std::string> workload;
};
constexpr CheckRows kAllReduce{report::collective_all_reduce, report::all_reduce_check_status, report::all_reduce_check_elements,
                               report::all_reduce_check_wrong, report::all_reduce_check_ms, report::all_reduce_check_workload};
constexpr CheckRows kBroadcast{report::collective_broadcast, report::broadcast_check_status, report::broadcast_check_elements,
                               report::broadcast_check_wrong, report::broadcast_check_ms, report::broadcast_check_workload};
constexpr CheckRows kBarrier{report::collective_barrier, report::barrier_check_status, report::barrier_check_elements,
                             report::barrier_check_wrong, report::barrier_check_ms, report::barrier_check_workload};

double rounded_ms(double seconds) { return std::round(seconds * 1e6) / 1e3; }

json check_fact(const CheckRows& rows, const kd_collective_check_out& out, const kd_status& s) {
  json fact = json::object();
  report::put(&fact, rows.status, s.kind != KD_OK ? "failed" : out.wrong ? "wrong" : "passed");
  report::put(&fact, rows.elements, out.elements);
  report::put(&fact, rows.wrong, out.wrong);
  report::put(&fact, rows.ms, rounded_ms(out.seconds));
  report::put(&fact, rows.workload, out.desc);
  return fact;
}

// A verified operation: the fact, then 17 when it failed, 8 when a value is wrong.
template <class Call>
Outcome verified(WorkerContext& ctx, const CheckRows& rows, const char* what, Call call) {
  if (auto no = unless_joined()) return *no;
  kd_collective_check_out out{};
  const kd_status s = call(&out);
  ctx.fact(rows.field, check_fact(rows, out, s));
  if (s.kind != KD_OK) return operation_failure(s, out);
  if (out.wrong)
    return Outcome::fail(Code::CheckFailed,
                         fmt::format("{} over {} ranks: element {} holds {} on rank {}, expected {} ({} of {} elements "
                                     "differ)",
                                     what, joined().in.world_size, out.first_wrong, out.got, joined().in.rank,
                                     out.expected, out.wrong, out.elements));
  return Outcome::pass();
}

// Where the ranks meet; an outcome when L8 does not run or cannot.
std::optional<Outcome> plan(WorkerContext& ctx, Rendezvous* r) {
  const RendezvousResult found = find_rendezvous(ctx.options, process_environment());
  if (const auto* e = std::get_if<RendezvousError>(&found))
    return Outcome::fail(Code::CollectiveUnreachable, "the job's rendezvous cannot be read: " + e->message);
  if (const auto* f = std::get_if<Rendezvous>(&found)) {
    *r = *f;
  } else if (ctx.options.full) {
    return not_applicable(
        "not one rank of a multi-rank job: no --rendezvous, and no torchrun, Slurm or Kubernetes rendezvous in the "
        "environment (--layers L8 checks this process alone)");
  } else {
    *r = Rendezvous{"single", "127.0.0.1", 0, 1, 0, 0};  // --layers L8 alone: a group of this one process
  }
  if (ctx.options.full && r->world_size < 2)
    return not_applicable(fmt::format("a job of one rank ({}): there is nothing between ranks to check", r->source));
  return std::nullopt;
}

// The bus-bandwidth floor of this rank: the --floors file's for its GPU's name, else --min-bus-bandwidth; none: 0.
std::pair<double, std::optional<std::string>> bus_floor(WorkerContext& ctx) {
  kd_device_props props{};
  if (!ctx.cpu_mode() && ctx.probe->device_props(joined().in.index, &props).kind == KD_OK)
    if (const auto f = floors::lookup(ctx.role.floors, props.name, "bus_bandwidth_gb_s")) return {*f, "floors_file"};
  if (ctx.options.min_bus_bandwidth > 0) return {ctx.options.min_bus_bandwidth, "option"};
  return {0, std::nullopt};
}

// The largest size's bus bandwidth measured once more, on every rank alike: each rank's collectives must match, so
// whether it is measured again depends only on the job's options (the same on every rank), not on this rank's figure.
// TEST ONLY (--inject-fault slow-first-measurement): the first figure reads 100 times slower.
std::optional<Outcome> measure_again(WorkerContext& ctx, int64_t largest, int n, std::vector<double>* busbw) {
  if (ctx.fault("slow-first-measurement")) busbw->front() /= 100;
  if (n < 2 || (ctx.options.min_bus_bandwidth <= 0 && ctx.role.floors.is_null())) return std::nullopt;
  kd_collective_bandwidth_out again{};
  const kd_status s = ctx.probe->collective_bandwidth(&largest, 1, kSecondsPerSize, &again);
  if (s.kind == KD_ERR_UNREACHABLE) return unreachable(s.message);
  if (s.kind != KD_OK) return backend_failure(s);
  busbw->push_back(static_cast<double>(again.bytes[0]) / again.seconds[0] / 1e9 * 2.0 * (n - 1) / n);
  return std::nullopt;
}

}  // namespace


Outcome l8_join(WorkerContext& ctx) {
  Rendezvous r;
  if (auto no = plan(ctx, &r)) return *no;
  kd_collective_in& in = joined().in;
  in = kd_collective_in{};
  std::snprintf(in.host, sizeof in.host, "%s", r.host.c_str());
  in.port = r.port;
  in.world_size = r.world_size;
  in.rank = r.rank;
  in.on_gpu = !ctx.cpu_mode();
  in.index = ctx.options.device_index_given ? ctx.device_index() : r.local_rank;  // one GPU per rank on its machine
  in.join_timeout_s = in.op_timeout_s = limit(ctx);
  in.wrong_contribution = ctx.fault("collective-wrong") && r.rank == r.world_size - 1;
  ctx.fact(report::collective_source, r.source);
  ctx.fact(report::collective_world_size, r.world_size);
  ctx.fact(report::collective_rank, r.rank);
  ctx.fact(report::collective_local_rank, r.local_rank);
  ctx.fact(report::collective_device, in.on_gpu ? fmt::format("cuda:{}", in.index) : "cpu");
  if (in.on_gpu) {
    kd_gpu_state g{};
    const kd_status gs = ctx.probe->gpu_state(&g);
    if (gs.kind != KD_OK) return backend_failure(gs);
    if (in.index >= g.device_count)
      return Outcome::fail(Code::DeviceIndexInvalid,
                           fmt::format("rank {}'s GPU is index {} (its {}), but {} GPU(s) are visible", r.rank, in.index,
                                       ctx.options.device_index_given ? "--device-index" : "local rank", g.device_count));
  }
  kd_collective_join_out out{};
  const kd_status s = ctx.probe->collective_join(&in, &out);
  json join = json::object();
  report::put(&join, report::join_status, s.kind == KD_OK ? "passed" : "failed");
  report::put(&join, report::join_joined, out.joined);
  report::put(&join, report::join_missing_ranks,
              std::vector<int>(out.missing, out.missing + std::min(out.missing_count, KD_COLLECTIVE_MAX_MISSING)));
  report::put(&join, report::join_missing_count, out.missing_count);
  report::put(&join, report::join_waited_s, std::round(in.join_timeout_s * 10) / 10);
  report::put(&join, report::join_ms, rounded_ms(out.seconds));
  report::put(&join, report::join_workload, out.desc);
  ctx.fact(report::collective_join, join);
  if (out.backend[0]) ctx.fact(report::collective_backend, std::string(out.backend));
  if (s.kind == KD_ERR_UNSUPPORTED) return not_applicable(s.message);
  if (s.kind == KD_ERR_UNREACHABLE) return unreachable(s.message);
  if (s.kind != KD_OK) return backend_failure(s);
  joined().joined = true;
  if (ctx.fault("collective-rank-exit") && r.world_size > 1 && r.rank == r.world_size - 1)
    std::raise(SIGKILL);  // test-only: the last rank dies right after joining, as a rank killed mid-job
  return Outcome::pass();
}

Outcome l8_all_reduce(WorkerContext& ctx) {
  return verified(ctx, kAllReduce, "all-reduce (sum)", [](kd_collective_check_out* o) {
    return worker_context().probe->collective_all_reduce(o);
  });
}

Outcome l8_broadcast(WorkerContext& ctx) {
  return verified(ctx, kBroadcast, "broadcast from rank 0", [](kd_collective_check_out* o) {
    return worker_context().probe->collective_broadcast(o);
  });
}

Outcome l8_barrier(WorkerContext& ctx) {
  return verified(ctx, kBarrier, "barrier", [](kd_collective_check_out* o) {
    return worker_context().probe->collective_barrier(o);
  });
}

Outcome l8_bandwidth(WorkerContext& ctx) {
  if (auto no = unless_joined()) return *no;
  const int n = joined().in.world_size;
  const std::vector<int64_t> sizes = ctx.cpu_mode() ? std::vector<int64_t>{int64_t(64) << 10, int64_t(1) << 20, int64_t(16) << 20}
                                                    : std::vector<int64_t>{int64_t(1) << 20, int64_t(32) << 20, int64_t(256) << 20};
  kd_collective_bandwidth_out out{};
  std::optional<GpuWatch> watch;  // this rank's GPU
  if (watches_gpu(ctx)) watch.emplace(ctx, std::vector<int>{joined().in.on_gpu ? joined().in.index : ctx.device_index()});
  const kd_status s = ctx.probe->collective_bandwidth(sizes.data(), static_cast<int>(sizes.size()), kSecondsPerSize, &out);
  if (s.kind == KD_ERR_UNREACHABLE) return unreachable(s.message);
  if (s.kind != KD_OK) return backend_failure(s);
  // nccl-tests' figures for an all-reduce: algbw = bytes / time, busbw = algbw * 2 (n - 1) / n.
  json rows = json::array();
  double largest_busbw = 0;
  for (int k = 0; k < out.sizes; ++k) {
    const double algbw = static_cast<double>(out.bytes[k]) / out.seconds[k] / 1e9;
    largest_busbw = algbw * 2.0 * (n - 1) / n;
    json size = json::object();
    report::put(&size, report::bw_size_bytes, out.bytes[k]);
    report::put(&size, report::bw_size_iterations, out.iterations[k]);
    report::put(&size, report::bw_size_ms, rounded_ms(out.seconds[k]));
    report::put(&size, report::bw_size_algbw, std::round(algbw * 100) / 100);
    report::put(&size, report::bw_size_busbw, std::round(largest_busbw * 100) / 100);
    rows.push_back(size);
  }
  std::vector<double> busbw = {largest_busbw};  // the largest size's, each time measured
  if (auto failed = measure_again(ctx, sizes.back(), n, &busbw)) return *failed;
  const std::optional<sharing::Seen> during = watch ? std::optional(watch->during()) : std::nullopt;  // both times
  const std::pair<double, std::optional<std::string>> floor_of = bus_floor(ctx);
  const double floor = floor_of.first;
  const std::optional<std::string>& floor_source = floor_of.second;
  const std::string floor_name = floor_source.value_or("") == "option" ? "--min-bus-bandwidth" : "the --floors file's";
  const std::string figure = fmt::format("all-reduce bus bandwidth {:.2f} GB/s at {} MiB over {} ranks", busbw.back(),
                                         out.sizes > 0 ? out.bytes[out.sizes - 1] >> 20 : 0, n);
  // Other processes on this rank's GPU while it measured: the floor is not applied (sharing::floor_check).
  const bool has_floor = floor > 0 && n >= 2;
  const sharing::Floor shared = during ? sharing::floor_check(sharing::judge(*during), ctx.options.judge_shared_gpu,
                                                              fmt::format("{}, {} {} GB/s", figure, floor_name, floor))
                                       : sharing::Floor{};
  const bool floor_checked = has_floor && shared.outcome == sharing::Floor::Outcome::Judged;
  if (watch)
    record_sharing(ctx, "L8.bandwidth", watch->before(), *during, floor_checked ? "applied" : has_floor ? "not_applied" : "none");
  const bool below = floor_checked && std::all_of(busbw.begin(), busbw.end(), [&](double b) { return b < floor; });
  json bandwidth = json::object();
  report::put(&bandwidth, report::collective_bw_unit, "GB/s");
  report::put(&bandwidth, report::collective_bw_sizes, rows);
  report::put(&bandwidth, report::collective_bw_floor_busbw, floor > 0 ? std::optional(floor) : std::nullopt);
  report::put(&bandwidth, report::collective_bw_floor_checked, floor_checked);
  report::put(&bandwidth, report::collective_bw_note,
              n >= 2 ? std::nullopt
                     : std::optional<std::string>("one rank: nothing crosses between ranks; algbw times a local pass, busbw is 0 by "
                                                  "its formula"));
  report::put(&bandwidth, report::collective_bw_formula,
              "algbw: bytes divided by time; busbw: algbw times 2(n - 1) divided by n (nccl-tests)");
  report::put(&bandwidth, report::collective_bw_workload, out.desc);
  report::put(&bandwidth, report::collective_bw_floor_source, floor_source);
  std::vector<double> rounded;
  for (double b : busbw) rounded.push_back(std::round(b * 100) / 100);
  report::put(&bandwidth, report::collective_bw_measurements, rounded);
  ctx.fact(report::collective_bandwidth, bandwidth);
  const kd_status end = ctx.probe->collective_end();
  if (has_floor && !floor_checked) return Outcome::not_applicable(shared.message);
  if (below)
    return Outcome::fail(Code::PerformanceBelowFloor,
                         fmt::format("{} is below {} {} GB/s (measured twice: {:.2f} then {:.2f} GB/s){}", figure, floor_name,
                                     floor, busbw.front(), busbw.back(),
                                     during && sharing::judge(*during).contended
                                         ? "; other processes used the GPU during the measurement: " + sharing::judge(*during).what
                                         : ""));
  if (floor_checked && busbw.front() < floor)
    events::warning(fmt::format("L8: the first bus bandwidth {:.2f} GB/s was below the floor {} GB/s; measured again, "
                                "{:.2f} GB/s was not",
                                busbw.front(), floor, busbw.back()));
  if (end.kind == KD_ERR_UNREACHABLE) return unreachable(end.message);
  return Outcome::pass();
}

}  // namespace kd
