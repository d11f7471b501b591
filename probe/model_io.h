// The user's model, whatever its format (TorchScript: probe_model.cpp; AOTInductor: probe_aoti.cpp):
// the --input tensors from a fixed seed, the run's finished steps as markers, and the outputs to
// the suite's sink. Narrow ATen headers only.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <functional>
#include <string>
#include <vector>

#include "probe_api.h"

namespace kd::probe {

struct ModelOutput {
  std::string name;   // the leaf's path in the returned tree ("0", "pooled", "0.logits")
  at::Tensor tensor;  // undefined when the output is not a tensor
  std::string kind;   // then what it is ("Int", "String", ...)
};
// names[i]: the keyword of input i, "" to pass it by position.
using ModelForward = std::function<std::vector<ModelOutput>(const std::vector<at::Tensor>& inputs_on_device,
                                                       const std::vector<std::string>& names)>;

// Builds the inputs, moves them to `device`, calls forward under inference mode, sends every output leaf to the sink;
// marks prepare_data, transfer and compute as each finishes. The description of the inputs goes to desc.
kd_status run_model(const kd_model_input* inputs, int count, at::Device device, const ModelForward& forward,
                    kd_output_sink sink, kd_marker_sink marker, void* user, char* desc, int desc_cap);

}  // namespace kd::probe
