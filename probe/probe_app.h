// Layer L4 in the probe: the built-in workloads (probe_app.cpp) and the user's model (probe_model.cpp,
// the one translation unit that includes <torch/script.h>; AOTInductor packages in probe_aoti.cpp).
#pragma once
#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "probe_api.h"

namespace kd::probe {
kd_status app_embeddings(const kd_app_embed_in* in, kd_app_embed_out* out);
kd_status timing_segments(const kd_app_embed_in* in, int runs, kd_timing_out* out);  // L6, probe_timing.cpp
// L6 under load (probe_load.cpp).
kd_status host_link(int on_gpu, int index, int64_t bytes, int pinned, int repeats, kd_host_link_out* out);
kd_status host_links_together(int on_gpu, const int* indices, int count, int64_t bytes, int pinned, int repeats,
                              kd_host_link_out* outs);
kd_status sustained(const kd_sustained_in* in, kd_sustained_out* out, kd_point_sink point, void* user);
kd_status memory_integrity(const kd_integrity_in* in, kd_integrity_out* out);
kd_status memory_workload(const kd_memory_in* in, kd_memory_out* out, kd_marker_sink step, void* user);  // L5
kd_status range_memory_fraction(int index, double fraction);           // L5, probe_range.cpp
kd_status range_point(const kd_range_in* in, kd_range_point* out);
kd_status range_concurrent(const kd_range_in* in, int executions, kd_range_concurrent_out* out);
kd_status app_training(int on_gpu, int index, const char* folder, kd_app_train_out* out);
kd_status model_load(const char* path, int format, int on_gpu, int index, char* desc, int desc_cap);
kd_status model_run(const kd_model_input* inputs, int count, kd_output_sink sink, kd_marker_sink marker, void* user,
                    char* desc, int desc_cap);
kd_status extension_load(const char* path, kd_extension_out* out);  // --extension, extensions.cpp
kd_status model_signature(char* out, int cap);

// The training state through LibTorch's own pickle format (what torch.save writes); returns the file's size.
uint64_t save_tensors(const std::vector<at::Tensor>& tensors, const std::string& path);
std::vector<at::Tensor> load_tensors(const std::string& path);
}  // namespace kd::probe
