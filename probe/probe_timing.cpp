// Layer L6's segments: the L4 embeddings workload timed as the user's job would run it —
// prepare input (host), compute (transfer + forward, synchronized at both edges; on a GPU
// also CUDA events around the same region), write output (back to the host, serialised).
// Run 0 is the cold run; the model's load is timed apart and never enters a run.
#include <ATen/core/Tensor.h>
#include <c10/core/InferenceMode.h>

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_ops.h"
#include "embedding_model.h"
#include "elapsed.h"
#include "probe_status.h"

namespace kd::probe {
namespace {

// What the job writes: one line per vector, its id and values as text.
size_t serialise(const at::Tensor& host, const kd_app_embed_in& in, const std::vector<int>& order) {
  std::string out;
  const float* v = host.data_ptr<float>();
  char buf[32];
  for (int64_t r = 0; r < host.size(0); ++r) {
    out += std::to_string(in.ids[order[static_cast<size_t>(r)]]);
    for (int64_t c = 0; c < host.size(1); ++c) {
      std::snprintf(buf, sizeof buf, " %.7g", static_cast<double>(v[r * host.size(1) + c]));
      out += buf;
    }
    out += '\n';
  }
  return out.size();
}

}  // namespace

kd_status timing_segments(const kd_app_embed_in* in, int runs, kd_timing_out* out) {
  return guarded([&] {
    *out = kd_timing_out{};
    if (runs < 2 || runs > KD_TIMING_MAX_RUNS || in->count < 1 || in->count > KD_APP_MAX_ITEMS || in->batch_size < 1)
      throw std::invalid_argument("timing_segments: bad runs or input set");
    const at::Device device = embed::target(in->on_gpu, in->index);
    c10::InferenceMode guard;
    auto t0 = std::chrono::steady_clock::now();
    embed::EmbeddingModel model(device);
    model.training = false;
    if (in->on_gpu) synchronize_or_throw(in->index);
    out->load_ms = ms_since(t0);

    const std::vector<int> order = embed::batching_order(*in);
    size_t written = 0;
    for (int r = 0; r < runs; ++r) {
      t0 = std::chrono::steady_clock::now();
      const std::vector<embed::HostBatch> batches = embed::host_batches(*in, order, in->batch_size);
      out->prepare_ms[r] = ms_since(t0);

      at::Tensor vectors;
      const auto compute = [&] { vectors = embed::run_batches(model, batches, device); };
      if (in->on_gpu) {
        timed_on_device(in->index, compute, &out->compute_ms[r], &out->compute_event_ms[r]);
      } else {
        t0 = std::chrono::steady_clock::now();
        compute();  // CPU work is complete when it returns
        out->compute_ms[r] = ms_since(t0);
        out->compute_event_ms[r] = -1;
      }

      t0 = std::chrono::steady_clock::now();
      written = serialise(vectors.to(at::kCPU).contiguous(), *in, order);
      out->write_ms[r] = ms_since(t0);
    }
    out->runs = runs;
    copy_to(out->desc, sizeof out->desc,
            "L4 embeddings: " + std::to_string(in->count) + " sequences in batches of " + std::to_string(in->batch_size) +
                ", " + std::to_string(written) + " bytes of text written, device " + device.str());
  });
}

}  // namespace kd::probe
