// Layer L5's workload: the L4 embeddings model with a larger token table and longer inputs,
// run with gradients on (as an evaluation loop that forgot no_grad would) through named steps —
// baseline, load, first compute, N iterations, emptyCache — reading the caching allocator's
// counters after each (GPU). When a step runs out of memory, it says which step and what the
// allocator held at that moment; every tensor is released and the cache returned afterwards,
// so the process can go on and report.
#include <ATen/core/Tensor.h>
#include <ATen/ops/allclose.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_ops.h"
#include "embedding_model.h"
#include "probe_app.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

// Whatever happens, the allocator is left as the workload found it: the cap lifted, the cache returned.
// Declared before the workload's tensors, so it runs after they are gone.
class AllocatorScope {
 public:
  AllocatorScope(bool gpu, int index, double fraction) : gpu_(gpu), index_(index) {
    if (gpu_ && fraction > 0) {
      memory_set_fraction(index_, fraction);
      capped_ = true;
    }
  }
  ~AllocatorScope() {
    if (!gpu_) return;
    try {
      if (capped_) memory_set_fraction(index_, 1.0);
      memory_empty_cache();
    } catch (...) {  // nothing to do about it here; the next layer's allocation will tell
    }
  }
  AllocatorScope(const AllocatorScope&) = delete;
  AllocatorScope& operator=(const AllocatorScope&) = delete;

 private:
  bool gpu_;
  int index_;
  bool capped_ = false;
};

}  // namespace

kd_status memory_workload(const kd_memory_in* in, kd_memory_out* out, kd_marker_sink step, void* user) {
  *out = kd_memory_out{};
  out->failed_step = -1;
  return guarded([&] {
    const kd_app_embed_in& input = in->input;
    if (input.count < 1 || input.count > KD_APP_MAX_ITEMS || input.batch_size < 1 || in->vocab < embed::kVocab ||
        in->iterations < 2 || in->iterations > KD_MEMORY_MAX_ITERATIONS || in->fraction < 0 || in->fraction > 1)
      throw std::invalid_argument("memory_workload: bad input");
    const bool gpu = input.on_gpu != 0;
    const int index = input.index;
    const at::Device device = embed::target(gpu, index);
    int longest = 0;
    for (int i = 0; i < input.count; ++i) longest = std::max(longest, input.lengths[i]);
    copy_to(out->desc, sizeof out->desc,
            "L4 embeddings, scaled: " + std::to_string(input.count) + " sequences up to " + std::to_string(longest) +
                " tokens in batches of " + std::to_string(input.batch_size) + ", table " + std::to_string(in->vocab) + " x " +
                std::to_string(embed::kEmbed) + " float32, " + std::to_string(in->iterations) +
                " iterations with gradients on, device " + device.str() +
                (in->leak ? ", test-only leak: every loss kept as a tensor" : ""));
    AllocatorScope scope(gpu, index, in->fraction);
    out->counters = gpu;

    int current = KD_MEM_BASELINE;
    auto begin = [&](int s, const char* name) {
      current = s;
      if (step) step(user, name);
    };
    auto finished = [&](int s) {  // the counters after step s; the next step's peak starts here
      if (gpu) {
        synchronize_or_throw(index);
        out->at[s] = memory_now(index);
        memory_reset_peak(index);
      }
      out->steps_done = s + 1;
    };

    // Held outside the try, so that the counters read after a failure see what the workload held.
    std::optional<embed::EmbeddingModel> model;
    std::vector<at::Tensor> kept;  // test-only leak: each iteration's loss tensor, and with it its graph
    try {
      if (gpu) memory_reset_peak(index);
      finished(KD_MEM_BASELINE);

      begin(KD_MEM_LOAD, "load");
      model.emplace(device);
      // The same generator and seed as L4's table: its first rows are L4's table, the rest makes the weights large.
      model->table = embed::fixed({in->vocab, embed::kEmbed}, 11, 1.0f, device);
      for (at::Tensor* w : {&model->table, &model->proj, &model->bias}) w->requires_grad_(true);
      model->training = false;  // dropout off; gradients stay on
      out->weights_bytes = static_cast<uint64_t>(model->table.nbytes());
      finished(KD_MEM_LOAD);

      begin(KD_MEM_FIRST_COMPUTE, "first_compute");
      const std::vector<int> order = embed::batching_order(input);
      const std::vector<embed::HostBatch> batches = embed::host_batches(input, order, input.batch_size);
      for (const auto& b : batches)
        out->activation_bytes = std::max<uint64_t>(out->activation_bytes, uint64_t(b.rows * b.longest) * embed::kEmbed * 4);
      const at::Tensor first = embed::run_batches(*model, batches, device).detach().to(at::kCPU);
      finished(KD_MEM_FIRST_COMPUTE);

      begin(KD_MEM_ITERATIONS, "iterations");
      for (int i = 0; i < in->iterations; ++i) {
        const at::Tensor loss = embed::run_batches(*model, batches, device).square().mean();
        (void)loss.item<double>();  // what a loop that keeps the number would keep
        if (in->leak) kept.push_back(loss);
        if (gpu) out->iteration_allocated[i] = memory_now(index).allocated;
        out->iterations_done = i + 1;
      }
      finished(KD_MEM_ITERATIONS);

      begin(KD_MEM_EMPTY_CACHE, "empty_cache");
      if (gpu) memory_empty_cache();
      finished(KD_MEM_EMPTY_CACHE);
      // Memory still referenced was kept: the weights compute what they computed before.
      const at::Tensor again = embed::run_batches(*model, batches, device).detach().to(at::kCPU);
      out->referenced_intact = at::allclose(again, first, 1e-5, 1e-6);
    } catch (...) {
      out->failed_step = current;
      if (gpu) {
        try {
          out->at_failure = memory_now(index);
        } catch (...) {  // the failure itself is what gets reported
        }
      }
      throw;
    }
  });
}

}  // namespace kd::probe
