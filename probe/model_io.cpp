#include "model_io.h"

#include <ATen/ops/from_blob.h>
#include <c10/core/InferenceMode.h>

#include <random>

#include "probe_status.h"

namespace kd::probe {
namespace {

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

}  // namespace

kd_status run_model(const kd_model_input* inputs, int count, at::Device device, const ModelForward& forward,
                    kd_output_sink sink, kd_marker_sink marker, void* user, char* desc, int desc_cap) {
  return guarded([&] {
    std::mt19937_64 rng(1234);
    std::vector<at::Tensor> host;
    std::vector<std::string> names;
    std::string text;
    for (int i = 0; i < count; ++i) {
      names.push_back(inputs[i].name ? inputs[i].name : "");
      host.push_back(make_input(inputs[i], rng));
      if (inputs[i].rows && host.back().dim() > 0)  // a shard's rows of the whole input (L4 across devices)
        host.back() = host.back().index_select(
            0, at::from_blob(const_cast<int64_t*>(inputs[i].rows), {inputs[i].row_count}, at::kLong).clone());
      text += (i ? "; " : "") + shape_text(host.back().sizes()) + " " + std::string(c10::toString(host.back().scalar_type()));
      if (inputs[i].on_host && !device.is_cpu()) text += " (kept on cpu)";
    }
    copy_to(desc, static_cast<size_t>(desc_cap), "input: " + text + ", device " + device.str());
    marker(user, "prepare_data");
    std::vector<at::Tensor> args;
    for (int i = 0; i < count; ++i) args.push_back(inputs[i].on_host ? host[i] : host[i].to(device));  // spec "device": "cpu"
    if (device.is_cuda() && !args.empty()) args.back().to(at::kCPU);  // waits for the copies: then they really finished
    marker(user, "transfer");
    c10::InferenceMode guard;  // with eval() set at load: module behaviour and gradient tracking both off
    const std::vector<ModelOutput> outs = forward(args, names);
    std::vector<at::Tensor> results;  // on the host: the copy waits for the device, so compute has finished
    for (const auto& o : outs)
      results.push_back(o.tensor.defined() ? o.tensor.detach().to(at::kCPU).to(at::kDouble).contiguous() : at::Tensor());
    marker(user, "compute");
    for (size_t i = 0; i < outs.size(); ++i) {
      const char* name = outs[i].name.c_str();
      if (!outs[i].tensor.defined()) {
        sink(user, name, -1, nullptr, outs[i].kind.c_str(), "", nullptr, 0);
        continue;
      }
      const at::Tensor& h = results[i];
      const std::string dtype(c10::toString(outs[i].tensor.scalar_type())), where = outs[i].tensor.device().str();
      sink(user, name, static_cast<int>(h.dim()), h.sizes().data(), dtype.c_str(), where.c_str(), h.data_ptr<double>(), h.numel());
    }
  });
}

}  // namespace kd::probe
