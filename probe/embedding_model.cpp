#include "embedding_model.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/dropout.h>
#include <ATen/ops/arange.h>
#include <ATen/ops/from_blob.h>

#include <algorithm>
#include <numeric>

namespace kd::probe::embed {
namespace {

struct Lcg {  // a fixed sequence in [-0.5, 0.5)
  uint64_t state;
  float next() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<float>((state >> 40) & 0xFFFFFF) / 16777216.0f - 0.5f;
  }
};

int64_t token(int64_t id, int position) {  // never 0: 0 is padding
  uint64_t h = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(position) * 0xBF58476D1CE4E5B9ULL;
  h ^= h >> 31;
  return static_cast<int64_t>(h % (kVocab - 1)) + 1;
}

}  // namespace

at::Tensor fixed(std::vector<int64_t> shape, uint64_t seed, float scale, const at::Device& device) {
  const int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t(1), std::multiplies<int64_t>());
  std::vector<float> v(static_cast<size_t>(n));
  Lcg g{seed};
  for (auto& x : v) x = g.next() * scale;
  return at::from_blob(v.data(), shape, at::TensorOptions().dtype(at::kFloat)).clone().to(device);
}

at::Device target(int on_gpu, int index) {
  return on_gpu ? at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(index)) : at::Device(at::kCPU);
}

EmbeddingModel::EmbeddingModel(const at::Device& d)
    : table(fixed({kVocab, kEmbed}, 11, 1.0f, d)), proj(fixed({kEmbed, kDim}, 12, 0.5f, d)), bias(fixed({kDim}, 13, 0.1f, d)) {}

at::Tensor EmbeddingModel::forward(const at::Tensor& tokens, const at::Tensor& mask) const {
  const auto b = tokens.size(0), l = tokens.size(1);
  const at::Tensor emb = table.index_select(0, tokens.reshape({-1})).reshape({b, l, kEmbed});
  const at::Tensor pooled = emb.mul(mask.unsqueeze(-1)).sum(1).div(mask.sum(1, /*keepdim=*/true));
  return at::dropout(pooled, 0.1, training).matmul(proj).add(bias).tanh();
}

std::vector<int> batching_order(const kd_app_embed_in& in) {
  std::vector<int> order(static_cast<size_t>(in.count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return in.lengths[a] > in.lengths[b]; });
  return order;
}

std::vector<HostBatch> host_batches(const kd_app_embed_in& in, const std::vector<int>& order, int batch_size) {
  std::vector<HostBatch> out;
  for (size_t start = 0; start < order.size(); start += static_cast<size_t>(batch_size)) {
    const size_t end = std::min(order.size(), start + static_cast<size_t>(batch_size));
    HostBatch b;
    for (size_t i = start; i < end; ++i) b.longest = std::max<int64_t>(b.longest, in.lengths[order[i]]);
    b.rows = static_cast<int64_t>(end - start);
    b.tokens.assign(static_cast<size_t>(b.rows * b.longest), 0);
    b.mask.assign(b.tokens.size(), 0.f);
    for (size_t i = start; i < end; ++i)
      for (int j = 0; j < in.lengths[order[i]]; ++j) {
        const size_t at = (i - start) * static_cast<size_t>(b.longest) + static_cast<size_t>(j);
        b.tokens[at] = token(in.ids[order[i]], j);
        b.mask[at] = 1.f;
      }
    out.push_back(std::move(b));
  }
  return out;
}

at::Tensor run_batches(const EmbeddingModel& m, const std::vector<HostBatch>& batches, const at::Device& device) {
  std::vector<at::Tensor> outs;
  for (const auto& b : batches) {
    // from_blob does not copy: the batch outlives the forward (and .to(cpu) may alias it).
    auto* tok = const_cast<int64_t*>(b.tokens.data());
    auto* mask = const_cast<float*>(b.mask.data());
    const at::Tensor t = at::from_blob(tok, {b.rows, b.longest}, at::TensorOptions().dtype(at::kLong)).to(device);
    const at::Tensor k = at::from_blob(mask, {b.rows, b.longest}, at::TensorOptions().dtype(at::kFloat)).to(device);
    outs.push_back(m.forward(t, k));
  }
  return at::cat(outs, 0);
}

DeviceBatch grown_batch(const kd_app_embed_in& in, int64_t rows, int64_t max_length, const at::Device& device) {
  std::vector<int64_t> ids(static_cast<size_t>(in.count)), lengths(ids.size());
  for (int i = 0; i < in.count; ++i) {
    ids[static_cast<size_t>(i)] = in.ids[i];
    lengths[static_cast<size_t>(i)] = std::max<int64_t>(1, in.lengths[i] * max_length / kMaxLength);
  }
  const auto longs = at::TensorOptions().dtype(at::kLong);
  const at::Tensor pick = at::arange(rows, longs.device(device)).remainder(in.count);
  const at::Tensor row_ids = at::from_blob(ids.data(), {in.count}, longs).to(device).index_select(0, pick);
  const at::Tensor row_len = at::from_blob(lengths.data(), {in.count}, longs).to(device).index_select(0, pick);
  const at::Tensor pos = at::arange(max_length, longs.device(device));
  // Never 0 (padding), always below kVocab; no int64 overflow for any id of the L4 set.
  const at::Tensor valid = pos.unsqueeze(0).lt(row_len.unsqueeze(1));
  const at::Tensor tokens = row_ids.unsqueeze(1).mul(7919).add(pos.unsqueeze(0).mul(104729)).remainder(kVocab - 1).add(1);
  return {tokens.mul(valid), valid.to(at::kFloat)};
}

uint64_t grown_batch_bytes(int64_t rows, int64_t max_length) {
  // tokens (int64), mask and its bool (float32 + 1), the gathered embeddings and their masked copy (float32).
  const uint64_t per_token = 8 + 4 + 1 + 2 * kEmbed * 4;
  return static_cast<uint64_t>(rows) * static_cast<uint64_t>(max_length) * per_token;
}

}  // namespace kd::probe::embed
