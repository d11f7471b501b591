// Layer L4's built-in workloads, deterministic from a fixed seed: the embedding model of
// embedding_model.h and one training step on a small model with a frozen layer and dropout.
// Weights come from our own generator, so every LibTorch version sees the same numbers.
// Only shapes, dtypes and devices are described.
#include <ATen/core/Tensor.h>
#include <ATen/ops/dropout.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "embedding_model.h"
#include "probe_app.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

using embed::EmbeddingModel;
using embed::fixed;
using embed::target;

std::string where(const at::Device& d) { return d.str(); }

// Runs every input in batches of batch_size on device; returns the vectors in batching order.
at::Tensor embed_all(const EmbeddingModel& m, const kd_app_embed_in& in, const std::vector<int>& order, int batch_size,
                     const at::Device& device) {
  return embed::run_batches(m, embed::host_batches(in, order, batch_size), device);
}

void to_host(const at::Tensor& t, float* out) {
  const at::Tensor h = t.detach().to(at::kCPU).contiguous();
  std::memcpy(out, h.data_ptr<float>(), static_cast<size_t>(h.numel()) * sizeof(float));
}

bool same_bits(const at::Tensor& a, const at::Tensor& b) {
  const at::Tensor x = a.detach().to(at::kCPU).contiguous(), y = b.detach().to(at::kCPU).contiguous();
  return x.sizes() == y.sizes() && x.scalar_type() == y.scalar_type() &&
         std::memcmp(x.data_ptr(), y.data_ptr(), static_cast<size_t>(x.nbytes())) == 0;
}

// The training model: a frozen first layer, dropout, a trainable second layer.
struct TrainModel {
  at::Tensor w1, w2, b2;
  bool training = true;
  explicit TrainModel(const at::Device& d)
      : w1(fixed({8, 16}, 21, 1.0f, d)), w2(fixed({16, 4}, 22, 0.5f, d).requires_grad_(true)),
        b2(fixed({4}, 23, 0.1f, d).requires_grad_(true)) {}
  std::vector<at::Tensor> trainable() const { return {w2, b2}; }
  std::vector<at::Tensor> frozen() const { return {w1}; }
  at::Tensor forward(const at::Tensor& x) const { return at::dropout(x.matmul(w1).relu(), 0.5, training).matmul(w2).add(b2); }
};

std::vector<at::Tensor> snapshot(const std::vector<at::Tensor>& ts) {
  std::vector<at::Tensor> out;
  for (const auto& t : ts) out.push_back(t.detach().clone());
  return out;
}

int changed(const std::vector<at::Tensor>& before, const std::vector<at::Tensor>& after) {
  int n = 0;
  for (size_t i = 0; i < before.size(); ++i) n += same_bits(before[i], after[i]) ? 0 : 1;
  return n;
}

}  // namespace

kd_status app_embeddings(const kd_app_embed_in* in, kd_app_embed_out* out) {
  return guarded([&] {
    *out = kd_app_embed_out{};
    if (in->count < 1 || in->count > KD_APP_MAX_ITEMS || in->batch_size < 1 || in->rebatch_size < 1)
      throw std::invalid_argument("app_embeddings: bad input set");
    const at::Device device = target(in->on_gpu, in->index);
    const std::vector<int> order = embed::batching_order(*in);
    int longest = 0;
    for (int i = 0; i < in->count; ++i) longest = std::max(longest, in->lengths[i]);
    copy_to(out->input_desc, sizeof out->input_desc,
            std::to_string(in->count) + " sequences, max length " + std::to_string(longest) + ", int64 tokens, batch " +
                std::to_string(in->batch_size) + " (and " + std::to_string(in->rebatch_size) + "), device " + where(device));
    EmbeddingModel model(device), cpu_model{at::Device(at::kCPU)};  // braces: not a function declaration
    model.training = cpu_model.training = false;  // eval(): module behaviour (dropout off)
    c10::InferenceMode guard;                      // inference mode: no gradient tracking
    const at::Tensor v = embed_all(model, *in, order, in->batch_size, device);
    out->eval_mode = !model.training;
    out->inference_mode = c10::InferenceMode::is_enabled() && !v.requires_grad();
    const at::Tensor ref = embed_all(cpu_model, *in, order, in->batch_size, at::Device(at::kCPU));
    const at::Tensor re = embed_all(model, *in, order, in->rebatch_size, device);
    out->count = static_cast<int>(v.size(0));
    out->dim = static_cast<int>(v.size(1));
    if (out->count > KD_APP_MAX_ITEMS || out->dim > KD_APP_MAX_DIM) throw std::length_error("app_embeddings: output too large");
    for (int i = 0; i < out->count; ++i) out->ids[i] = in->ids[order[static_cast<size_t>(i)]];
    to_host(v, out->device);
    to_host(ref, out->reference);
    to_host(re, out->rebatched);
    copy_to(out->output_desc, sizeof out->output_desc,
            std::to_string(out->count) + " vectors of " + std::to_string(out->dim) + " float32, device " + where(device));
  });
}

kd_status app_training(int on_gpu, int index, const char* folder, kd_app_train_out* out) {
  return guarded([&] {
    *out = kd_app_train_out{};
    const at::Device device = target(on_gpu, index);
    TrainModel m(device);
    const at::Tensor x = fixed({32, 8}, 24, 2.0f, device), y = fixed({32, 4}, 25, 2.0f, device);
    copy_to(out->desc, sizeof out->desc, "input: 32 rows of 8 float32, target 32x4 float32, device " + where(device));
    const auto trainable_before = snapshot(m.trainable()), frozen_before = snapshot(m.frozen());

    m.training = true;
    const at::Tensor loss = m.forward(x).sub(y).pow(2).mean();
    out->loss = loss.detach().to(at::kCPU).item<float>();
    loss.backward();
    {
      at::NoGradGuard no_grad;  // the optimizer step: plain SGD, lr 0.1
      for (auto& p : m.trainable()) p.sub_(p.grad(), /*alpha=*/0.1);
    }
    out->trainable_total = static_cast<int>(trainable_before.size());
    out->frozen_total = static_cast<int>(frozen_before.size());
    out->trainable_changed = changed(trainable_before, m.trainable());
    out->frozen_changed = changed(frozen_before, m.frozen());

    // An evaluation pass in between, then train mode restored explicitly.
    at::Tensor e1, e2, t1;
    {
      at::NoGradGuard no_grad;
      m.training = false;
      e1 = m.forward(x);
      e2 = m.forward(x);
      m.training = true;
      t1 = m.forward(x);
    }
    out->eval_without_dropout = same_bits(e1, e2);
    out->train_mode_restored = m.training && !same_bits(e1, t1);

    std::vector<at::Tensor> state = {m.w1, m.w2, m.b2};
    const std::string path = std::string(folder) + "/state.pt";
    out->state_bytes = save_tensors(state, path);
    const std::vector<at::Tensor> back = load_tensors(path);
    out->state_identical = back.size() == state.size();
    for (size_t i = 0; out->state_identical && i < state.size(); ++i) out->state_identical = same_bits(state[i], back[i]);
  });
}

}  // namespace kd::probe
