#include "shard_job.h"

#include <cstdio>
#include <memory>
#include <vector>

#include "contract/events.h"
#include "contract/run_plan.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/batch_rows.h"
#include "fixtures/child_process.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/model_format.h"
#include "fixtures/probe_loader.h"

namespace kd {
namespace {

int failed(Code code, const std::string& why) {
  events::emit(events::JobFailed{std::string(name(code)), why});
  return code == Code::OutOfMemory ? 9 : 1;
}

int failed(const kd_status& s) { return failed(s.kind == KD_ERR_OUT_OF_MEMORY ? Code::OutOfMemory : Code::RuntimeError, s.message); }

int done(std::vector<int64_t> ids, std::vector<std::vector<double>> rows) {
  events::emit(events::ShardRows{std::move(ids), std::move(rows)});
  return 0;
}

// --model's shard: these rows of every input (made whole, then taken, as in the whole run), its outputs' rows.
int model_shard(const Options& options, const kd_probe_table& probe, const std::vector<int64_t>& rows) {
  const auto spec = app::read_model_spec(*options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return failed(Code::RuntimeError, "--input: " + *why);
  const app::ModelSpec& ms = std::get<app::ModelSpec>(spec);
  const auto batch = app::input_batch(ms);
  if (const auto* why = std::get_if<std::string>(&batch)) return failed(Code::RuntimeError, *why);
  for (int64_t r : rows)
    if (r < 0 || r >= std::get<int64_t>(batch)) return failed(Code::RuntimeError, "a row outside the batch");
  for (const auto& e : options.extensions) {  // the custom operators the model needs, as in the whole run
    kd_extension_out loaded{};
    const kd_status es = probe.extension_load(e.c_str(), &loaded);
    if (es.kind != KD_OK) return failed(es);
  }
  const app::ModelFile file = app::inspect_model_file(*options.model);
  const int format = file.format == app::ModelFormat::AotiPackage ? KD_MODEL_AOTI : KD_MODEL_TORCHSCRIPT;
  char desc[256] = {};
  kd_status s = probe.model_load(options.model->c_str(), format, !options.cpu_mode(), options.device_index, desc, sizeof desc);
  if (s.kind != KD_OK) return failed(s);
  std::vector<kd_model_input> inputs = app::probe_inputs(ms);
  for (auto& in : inputs) {
    in.rows = rows.data();
    in.row_count = static_cast<int64_t>(rows.size());
  }
  std::vector<app::OutputTensor> outputs;
  s = probe.model_run(
      inputs.data(), static_cast<int>(inputs.size()),
      [](void* user, const char* name, int rank, const int64_t* shape, const char* dtype, const char* device,
         const double* data, int64_t count) {
        static_cast<std::vector<app::OutputTensor>*>(user)->push_back(
            app::output_leaf(name, rank, shape, dtype, device, data, count));
      },
      [](void*, const char*) {}, &outputs, desc, sizeof desc);
  if (s.kind != KD_OK) return failed(s);
  const auto got = app::output_rows(outputs, static_cast<int64_t>(rows.size()));
  if (const auto* why = std::get_if<std::string>(&got)) return failed(Code::RuntimeError, *why);
  return done(rows, std::get<std::vector<std::vector<double>>>(got));
}

}  // namespace

int run_shard_job(const Plan& plan) {
  speak_as_job();
  const Options& options = plan.options;
  const bool gpu = !options.cpu_mode();
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return failed(probe.code, probe.message);
  if (options.fault == "oom") {  // TEST ONLY: a real allocation this device cannot satisfy (1 PiB)
    kd_status s = probe.probe->tiny_inputs(gpu, options.device_index, KD_FAULT_OUT_OF_MEMORY);
    float product[4];
    if (s.kind == KD_OK) s = probe.probe->tiny_product(product);
    if (s.kind != KD_OK) return failed(s);
  }
  const std::vector<int64_t>& wanted = plan.role.shard_ids;
  if (options.model) return model_shard(options, *probe.probe, wanted);
  // This shard's entries of the L4 set, in the set's order.
  const kd_app_embed_in set = embeddings_input(gpu, options.device_index);
  kd_app_embed_in in = set;
  in.count = 0;
  for (int64_t id : wanted) {
    for (int i = 0; i < set.count; ++i)
      if (set.ids[i] == id && in.count < KD_APP_MAX_ITEMS) {  // a repeated id never overruns the set
        in.ids[in.count] = set.ids[i];
        in.lengths[in.count++] = set.lengths[i];
      }
  }
  std::vector<int64_t> ids;
  std::vector<std::vector<double>> rows;
  if (in.count > 0) {  // more GPUs than inputs: a shard may have nothing to do
    auto out = std::make_unique<kd_app_embed_out>();
    const kd_status s = probe.probe->app_embeddings(&in, out.get());
    if (s.kind != KD_OK) return failed(s);
    for (int r = 0; r < out->count; ++r) {
      ids.push_back(out->ids[r]);
      rows.emplace_back(out->device + r * out->dim, out->device + (r + 1) * out->dim);
    }
  }
  return done(std::move(ids), std::move(rows));
}

}  // namespace kd
