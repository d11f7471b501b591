// The L4 embeddings workload, shared by L4 (its contract) and L6 (its timing): a small
// model (token embedding, masked mean pooling, projection) with weights from our own
// generator, so every LibTorch version sees the same numbers.
#pragma once
#include <ATen/core/Tensor.h>

#include <vector>

#include "probe_api.h"

namespace kd::probe::embed {

constexpr int kVocab = 512, kEmbed = 32, kDim = 16;
constexpr int kMaxLength = 64;  // the longest input of the L4 set (fixtures/embeddings_input.h)

// A tensor of fixed values in [-scale/2, scale/2) from seed, on device.
at::Tensor fixed(std::vector<int64_t> shape, uint64_t seed, float scale, const at::Device& device);
at::Device target(int on_gpu, int index);

// `training` is the module mode: dropout acts only in train mode.
struct EmbeddingModel {
  at::Tensor table, proj, bias;
  bool training = true;
  explicit EmbeddingModel(const at::Device& d);
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& mask) const;
};

// Longest first, as a length-bucketing job would batch them: the output order is not the input order.
std::vector<int> batching_order(const kd_app_embed_in& in);

// One batch's token ids and mask, built on the host (padding: token 0, mask 0).
struct HostBatch {
  std::vector<int64_t> tokens;
  std::vector<float> mask;
  int64_t rows = 0, longest = 0;
};
std::vector<HostBatch> host_batches(const kd_app_embed_in& in, const std::vector<int>& order, int batch_size);

// Moves each batch to device and runs it; the vectors in batching order, on device.
at::Tensor run_batches(const EmbeddingModel& m, const std::vector<HostBatch>& batches, const at::Device& device);

// The size knobs, for L5's operating range: the L4 input set repeated to `rows` sequences (row r is
// input r % count), each length scaled by max_length / kMaxLength (at least 1 token). Built on the
// device from a simple formula: the range measures sizes, and a host loop would time the host.
struct DeviceBatch {
  at::Tensor tokens, mask;
};
DeviceBatch grown_batch(const kd_app_embed_in& in, int64_t rows, int64_t max_length, const at::Device& device);
// The bytes one grown batch and its forward pass hold at their peak, from the shapes (CPU guard).
uint64_t grown_batch_bytes(int64_t rows, int64_t max_length);

}  // namespace kd::probe::embed
