#include "shard_job.h"

#include <charconv>
#include <cstdio>
#include <memory>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "fixtures/probe_loader.h"
#include "suites/embeddings_input.h"

namespace kd {
namespace {

using nlohmann::json;

int say(const json& line, int code) {
  std::printf("%s\n", line.dump().c_str());
  std::fflush(stdout);
  return code;
}

int failed(const kd_status& s) {
  const bool oom = s.kind == KD_ERR_OUT_OF_MEMORY;
  return say({{"error", s.message}, {"out_of_memory", oom}}, oom ? 9 : 1);
}

}  // namespace

int run_shard_job(const Options& options) {
  const bool gpu = !options.cpu_mode();
  const ProbeLoad probe = load_probe(default_probe_path());
  if (!probe.probe) return say({{"error", probe.message}, {"out_of_memory", false}}, 1);
  if (options.fault == "oom") {  // TEST ONLY: a real allocation this device cannot satisfy (1 PiB)
    kd_status s = probe.probe->tiny_inputs(gpu, options.device_index, KD_FAULT_OUT_OF_MEMORY);
    float product[4];
    if (s.kind == KD_OK) s = probe.probe->tiny_product(product);
    if (s.kind != KD_OK) return failed(s);
  }
  // This shard's entries of the L4 set, in the set's order.
  const kd_app_embed_in set = embeddings_input(gpu, options.device_index);
  kd_app_embed_in in = set;
  in.count = 0;
  std::stringstream wanted(*options.shard_job);
  for (std::string text; std::getline(wanted, text, ',');) {
    int64_t id = -1;  // digits only (the command line checked), but perhaps too many for an int64: no match
    std::from_chars(text.data(), text.data() + text.size(), id);
    for (int i = 0; i < set.count; ++i)
      if (set.ids[i] == id && in.count < KD_APP_MAX_ITEMS) {  // a repeated id never overruns the set
        in.ids[in.count] = set.ids[i];
        in.lengths[in.count++] = set.lengths[i];
      }
  }
  json ids = json::array(), rows = json::array();
  if (in.count > 0) {  // more GPUs than inputs: a shard may have nothing to do
    auto out = std::make_unique<kd_app_embed_out>();
    const kd_status s = probe.probe->app_embeddings(&in, out.get());
    if (s.kind != KD_OK) return failed(s);
    for (int r = 0; r < out->count; ++r) {
      ids.push_back(out->ids[r]);
      rows.push_back(std::vector<double>(out->device + r * out->dim, out->device + (r + 1) * out->dim));
    }
  }
  return say({{"ids", ids}, {"rows", rows}, {"error", nullptr}}, 0);
}

}  // namespace kd
