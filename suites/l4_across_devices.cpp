// L4 across devices (--device-index all, from GPU 0's worker, on two or more GPUs): the L4 embeddings
// workload split by input id over every GPU, one process per GPU as a data-parallel job runs, each
// shard computed on its own device, the outputs gathered here and checked (verdict/shard_gather.h):
// every id back exactly once, the input order restored, and the gathered result equal to this
// worker's single-GPU result within the embeddings contract's tolerance. A failed shard names its GPU.
// TEST ONLY: --inject-fault cpu-shards / cpu-shard-oom run the same check over three CPU processes.
#include <sys/wait.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "fixtures/app_contract.h"
#include "fixtures/child_process.h"
#include "fixtures/layer_test.h"
#include "fixtures/scratch_folder.h"
#include "suites/embeddings_input.h"
#include "verdict/shard_gather.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kCpuShards = 3;  // 8 ids over 3: an uneven split (3, 3, 2)

// One shard's answer, from the last line its process printed.
shard::ShardOutput read_shard(int device, const std::string& log, int status, std::vector<int>* out_of_memory) {
  shard::ShardOutput o;
  o.device = device;
  const json j = json::parse(last_line(log), nullptr, false);
  if (!j.is_object() || !j.contains("error")) {
    o.error = fmt::format("its process ended ({}) without a result: {}", how_it_ended(status), last_line(log));
    return o;
  }
  if (j["error"].is_string()) {
    o.error = j["error"].get<std::string>();
    if (j.value("out_of_memory", false)) out_of_memory->push_back(device);
    return o;
  }
  o.ids = j["ids"].get<std::vector<int64_t>>();
  o.rows = j["rows"].get<std::vector<std::vector<double>>>();
  return o;
}

}  // namespace

KD_STEP(4, L4_App, AcrossDevices, "L4.across_devices", "L4.embeddings") {
  const bool cpu_shards = ctx.fault("cpu-shards") || ctx.fault("cpu-shard-oom");
  if (ctx.cpu_mode() && !cpu_shards) return Outcome::not_applicable("on the CPU: the split applies to two or more GPUs");
  if (!ctx.options.across_devices && !cpu_shards)
    return Outcome::not_applicable(ctx.options.device_index == 0
                                       ? "split over GPUs with --device-index all"
                                       : "split over GPUs from GPU 0's run of --device-index all");
  int count = kCpuShards;
  std::vector<int> devices;  // a --device-index list: those GPUs; else every visible one
  if (!cpu_shards) {
    kd_gpu_state g{};
    const kd_status s = ctx.probe->gpu_state(&g);
    if (s.kind != KD_OK) return backend_failure(s);
    count = g.device_count;
    for (int d : ctx.options.device_list)
      if (d >= count)
        return Outcome::fail(Code::DeviceIndexInvalid,
                             fmt::format("the split over GPUs {}: GPU {} is not visible ({} visible)",
                                         fmt::join(ctx.options.device_list, ", "), d, count));
    devices = ctx.options.device_list;
  }
  if (devices.empty())
    for (int d = 0; d < count; ++d) devices.push_back(d);
  count = static_cast<int>(devices.size());
  if (count < 2) return Outcome::not_applicable(fmt::format("the split over GPUs needs two or more GPUs: {} visible", count));
  const std::string unit = cpu_shards ? "CPU shard" : "GPU";

  // The single-device answer, here: the whole set on this worker's device.
  const kd_app_embed_in in = embeddings_input(!ctx.cpu_mode(), ctx.device_index());
  auto whole = std::make_unique<kd_app_embed_out>();
  const kd_status s = ctx.probe->app_embeddings(&in, whole.get());
  if (s.kind != KD_OK) return backend_failure(s);
  const std::vector<int64_t> ids(in.ids, in.ids + in.count);
  std::vector<std::vector<double>> single(ids.size());
  for (int r = 0; r < whole->count; ++r)
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] == whole->ids[r])
        single[i].assign(whole->device + r * whole->dim, whole->device + (r + 1) * whole->dim);

  const std::vector<shard::Shard> shards = shard::split(ids, devices);
  ScratchFolder folder("kd-shards");
  if (folder.path.empty()) return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the shards' output");
  // Every shard at once, as the ranks of a data-parallel job start together.
  std::vector<pid_t> pids;
  for (const shard::Shard& sh : shards) {
    std::vector<std::string> args = {"--kd-shard-job", fmt::format("{}", fmt::join(sh.ids, ",")),
                                     "--device", ctx.options.device, "--device-index",
                                     std::to_string(cpu_shards ? 0 : sh.device)};
    if (sh.device == devices[1] && (ctx.fault("cpu-shard-oom") || ctx.fault("shard-oom")))
      args.insert(args.end(), {"--inject-fault", "oom"});
    pids.push_back(start_self(ctx, args, fmt::format("{}/shard-{}.log", folder.path, sh.device)));
  }
  std::vector<shard::ShardOutput> outputs;
  std::vector<int> out_of_memory;  // the shards that ran out
  for (size_t i = 0; i < shards.size(); ++i) {
    const std::string log = fmt::format("{}/shard-{}.log", folder.path, shards[i].device);
    if (pids[i] < 0) {
      outputs.push_back({shards[i].device, std::string("its process could not be started"), {}, {}});
      continue;
    }
    outputs.push_back(read_shard(shards[i].device, log, wait_exit(pids[i]), &out_of_memory));
  }

  json split = json::array();
  for (const shard::Shard& sh : shards) split.push_back({{"device", sh.device}, {"ids", sh.ids.size()}});
  const app::Tolerance tol;  // the embeddings contract's float32 tolerance (L4.embeddings)
  const shard::Gathered g = shard::gather(ids, outputs, unit);
  const std::optional<shard::Violation> v = g.violation ? g.violation : shard::compare(ids, g.rows, single, shards, tol.atol, tol.rtol, unit);
  ctx.fact("/app/across_devices", {{"devices", count}, {"unit", unit}, {"split", split},
                                   {"gathered", g.violation ? 0 : ids.size()}, {"ids", ids.size()},
                                   {"contract", v ? json(v->rule) : json("passed")}});
  if (!v) return Outcome::pass();
  if (v->rule == "shard_failed")
    return Outcome::fail(std::find(out_of_memory.begin(), out_of_memory.end(), v->device) != out_of_memory.end()
                             ? Code::OutOfMemory : Code::RuntimeError,
                         v->message);
  return Outcome::fail(Code::AppCheckFailed, fmt::format("rule '{}': {}", v->rule, v->message));
}

}  // namespace kd
