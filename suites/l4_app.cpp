// L4 application: the user's *kind* of work on a small input that keeps its real
// characteristics, against a written contract. Off in a plain run; --layers app or --full.
// Built-in workloads: embeddings and one training step; with --model/--input, the user's
// model (TorchScript or an AOTInductor package). Facts go under /app; only shapes, dtypes and devices, never data.
#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "fixtures/app_contract.h"
#include "fixtures/layer_test.h"
#include "fixtures/model_format.h"
#include "fixtures/scratch_folder.h"
#include "runner/event_channel.h"
#include "suites/embeddings_input.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kExpectedDim = 16;
const app::Tolerance kTolerance{1e-5, 1e-4};  // float32: |device - cpu| <= 1e-5 + 1e-4 * |cpu|

Outcome broken(const app::Violation& v) {
  return Outcome::fail(Code::AppCheckFailed, fmt::format("rule '{}', {}: {}", v.rule, v.output, v.message));
}


}  // namespace

KD_LAYER(4, L4_App, "application", false);

KD_STEP(4, L4_App, Embeddings, "L4.embeddings", "L3.synchronize") {
  const kd_app_embed_in in = embeddings_input(!ctx.cpu_mode(), ctx.device_index());
  auto out = std::make_unique<kd_app_embed_out>();
  const kd_status s = ctx.probe->app_embeddings(&in, out.get());
  if (s.kind != KD_OK) return backend_failure(s);
  const app::Embeddings e = app::embeddings_from_probe(in, *out, kExpectedDim);
  const auto v = app::check_embeddings(e, kTolerance);
  const size_t n = e.device.size();
  ctx.fact("/app/embeddings",
           {{"input", out->input_desc}, {"output", out->output_desc}, {"count", out->count}, {"dim", out->dim},
            {"eval_mode", out->eval_mode != 0}, {"inference_mode", out->inference_mode != 0},
            {"cpu_reference", app::to_json(app::compare(e.device.data(), e.reference.data(), n, kTolerance), kTolerance)},
            {"batch_size_change", app::to_json(app::compare(e.rebatched.data(), e.device.data(), n, kTolerance), kTolerance)},
            {"contract", v ? json(v->rule) : json("passed")}});
  if (v) return broken(*v);
  if (!out->eval_mode || !out->inference_mode)
    return broken({"inference", "all", "the compute did not run under eval() and inference mode"});
  return Outcome::pass();
}

KD_STEP(4, L4_App, TrainingStep, "L4.training", "L3.synchronize") {
  ScratchFolder folder("kd-train");
  if (folder.path.empty()) return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the training state");
  kd_app_train_out out{};
  const kd_status s = ctx.probe->app_training(!ctx.cpu_mode(), ctx.device_index(), folder.path.c_str(), &out);
  if (s.kind != KD_OK) return backend_failure(s);
  ctx.fact("/app/training",
           {{"input", out.desc}, {"loss", std::isfinite(out.loss) ? json(out.loss) : json()},
            {"trainable_changed", out.trainable_changed}, {"trainable_total", out.trainable_total},
            {"frozen_changed", out.frozen_changed}, {"frozen_total", out.frozen_total},
            {"eval_without_dropout", out.eval_without_dropout != 0}, {"train_mode_restored", out.train_mode_restored != 0},
            {"state_identical", out.state_identical != 0}, {"state_bytes", out.state_bytes}});
  if (!std::isfinite(out.loss)) return broken({"loss", "loss", fmt::format("the loss is {}", out.loss)});
  if (out.trainable_changed != out.trainable_total)
    return broken({"update", "trainable parameters", fmt::format("{} of {} changed", out.trainable_changed, out.trainable_total)});
  if (out.frozen_changed != 0)
    return broken({"frozen", "frozen parameters", fmt::format("{} of {} changed", out.frozen_changed, out.frozen_total)});
  if (!out.eval_without_dropout) return broken({"eval_mode", "evaluation pass", "two evaluation passes disagree"});
  if (!out.train_mode_restored) return broken({"train_mode", "module", "train mode was not restored after evaluation"});
  if (!out.state_identical) return broken({"state", "saved state", "the state loaded back is not bit-identical"});
  return Outcome::pass();
}

}  // namespace kd

