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

std::string key_text(const c10::IValue& k) {
  if (k.isString()) return k.toStringRef();
  std::ostringstream s;
  s << k;
  return s.str();
}

// Depth first, in the model's own order (a dict's insertion order, as Python sees it); each leaf named by
// its path, parts joined by "."; a bare tensor is "0", like the first element of a tuple.
void flatten(const c10::IValue& v, const std::string& path, std::vector<ModelOutput>* out) {
  auto child = [&](const std::string& part) { return path.empty() ? part : path + "." + part; };
  if (v.isTuple()) {
    const auto& elements = v.toTupleRef().elements();
    for (size_t i = 0; i < elements.size(); ++i) flatten(elements[i], child(std::to_string(i)), out);
  } else if (v.isList()) {
    const auto list = v.toListRef();
    for (size_t i = 0; i < list.size(); ++i) flatten(list[i], child(std::to_string(i)), out);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) flatten(e.value(), child(key_text(e.key())), out);
  } else {
    const std::string name = path.empty() ? "0" : path;
    out->push_back(v.isTensor() ? ModelOutput{name, v.toTensor(), ""} : ModelOutput{name, {}, v.tagKind()});
  }
}

std::string with_operation(const std::string& text) {
  const std::string op = failing_operation(text);
  return summary_line(text) + (op.empty() ? "" : " (operation: " + op + ")");
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
  ModelForward forward;
  if (aoti_loaded()) {
    forward = [](const std::vector<at::Tensor>& args, const std::vector<std::string>&) {
      std::vector<ModelOutput> outs;  // a flat list of tensors: named by the package's call spec, else by position
      const std::vector<at::Tensor> flat = aoti_run(args);
      const std::vector<std::string> names = aoti_output_names();
      for (size_t i = 0; i < flat.size(); ++i)
        outs.push_back({names.size() == flat.size() ? names[i] : std::to_string(i), flat[i], ""});
      return outs;
    };
  } else if (m.module) {
    forward = [&m](const std::vector<at::Tensor>& args, const std::vector<std::string>& names) {
      std::vector<c10::IValue> positional;
      torch::jit::Kwargs keywords;
      for (size_t i = 0; i < args.size(); ++i) {
        if (names[i].empty()) positional.emplace_back(args[i]);
        else keywords.emplace(names[i], args[i]);
      }
      std::vector<ModelOutput> outs;
      try {
        flatten(m.module->get_method("forward")(std::move(positional), keywords), "", &outs);
      } catch (const c10::Error& e) {  // the interpreter's error, and the operation that raised it
        throw std::runtime_error(with_operation(e.what_without_backtrace()));
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(with_operation(e.what()));
      }
      return outs;
    };
  } else {
    return make_status(KD_ERR_RUNTIME, "no model loaded");
  }
  return run_model(inputs, count, m.device, forward, sink, marker, user, desc, desc_cap);
}

kd_status model_signature(char* out, int cap) {
  LoadedModel& m = loaded();
  if (!m.module) return make_status(KD_ERR_UNSUPPORTED, "the loaded model has no TorchScript signature");
  return guarded([&] {
    const auto& arguments = m.module->get_method("forward").function().getSchema().arguments();
    std::string text;
    for (size_t i = 1; i < arguments.size(); ++i)  // 0 is self
      text += arguments[i].name() + "\t" + arguments[i].type()->str() + "\t" +
              (arguments[i].default_value() ? "1" : "0") + "\n";
    if (text.size() >= static_cast<size_t>(cap)) throw std::length_error("forward() has too many parameters to describe");
    copy_to(out, static_cast<size_t>(cap), text);
  });
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
