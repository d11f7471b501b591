#include "model_rerun.h"

#include <string>

#include "contract/events.h"
#include "contract/run_plan.h"
#include "fixtures/app_contract_io.h"
#include "fixtures/child_process.h"
#include "fixtures/model_format.h"
#include "fixtures/probe_loader.h"
#include "verdict/codes.h"

namespace kd {
namespace {

int failed(Code code, const std::string& why) {
  events::emit(events::JobFailed{std::string(name(code)), why});
  return exit_code(code);
}

}  // namespace

int run_model_rerun(const Plan& plan) {
  speak_as_job();
  const Options& options = plan.options;
  const auto spec = app::read_model_spec(*options.input);
  if (const auto* why = std::get_if<std::string>(&spec)) return failed(Code::UsageError, "--input: " + *why);
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return failed(probe.code, probe.message);
  const app::ModelFile file = app::inspect_model_file(*options.model);
  const int format = file.format == app::ModelFormat::AotiPackage ? KD_MODEL_AOTI : KD_MODEL_TORCHSCRIPT;
  char desc[256] = {};
  kd_status s = probe.probe->model_load(options.model->c_str(), format, /*on_gpu=*/0, 0, desc, sizeof desc);
  if (s.kind != KD_OK) return failed(Code::ModelLoadFailed, s.message);
  const auto inputs = app::probe_inputs(std::get<app::ModelSpec>(spec));
  s = probe.probe->model_run(
      inputs.data(), static_cast<int>(inputs.size()),
      [](void*, const char*, int, const int64_t*, const char*, const char*, const double*, int64_t) {},
      [](void*, const char*) {}, nullptr, desc, sizeof desc);
  if (s.kind != KD_OK) return failed(Code::RuntimeError, s.message);
  events::emit(events::JobDone{});
  return 0;
}

}  // namespace kd
