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

#include "contract/report_parts.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/batch_rows.h"
#include "fixtures/child_process.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/scratch_folder.h"
#include "verdict/shard_gather.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kCpuShards = 3;  // 8 ids over 3: an uneven split (3, 3, 2)

// Where a split's fact goes: its field, and the rows inside it.
struct SplitRows {
  report::Field<json> field;
  report::Field<int64_t> devices;
  report::Field<std::string> unit;
  report::Field<json> split;
  report::Field<int64_t> split_device, split_ids, gathered, ids;
  report::Field<std::string> contract;
};
constexpr SplitRows kEmbeddings{report::app_across_devices, report::across_devices, report::across_unit,
                                report::across_split, report::across_split_device, report::across_split_ids,
                                report::across_gathered, report::across_ids, report::across_contract};
constexpr SplitRows kModel{report::app_across_devices_model, report::across_model_devices, report::across_model_unit,
                           report::across_model_split, report::across_model_split_device, report::across_model_split_ids,
                           report::across_model_gathered, report::across_model_ids, report::across_model_contract};

// One shard's answer, from the events its process said.
shard::ShardOutput read_shard(int device, const std::string& log, int status, std::vector<int>* out_of_memory) {
  shard::ShardOutput o;
  o.device = device;
  const JobOutput job = read_job(log);
  if (const auto* rows = job.last<events::ShardRows>()) {
    o.ids = rows->ids;
    o.rows = rows->rows;
  } else if (const auto* failed = job.last<events::JobFailed>()) {
    o.error = failed->message;
    if (failed->code == name(Code::OutOfMemory)) out_of_memory->push_back(device);
  } else {
    o.error = fmt::format("its process ended ({}) without a result: {}", how_it_ended(status), job.last_words);
  }
  return o;
}

// The devices to split over: a --device-index list's GPUs, else every visible one (or, TEST ONLY, three
// CPU shards); an outcome when the split does not apply or cannot go on.
std::optional<Outcome> split_devices(WorkerContext& ctx, std::vector<int>* devices, std::string* unit, bool* cpu_shards) {
  *cpu_shards = ctx.fault("cpu-shards") || ctx.fault("cpu-shard-oom");
  if (ctx.cpu_mode() && !*cpu_shards) return Outcome::not_applicable("on the CPU: the split applies to two or more GPUs");
  if (!ctx.role.across_devices && !*cpu_shards)
    return Outcome::not_applicable(ctx.options.device_index == 0
                                       ? "split over GPUs with --device-index all"
                                       : "split over GPUs from GPU 0's run of --device-index all");
  int count = kCpuShards;
  if (!*cpu_shards) {
    kd_gpu_state g{};
    const kd_status s = ctx.probe->gpu_state(&g);
    if (s.kind != KD_OK) return backend_failure(s);
    count = g.device_count;
    for (int d : ctx.options.device_list)
      if (d >= count)
        return Outcome::fail(Code::DeviceIndexInvalid,
                             fmt::format("the split over GPUs {}: GPU {} is not visible ({} visible)",
                                         fmt::join(ctx.options.device_list, ", "), d, count));
    *devices = ctx.options.device_list;
  }
  if (devices->empty())
    for (int d = 0; d < count; ++d) devices->push_back(d);
  if (devices->size() < 2)
    return Outcome::not_applicable(fmt::format("the split over GPUs needs two or more GPUs: {} visible", devices->size()));
  *unit = *cpu_shards ? "CPU shard" : "GPU";
  return std::nullopt;
}

