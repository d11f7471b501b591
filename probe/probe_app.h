// Layer L4 in the probe: the built-in workloads (probe_app.cpp) and the TorchScript side
// (probe_model.cpp, the one translation unit that includes <torch/script.h>).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "probe_api.h"

namespace kd::probe {
kd_status app_embeddings(const kd_app_embed_in* in, kd_app_embed_out* out);
kd_status timing_segments(const kd_app_embed_in* in, int runs, kd_timing_out* out);  // L6, probe_timing.cpp
kd_status range_memory_fraction(int index, double fraction);           // L5, probe_range.cpp
kd_status range_point(const kd_range_in* in, kd_range_point* out);
kd_status app_training(int on_gpu, int index, const char* folder, kd_app_train_out* out);
kd_status model_load(const char* path, int on_gpu, int index, char* desc, int desc_cap);
kd_status model_run(const kd_model_input* inputs, int count, kd_output_sink sink, kd_marker_sink marker, void* user,
                    char* desc, int desc_cap);

// The training state through LibTorch's own pickle format (what torch.save writes); returns the file's size.
uint64_t save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path);
std::vector<at::Tensor> load_tensors(const std::string& path);
}  // namespace kd::probe
