#include "shard_job.h"

#include <charconv>
#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures/app_contract_io.h"
#include "fixtures/batch_rows.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/model_format.h"
#include "fixtures/probe_loader.h"

namespace kd {
namespace {

using nlohmann::json;

int say(const json& line, int code) {
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
  return code;
}

int failed(const kd_status& s) {
  const bool oom = s.kind == KD_ERR_OUT_OF_MEMORY;
  return say({{"error", s.message}, {"out_of_memory", oom}}, oom ? 9 : 1);
}

std::vector<int64_t> wanted_ids(const std::string& list) {
  std::vector<int64_t> ids;
  std::stringstream wanted(list);
  for (std::string text; std::getline(wanted, text, ',');) {
    int64_t id = -1;  // digits only (the command line checked), but perhaps too many for an int64: no match
    std::from_chars(text.data(), text.data() + text.size(), id);
    ids.push_back(id);
  }
  return ids;
}

// --model's shard: these rows of every input (made whole, then taken, as in the whole run), its outputs' rows.
int model_shard(const Options& options, const kd_probe_table& probe, const std::vector<int64_t>& rows) {
  const auto spec = app::read_model_spec(*options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return say({{"error", "--input: " + *why}, {"out_of_memory", false}}, 1);
  const app::ModelSpec& ms = std::get<app::ModelSpec>(spec);
  const auto batch = app::input_batch(ms);
  if (const auto* why = std::get_if<std::string>(&batch)) return say({{"error", *why}, {"out_of_memory", false}}, 1);
  for (int64_t r : rows)
    if (r < 0 || r >= std::get<int64_t>(batch)) return say({{"error", "a row outside the batch"}, {"out_of_memory", false}}, 1);
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
  if (const auto* why = std::get_if<std::string>(&got)) return say({{"error", *why}, {"out_of_memory", false}}, 1);
  return say({{"ids", rows}, {"rows", std::get<std::vector<std::vector<double>>>(got)}, {"error", nullptr}}, 0);
}

}  // namespace

int run_shard_job(const Options& options) {
  const bool gpu = !options.cpu_mode();
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return say({{"error", probe.message}, {"out_of_memory", false}}, 1);
  if (options.fault == "oom") {  // TEST ONLY: a real allocation this device cannot satisfy (1 PiB)
    kd_status s = probe.probe->tiny_inputs(gpu, options.device_index, KD_FAULT_OUT_OF_MEMORY);
    float product[4];
    if (s.kind == KD_OK) s = probe.probe->tiny_product(product);
    if (s.kind != KD_OK) return failed(s);
  }
  const std::vector<int64_t> wanted = wanted_ids(*options.shard_job);
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
  json ids = json::array(), rows = json::array();
  if (in.count > 0) {  // more GPUs than inputs: a shard may have nothing to do
    auto out = std::make_unique<kd_app_embed_out>();
    const kd_status s = probe.probe->app_embeddings(&in, out.get());
    if (s.kind != KD_OK) return failed(s);
    for (int r = 0; r < out->count; ++r) {
      ids.push_back(out->ids[r]);
      rows.push_back(std::vector<double>(out->device + r * out->dim, out->device + (r + 1) * out->dim));
    }
  }
  return say({{"ids", ids}, {"rows", rows}, {"error", nullptr}}, 0);
}

}  // namespace kd
