// Reads LibTorch's own description of its build (at::show_config()), the only
// runtime source that tells CUDA, HIP and CPU-only builds apart on every version.
// Torch-free so that it is unit-tested on recorded text.
#pragma once
#include <string>

namespace kd {

struct BuildSettings {
  std::string torch_version;  // TORCH_VERSION=
  std::string cuda_version;   // CUDA_VERSION= (empty: no CUDA)
  std::string hip_version;    // ROCM_VERSION= (empty: no HIP)
  bool use_cuda = false;      // USE_CUDA=ON
  bool use_rocm = false;      // USE_ROCM=ON
  std::string backend() const { return use_rocm ? "rocm" : use_cuda ? "cuda" : "none"; }
};

BuildSettings parse_build_settings(const std::string& show_config);

}  // namespace kd