// Every shard at once, as the ranks of a data-parallel job start together (this executable, its plan a shard:
// its ids, and with_model the user's model), then gathered and checked against `single`, this worker's whole run.
Outcome split_and_check(WorkerContext& ctx, const std::vector<int>& devices, const std::string& unit, bool cpu_shards,
                        const std::vector<int64_t>& ids, const std::vector<std::vector<double>>& single,
                        bool with_model, const SplitRows& rows) {
  const std::vector<shard::Shard> shards = shard::split(ids, devices);
  ScratchFolder folder("kd-shards");
  if (folder.path.empty()) return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the shards' output");
  std::vector<pid_t> pids;
  for (const shard::Shard& sh : shards) {
    Plan plan;
    plan.role.kind = ProcessRole::ShardJob;
    plan.role.shard_ids = sh.ids;
    plan.options.device = ctx.options.device;
    plan.options.device_index = cpu_shards ? 0 : sh.device;
    if (with_model) {
      plan.options.model = ctx.options.model;
      plan.options.input = ctx.options.input;
      plan.options.extensions = ctx.options.extensions;
    }
    if (sh.device == devices[1] && (ctx.fault("cpu-shard-oom") || ctx.fault("shard-oom"))) plan.options.fault = "oom";
    pids.push_back(start_job(ctx, plan, folder.path, fmt::format("{}/shard-{}.log", folder.path, sh.device)));
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
  for (const shard::Shard& sh : shards) {
    json entry;
    report::put(&entry, rows.split_device, sh.device);
    report::put(&entry, rows.split_ids, static_cast<int64_t>(sh.ids.size()));
    split.push_back(std::move(entry));
  }
  const app::Tolerance tol;  // the embeddings contract's float32 tolerance (L4.embeddings)
  const shard::Gathered g = shard::gather(ids, outputs, unit);
  const std::optional<shard::Violation> v = g.violation ? g.violation : shard::compare(ids, g.rows, single, shards, tol.atol, tol.rtol, unit);
  json fact;
  report::put(&fact, rows.devices, static_cast<int64_t>(devices.size()));
  report::put(&fact, rows.unit, unit);
  report::put(&fact, rows.split, split);
  report::put(&fact, rows.gathered, g.violation ? 0 : static_cast<int64_t>(ids.size()));
  report::put(&fact, rows.ids, static_cast<int64_t>(ids.size()));
  report::put(&fact, rows.contract, v ? v->rule : "passed");
  ctx.fact(rows.field, fact);
  if (!v) return Outcome::pass();
  if (v->rule == "shard_failed")
    return Outcome::fail(std::find(out_of_memory.begin(), out_of_memory.end(), v->device) != out_of_memory.end()
                             ? Code::OutOfMemory : Code::RuntimeError,
                         v->message);
  return Outcome::fail(Code::AppCheckFailed, fmt::format("rule '{}': {}", v->rule, v->message));
}

}  // namespace

Outcome l4_across_devices(WorkerContext& ctx) {
  std::vector<int> devices;
  std::string unit;
  bool cpu_shards = false;
  if (auto no = split_devices(ctx, &devices, &unit, &cpu_shards)) return *no;
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
  return split_and_check(ctx, devices, unit, cpu_shards, ids, single, false, kEmbeddings);
}

// The user's --model split the same way, by rows of its batch: each shard the very rows of the whole input
// (made whole, then taken), its outputs gathered row by row against this worker's whole run.
Outcome l4_across_devices_model(WorkerContext& ctx) {
  if (!ctx.options.model) return Outcome::not_applicable("no --model given");
  std::vector<int> devices;
  std::string unit;
  bool cpu_shards = false;
  if (auto no = split_devices(ctx, &devices, &unit, &cpu_shards)) return *no;
  const auto spec = app::read_model_spec(*ctx.options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return Outcome::fail(Code::UsageError, "--input: " + *why);
  const app::ModelSpec& ms = std::get<app::ModelSpec>(spec);
  const auto batch = app::input_batch(ms);
  if (const auto* why = std::get_if<std::string>(&batch)) return Outcome::not_applicable("the model's split by rows: " + *why);
  const auto inputs = app::probe_inputs(ms);
  std::vector<app::OutputTensor> outputs;
  char desc[256] = {};
  const kd_status s = ctx.probe->model_run(
      inputs.data(), static_cast<int>(inputs.size()),
      [](void* user, const char* name, int rank, const int64_t* shape, const char* dtype, const char* device,
         const double* data, int64_t count) {
        static_cast<std::vector<app::OutputTensor>*>(user)->push_back(app::output_leaf(name, rank, shape, dtype, device, data, count));
      },
      [](void*, const char*) {}, &outputs, desc, sizeof desc);
  if (s.kind != KD_OK) return backend_failure(s);
  const auto single = app::output_rows(outputs, std::get<int64_t>(batch));
  if (const auto* why = std::get_if<std::string>(&single)) return Outcome::not_applicable("the model's split by rows: " + *why);
  std::vector<int64_t> rows;
  for (int64_t r = 0; r < std::get<int64_t>(batch); ++r) rows.push_back(r);
  return split_and_check(ctx, devices, unit, cpu_shards, rows, std::get<std::vector<std::vector<double>>>(single), true,
                         kModel);
}

}  // namespace kd
