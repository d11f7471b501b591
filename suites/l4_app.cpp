// L4 application: the user's *kind* of work on a small input that keeps its real
// characteristics, against a written contract. Off in a plain run; --layers app or --full.
// Built-in workloads: embeddings and one training step; with --model/--input, the user's
// model (TorchScript or an AOTInductor package). Facts go under /app; only shapes, dtypes and devices, never data.
#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "contract/report_parts.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/embeddings_input.h"
#include "fixtures/extensions.h"
#include "fixtures/child_process.h"
#include "fixtures/layer_test.h"
#include "fixtures/worker_context.h"
#include "suites/steps.h"
#include "fixtures/model_format.h"
#include "fixtures/scratch_folder.h"
#include "contract/events.h"
#include "suites/l4_extensions.h"
#include "verdict/app_contract.h"

namespace kd {
namespace {

using nlohmann::json;

constexpr int kExpectedDim = 16;
const app::Tolerance kTolerance{1e-5, 1e-4};  // float32: |device - cpu| <= 1e-5 + 1e-4 * |cpu|

Outcome broken(const app::Violation& v) {
  return Outcome::fail(Code::AppCheckFailed, fmt::format("rule '{}', {}: {}", v.rule, v.output, v.message));
}

// Where one agreement of the embeddings goes: the CPU reference's, or the other batch size's.
struct AgreementRows {
  report::Field<std::optional<double>> max_abs, max_rel;
  report::Field<double> atol, rtol;
  report::Field<bool> within;
};
constexpr AgreementRows kCpuReference{report::cpu_reference_max_abs_error, report::cpu_reference_max_rel_error,
                                      report::cpu_reference_atol, report::cpu_reference_rtol, report::cpu_reference_within};
constexpr AgreementRows kRebatched{report::rebatched_max_abs_error, report::rebatched_max_rel_error, report::rebatched_atol,
                                   report::rebatched_rtol, report::rebatched_within};

// A non-finite error (NaN on either side) is null: JSON has no NaN.
void put_agreement(json* emb, const AgreementRows& rows, const app::Agreement& a) {
  auto finite = [](double v) { return std::isfinite(v) ? std::optional(v) : std::nullopt; };
  report::put(emb, rows.max_abs, finite(a.max_abs));
  report::put(emb, rows.max_rel, finite(a.max_rel));
  report::put(emb, rows.atol, kTolerance.atol);
  report::put(emb, rows.rtol, kTolerance.rtol);
  report::put(emb, rows.within, a.within);
}


}  // namespace


Outcome l4_embeddings(WorkerContext& ctx) {
  const kd_app_embed_in in = embeddings_input(!ctx.cpu_mode(), ctx.device_index());
  auto out = std::make_unique<kd_app_embed_out>();
  const kd_status s = ctx.probe->app_embeddings(&in, out.get());
  if (s.kind != KD_OK) return backend_failure(s);
  const app::Embeddings e = app::embeddings_from_probe(in, *out, kExpectedDim);
  const auto v = app::check_embeddings(e, kTolerance);
  const size_t n = e.device.size();
  json emb = json::object();
  report::put(&emb, report::app_embeddings_input, out->input_desc);
  report::put(&emb, report::app_embeddings_output, out->output_desc);
  report::put(&emb, report::app_embeddings_count, out->count);
  report::put(&emb, report::app_embeddings_dim, out->dim);
  report::put(&emb, report::app_embeddings_eval_mode, out->eval_mode != 0);
  report::put(&emb, report::app_embeddings_inference_mode, out->inference_mode != 0);
  put_agreement(&emb, kCpuReference, app::compare(e.device.data(), e.reference.data(), n, kTolerance));
  put_agreement(&emb, kRebatched, app::compare(e.rebatched.data(), e.device.data(), n, kTolerance));
  report::put(&emb, report::app_embeddings_contract, v ? v->rule : "passed");
  ctx.fact(report::app_embeddings, emb);
  if (v) return broken(*v);
  if (!out->eval_mode || !out->inference_mode)
    return broken({"inference", "all", "the compute did not run under eval() and inference mode"});
  return Outcome::pass();
}

Outcome l4_training_step(WorkerContext& ctx) {
  ScratchFolder folder("kd-train");
  if (folder.path.empty()) return Outcome::fail(Code::RuntimeError, "cannot create a scratch folder for the training state");
  kd_app_train_out out{};
  const kd_status s = ctx.probe->app_training(!ctx.cpu_mode(), ctx.device_index(), folder.path.c_str(), &out);
  if (s.kind != KD_OK) return backend_failure(s);
  json tr = json::object();
  report::put(&tr, report::app_training_input, out.desc);
  report::put(&tr, report::app_training_loss, std::isfinite(out.loss) ? std::optional<double>(out.loss) : std::nullopt);
  report::put(&tr, report::app_training_trainable_changed, out.trainable_changed);
  report::put(&tr, report::app_training_trainable_total, out.trainable_total);
  report::put(&tr, report::app_training_frozen_changed, out.frozen_changed);
  report::put(&tr, report::app_training_frozen_total, out.frozen_total);
  report::put(&tr, report::app_training_eval_without_dropout, out.eval_without_dropout != 0);
  report::put(&tr, report::app_training_train_mode_restored, out.train_mode_restored != 0);
  report::put(&tr, report::app_training_state_identical, out.state_identical != 0);
  report::put(&tr, report::app_training_state_bytes, out.state_bytes);
  ctx.fact(report::app_training, tr);
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

void collect_output(void* user, const char* name, int rank, const int64_t* shape, const char* dtype, const char* device,
                    const double* data, int64_t count) {
  static_cast<RunSink*>(user)->outputs.push_back(app::output_leaf(name, rank, shape, dtype, device, data, count));
}

// Each output leaf as the report lists it: name, shape, dtype and device (a non-tensor: its kind).
json output_list(const std::vector<app::OutputTensor>& outputs) {
  json list = json::array();
  for (const auto& o : outputs) {
    json entry = json::object();
    report::put(&entry, report::output_name, o.name);
    report::put(&entry, report::output_tensor, o.is_tensor);
    report::put(&entry, report::output_shape, o.is_tensor ? json(o.shape) : json());
    report::put(&entry, report::output_dtype, o.dtype);
    report::put(&entry, report::output_device, o.is_tensor ? std::optional(o.device) : std::nullopt);
    list.push_back(entry);
  }
  return list;
}

// The spec's inputs against forward()'s parameters, before anything runs; nothing when they fit or when the
// format has no signature (an AOTInductor package takes its inputs by position).
std::optional<app::Violation> signature_problem(const WorkerContext& ctx, const app::ModelSpec& spec) {
  char text[4096] = {};
  if (ctx.probe->model_signature(text, sizeof text).kind != KD_OK) return std::nullopt;
  const std::vector<app::Parameter> params = app::parse_signature(text);
  ctx.fact(report::app_model_signature, app::signature_text(params));
  return app::check_signature(spec.inputs, params);
}

bool device_side_assert(const std::string& message) { return message.find("device-side assert triggered") != std::string::npos; }

// A device-side assert leaves this process's CUDA context unusable: the same model and input run on the CPU
// in a fresh process (this executable, its plan a CPU re-run), whose error names what went wrong and where.
Outcome explain_device_assert(const WorkerContext& ctx, const std::string& gpu_error) {
  std::string cpu = "could not be run", cpu_error;
  ScratchFolder folder("kd-rerun");
  if (!folder.path.empty()) {
    const std::string log = folder.path + "/rerun.log";
    Plan plan;
    plan.role.kind = ProcessRole::ModelRerun;
    plan.options.device = "cpu";
    plan.options.model = ctx.options.model;
    plan.options.input = ctx.options.input;
    const pid_t pid = start_job(ctx, plan, folder.path, log);
    const int status = pid < 0 ? -1 : wait_exit(pid);
    const JobOutput job = pid < 0 ? JobOutput{} : read_job(log);
    if (job.last<events::JobDone>()) cpu = "ran without error";
    else if (const auto* failed = job.last<events::JobFailed>()) cpu_error = failed->message, cpu = "failed";
    else cpu = pid < 0 ? "could not be started" : "ended with " + how_it_ended(status);
  }
  json assert_facts = json::object();
  report::put(&assert_facts, report::device_assert_gpu_error, gpu_error);
  report::put(&assert_facts, report::device_assert_cpu_rerun, cpu);
  report::put(&assert_facts, report::device_assert_cpu_error, report::unless_empty(cpu_error));
  report::put(&assert_facts, report::device_assert_gpu_process,
              "discarded: a device-side assert leaves the process's CUDA context unusable, so the CPU run was a fresh process");
  ctx.fact(report::app_model_device_assert, assert_facts);
  const std::string on_cpu = cpu_error.empty() ? "the same model and input on the CPU, in a fresh process, " + cpu
                                               : "on the CPU, in a fresh process: " + cpu_error;
  return Outcome::fail(Code::RuntimeError, gpu_error + "; " + on_cpu);
}

}  // namespace

Outcome l4_extension_load(WorkerContext& ctx) { return load_extensions(ctx); }

Outcome l4_model_load(WorkerContext& ctx) {
  if (!ctx.options.model) return Outcome::not_applicable("no --model given");
  if (auto why = app::model_file_problem(*ctx.options.model)) return Outcome::fail(Code::ModelLoadFailed, *why);
  // The format from the file's content, so that a wrong extension neither hides a model nor misnames the error.
  const app::ModelFile file = app::inspect_model_file(*ctx.options.model);
  ctx.fact(report::app_model_format, app::format_key(file.format));
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
  if (s.kind == KD_ERR_MODEL_FORMAT)  // a custom operator no --extension registered: not a format problem
    if (auto op = ext::unregistered_operator(s.message)) return Outcome::fail(Code::ModelLoadFailed, *op);
  if (s.kind == KD_ERR_MODEL_FORMAT)
    return Outcome::fail(Code::ModelLoadFailed, (format == KD_MODEL_AOTI ? "wrongly formatted: an AOTInductor package that does not load: "
                                                                         : "wrongly formatted: not a TorchScript model: ") + std::string(s.message));
  if (s.kind == KD_ERR_MODEL_DEVICE) return Outcome::fail(Code::ModelLoadFailed, app::device_mismatch(s.message, requested));
  if (s.kind == KD_ERR_UNSUPPORTED) return Outcome::fail(Code::ModelLoadFailed, s.message);
  if (s.kind != KD_OK) return backend_failure(s);
  ctx.fact(report::app_model_model, desc);
  events::marker("load_weights", "L4.model_load");
  return Outcome::pass();
}

Outcome l4_model_contract(WorkerContext& ctx) {
  if (!ctx.options.model) return Outcome::not_applicable("no --model given");
  const auto spec = app::read_model_spec(*ctx.options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return Outcome::fail(Code::UsageError, "--input: " + *why);
  const app::ModelSpec& ms = std::get<app::ModelSpec>(spec);
  if (const auto v = signature_problem(ctx, ms)) {
    ctx.fact(report::app_model_contract, v->rule);
    return broken(*v);
  }
  const auto inputs = app::probe_inputs(ms);
  RunSink run;
  const std::vector<app::OutputTensor>& outputs = run.outputs;
  char desc[256] = {};
  events::stage("L4.model_run.prepare_data");
  const kd_status s = ctx.probe->model_run(inputs.data(), static_cast<int>(inputs.size()), collect_output, step_finished,
                                           &run, desc, sizeof desc);
  // TEST ONLY (--inject-fault device-assert): the run reads as a GPU's device-side assert, whatever it did.
  const bool injected = ctx.fault("device-assert");
  const std::string error = injected ? "CUDA error: device-side assert triggered (injected by --inject-fault device-assert)" : s.message;
  if (*desc) ctx.fact(report::app_model_input, desc);  // also when it failed: where each input was is half the story
  if (device_side_assert(error) && (!ctx.cpu_mode() || injected)) return explain_device_assert(ctx, error);
  if (s.kind != KD_OK) return backend_failure(s);
  json shown = json::array();
  for (const auto& o : outputs) shown.push_back(o.is_tensor ? app::shape_text(o.shape) + " " + o.dtype : o.dtype);
  const auto v = app::check_outputs(ms, outputs);
  ctx.fact(report::app_model_outputs, shown);
  ctx.fact(report::app_model_output_list, output_list(outputs));
  const auto ref_at = ms.reference ? app::find_output(ms.reference->output, outputs) : std::nullopt;
  if (ref_at) {  // the measured agreement, whatever the verdict
    const double cos = app::min_reference_cosine(*ms.reference, outputs[*ref_at]);
    json reference = json::object();
    report::put(&reference, report::model_reference_vectors, ms.reference->embeddings.size());
    report::put(&reference, report::model_reference_dim, ms.reference->embeddings[0].size());
    report::put(&reference, report::model_reference_min_cosine, std::isfinite(cos) ? std::optional(cos) : std::nullopt);
    report::put(&reference, report::model_reference_threshold, ms.reference->min_cosine);
    ctx.fact(report::app_model_reference, reference);
  }
  ctx.fact(report::app_model_contract, v ? v->rule : "passed");
  events::marker("write", "L4.model_run");  // the outputs' facts are out
  return v ? broken(*v) : Outcome::pass();
}

}  // namespace kd
