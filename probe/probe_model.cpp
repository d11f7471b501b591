// The user's TorchScript model (torch::jit::load) and the training state's file format
// (torch::jit::pickle_save, what torch.save writes). The only translation unit that
// includes <torch/script.h>: it is the heavy one to compile.
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>

#include <c10/core/InferenceMode.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <sstream>

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

at::ScalarType scalar_type(int dtype) {
  switch (dtype) {
    case KD_FLOAT16: return at::kHalf;
    case KD_BFLOAT16: return at::kBFloat16;
    case KD_FLOAT64: return at::kDouble;
    case KD_INT64: return at::kLong;
    case KD_INT32: return at::kInt;
    case KD_BOOL: return at::kBool;
    default: return at::kFloat;
  }
}

std::string shape_text(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? "," : "") + std::to_string(sizes[i]);
  return s + "]";
}

// Given values, or uniform values in [low, high] from a fixed seed (integers inclusive).
at::Tensor make_input(const kd_model_input& in, std::mt19937_64& rng) {
  std::vector<int64_t> shape(in.shape, in.shape + in.rank);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  const bool integral = in.dtype == KD_INT64 || in.dtype == KD_INT32 || in.dtype == KD_BOOL;
  for (int64_t i = 0; i < n; ++i) {
    if (in.values) {
      v[static_cast<size_t>(i)] = in.values[i];
    } else if (integral) {
      std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(in.low), static_cast<int64_t>(in.high));
      v[static_cast<size_t>(i)] = static_cast<double>(d(rng));
    } else {
      std::uniform_real_distribution<double> d(in.low, in.high);
      v[static_cast<size_t>(i)] = d(rng);
    }
  }
  return at::from_blob(v.data(), shape, at::TensorOptions().dtype(at::kDouble)).to(scalar_type(in.dtype)).clone();
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

kd_status model_load(const char* path, int on_gpu, int index, char* desc, int desc_cap) {
  LoadedModel& m = loaded();
  m.module.reset();
  try {  // the file exists and is readable (the suite checked): a failure here is its format
    m.module = std::make_unique<torch::jit::Module>(torch::jit::load(path, at::Device(at::kCPU)));
  } catch (const c10::Error& e) {
    return make_status(KD_ERR_MODEL_FORMAT, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return make_status(KD_ERR_MODEL_FORMAT, e.what());
  }
  return guarded([&] {
    m.device = on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)) : at::Device(at::kCPU);
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
  return guarded([&] {
    LoadedModel& m = loaded();
    if (!m.module) throw std::runtime_error("no model loaded");
    std::mt19937_64 rng(1234);
    std::vector<at::Tensor> host;
    std::string text;
    for (int i = 0; i < count; ++i) {
      host.push_back(make_input(inputs[i], rng));
      text += (i ? "; " : "") + shape_text(host.back().sizes()) + " " + std::string(c10::toString(host.back().scalar_type()));
    }
    copy_to(desc, static_cast<size_t>(desc_cap), "input: " + text + ", device " + m.device.str());
    marker(user, "prepare_data");
    std::vector<c10::IValue> args;
    for (auto& t : host) args.emplace_back(t.to(m.device));
    if (m.device.is_cuda()) args.back().toTensor().to(at::kCPU);  // waits for the copies: then they really finished
    marker(user, "transfer");
    c10::InferenceMode guard;  // with eval() set at load: module behaviour and gradient tracking both off
    std::vector<c10::IValue> outs;
    flatten(m.module->forward(args), &outs);
    std::vector<at::Tensor> results;  // on the host: the copy waits for the device, so compute has finished
    for (const auto& o : outs)
      results.push_back(o.isTensor() ? o.toTensor().detach().to(at::kCPU).to(at::kDouble).contiguous() : at::Tensor());
    marker(user, "compute");
    for (size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].isTensor()) {
        const std::string kind = outs[i].tagKind();
        sink(user, -1, nullptr, kind.c_str(), nullptr, 0);
        continue;
      }
      const at::Tensor& h = results[i];
      const std::string dtype(c10::toString(outs[i].toTensor().scalar_type()));
      sink(user, static_cast<int>(h.dim()), h.sizes().data(), dtype.c_str(), h.data_ptr<double>(), h.numel());
    }
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
