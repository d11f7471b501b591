// The user's model: TorchScript (torch::jit::load) here, AOTInductor packages through probe_aoti.cpp,
// both run by model_io.cpp; and the training state's file format (torch::jit::pickle_save, what
// torch.save writes). The only translation unit that includes <torch/script.h>: the heavy one to compile.
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>

#include "model_io.h"
#include "probe_aoti.h"
#include "probe_app.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

struct LoadedModel {
  std::unique_ptr<torch::jit::Module> module;
  at::Device device = at::Device(at::kCPU);
};
LoadedModel& loaded() {
  static LoadedModel m;
  return m;
}

void flatten(const c10::IValue& v, std::vector<c10::IValue>* out) {
  if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, out);
  } else {
    out->push_back(v);
  }
}

}  // namespace

kd_status model_load(const char* path, int format, int on_gpu, int index, char* desc, int desc_cap) {
  LoadedModel& m = loaded();
  m.module.reset();
  aoti_unload();
  m.device = on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)) : at::Device(at::kCPU);
  if (format == KD_MODEL_AOTI) return aoti_load(path, m.device, desc, desc_cap);
  try {  // the file exists and is readable (the suite checked): a failure here is its format
    m.module = std::make_unique<torch::jit::Module>(torch::jit::load(path, at::Device(at::kCPU)));
  } catch (const c10::Error& e) {
    return make_status(KD_ERR_MODEL_FORMAT, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_status(KD_ERR_MODEL_FORMAT, e.what());
  }
  return guarded([&] {
    m.module->to(m.device);
    m.module->eval();
    int64_t params = 0;
    std::string dtype = "none";
    for (const auto& p : m.module->parameters()) {
      params += p.numel();
      dtype = std::string(c10::toString(p.scalar_type()));
    }
    copy_to(desc, static_cast<size_t>(desc_cap),
            "TorchScript model, " + std::to_string(params) + " parameter values (" + dtype + "), device " + m.device.str());
  });
}

kd_status model_run(const kd_model_input* inputs, int count, kd_output_sink sink, kd_marker_sink marker, void* user,
                    char* desc, int desc_cap) {
  LoadedModel& m = loaded();
  Forward forward;
  if (aoti_loaded()) {
    forward = [](const std::vector<at::Tensor>& args) {
      std::vector<ModelOutput> outs;
      for (auto& t : aoti_run(args)) outs.push_back({t, ""});
      return outs;
    };
  } else if (m.module) {
    forward = [&m](const std::vector<at::Tensor>& args) {
      std::vector<c10::IValue> values;
      flatten(m.module->forward(std::vector<c10::IValue>(args.begin(), args.end())), &values);
      std::vector<ModelOutput> outs;
      for (const auto& v : values) outs.push_back(v.isTensor() ? ModelOutput{v.toTensor(), ""} : ModelOutput{{}, v.tagKind()});
      return outs;
    };
  } else {
    return make_status(KD_ERR_RUNTIME, "no model loaded");
  }
  return run_model(inputs, count, m.device, forward, sink, marker, user, desc, desc_cap);
}

uint64_t save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path) {
  c10::List<at::Tensor> list;
  for (const auto& t : tensors) list.push_back(t.detach().to(at::kCPU));
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(list));
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f.flush()) throw std::runtime_error("cannot write the training state");
  return bytes.size();
}

std::vector<at::Tensor> load_tensors(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const c10::IValue v = torch::jit::pickle_load(bytes);
  std::vector<at::Tensor> out;
  for (const auto& t : v.toTensorList()) out.push_back(t);
  return out;
}

}  // namespace kd::probe