// The user's model (--model FILE --input SPEC.json): loads, runs on the spec's inputs, keeps the contract.
namespace kd {
namespace {

std::vector<kd_model_input> probe_inputs(const app::ModelSpec& spec) {
  std::vector<kd_model_input> v;
  for (const auto& in : spec.inputs) {
    kd_model_input p{};
    p.dtype = static_cast<int>(in.dtype);
    p.rank = static_cast<int>(in.shape.size());
    std::copy(in.shape.begin(), in.shape.end(), p.shape);
    p.low = in.low;
    p.high = in.high;
    p.values = in.values.empty() ? nullptr : in.values.data();
    p.value_count = static_cast<int64_t>(in.values.size());
    v.push_back(p);
  }
  return v;
}

// What the probe's callbacks fill during a model run.
struct RunSink {
  std::vector<app::OutputTensor> outputs;
};

// The probe finished a step: its marker, then the next step's stage, so that a hang there names it.
void step_finished(void*, const char* step) {
  static const std::map<std::string, std::string> kNext = {{"prepare_data", "transfer"}, {"transfer", "compute"}, {"compute", "write"}};
  events::marker(step, "L4.model_run");
  const auto next = kNext.find(step);
  if (next != kNext.end()) events::stage("L4.model_run." + next->second);
}

void collect_output(void* user, int rank, const int64_t* shape, const char* dtype, const double* data, int64_t count) {
  app::OutputTensor o;
  o.is_tensor = rank >= 0;
  o.dtype = dtype;
  if (rank > 0) o.shape.assign(shape, shape + rank);
  if (data) o.data.assign(data, data + count);
  static_cast<RunSink*>(user)->outputs.push_back(std::move(o));
}

}  // namespace

KD_STEP(4, L4_App, ModelLoad, "L4.model_load", "L3.synchronize") {
  if (!ctx.options.model) return Outcome::not_applicable("no --model given");
  if (auto why = app::model_file_problem(*ctx.options.model)) return Outcome::fail(Code::ModelLoadFailed, *why);
  // The format from the file's content, so that a wrong extension neither hides a model nor misnames the error.
  const app::ModelFile file = app::inspect_model_file(*ctx.options.model);
  ctx.fact("/app/model/format", app::format_key(file.format));
  if (!file.unsafe.empty())  // LibTorch's loader extracts a package's entries: refused before it sees them
    return Outcome::fail(Code::ModelLoadFailed, "refused: an archive entry would be extracted outside its folder: " + file.unsafe);
  if (!file.corrupt.empty())  // LibTorch would read past a truncated record without an error
    return Outcome::fail(Code::ModelLoadFailed, "wrongly formatted: a truncated or inconsistent archive: " + file.corrupt);
  if (file.format == app::ModelFormat::Unknown)
    return Outcome::fail(Code::ModelLoadFailed,
                         "wrongly formatted: neither a TorchScript model nor an AOTInductor package: " + file.why);
  char desc[256] = {};
  const int format = file.format == app::ModelFormat::AotiPackage ? KD_MODEL_AOTI : KD_MODEL_TORCHSCRIPT;
  const kd_status s =
      ctx.probe->model_load(ctx.options.model->c_str(), format, !ctx.cpu_mode(), ctx.device_index(), desc, sizeof desc);
  const std::string requested = ctx.cpu_mode() ? "cpu" : fmt::format("cuda:{}", ctx.device_index());
  if (s.kind == KD_ERR_MODEL_FORMAT)
    return Outcome::fail(Code::ModelLoadFailed, (format == KD_MODEL_AOTI ? "wrongly formatted: an AOTInductor package that does not load: "
                                                                         : "wrongly formatted: not a TorchScript model: ") + std::string(s.message));
  if (s.kind == KD_ERR_MODEL_DEVICE) return Outcome::fail(Code::ModelLoadFailed, app::device_mismatch(s.message, requested));
  if (s.kind == KD_ERR_UNSUPPORTED) return Outcome::fail(Code::ModelLoadFailed, s.message);
  if (s.kind != KD_OK) return backend_failure(s);
  ctx.fact("/app/model/model", desc);
  events::marker("load_weights", "L4.model_load");
  return Outcome::pass();
}

KD_STEP(4, L4_App, ModelContract, "L4.model_run", "L4.model_load") {
  if (!ctx.options.model) return Outcome::not_applicable("no --model given");
  const auto spec = app::read_model_spec(*ctx.options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return Outcome::fail(Code::UsageError, "--input: " + *why);
  const auto inputs = probe_inputs(std::get<app::ModelSpec>(spec));
  RunSink run;
  const std::vector<app::OutputTensor>& outputs = run.outputs;
  char desc[256] = {};
  events::stage("L4.model_run.prepare_data");
  const kd_status s = ctx.probe->model_run(inputs.data(), static_cast<int>(inputs.size()), collect_output, step_finished,
                                           &run, desc, sizeof desc);
  if (s.kind != KD_OK) return backend_failure(s);
  json shown = json::array();
  for (const auto& o : outputs) shown.push_back(o.is_tensor ? app::shape_text(o.shape) + " " + o.dtype : o.dtype);
  const auto v = app::check_outputs(std::get<app::ModelSpec>(spec), outputs);
  ctx.fact("/app/model/input", desc);
  ctx.fact("/app/model/outputs", shown);
  const app::ModelSpec& ms = std::get<app::ModelSpec>(spec);
  if (ms.reference && !outputs.empty()) {  // the measured agreement, whatever the verdict
    const double cos = app::min_reference_cosine(*ms.reference, outputs[0]);
    ctx.fact("/app/model/reference", {{"vectors", ms.reference->embeddings.size()}, {"dim", ms.reference->embeddings[0].size()},
                                      {"min_cosine", std::isfinite(cos) ? json(cos) : json()}, {"threshold", ms.reference->min_cosine}});
  }
  ctx.fact("/app/model/contract", v ? v->rule : "passed");
  events::marker("write", "L4.model_run");  // the outputs' facts are out
  return v ? broken(*v) : Outcome::pass();
}

}  // namespace kd
