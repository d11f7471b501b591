// AOTInductor packages (.pt2): probe_aoti.cpp when the LibTorch has torch::inductor::AOTIModelPackageLoader
// (a CMake check in probe/CMakeLists.txt), probe_no_aoti.cpp otherwise: there loading one says why not.
#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <string>
#include <vector>

#include "probe_api.h"

namespace kd::probe {

// Loads the package for `device`, replacing any loaded one. KD_ERR_MODEL_DEVICE (message: the device type it was
// compiled for) when that is not the device's type; KD_ERR_UNSUPPORTED without a loader; KD_ERR_MODEL_FORMAT when
// the loader refuses it. desc: what was loaded, for the report.
kd_status aoti_load(const char* path, at::Device device, char* desc, int desc_cap);
bool aoti_loaded();
void aoti_unload();
std::vector<at::Tensor> aoti_run(const std::vector<at::Tensor>& inputs);
// The loaded package's output names from its call spec (pytree_names.h); empty when it has none to read.
std::vector<std::string> aoti_output_names();

}  // namespace kd::probe
