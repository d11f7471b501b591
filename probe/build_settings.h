// Reads LibTorch's own description of its build (at::show_config()), the only
// runtime source that tells CUDA, HIP and CPU-only builds apart on every version.
// Torch-free so that it is unit-tested on recorded text.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace kd {

struct BuildSettings {
  std::string torch_version;  // TORCH_VERSION=
  std::string cuda_version;   // CUDA_VERSION= (empty: no CUDA)
  std::string hip_version;    // ROCM_VERSION= (empty: no HIP)
  bool use_cuda = false;      // USE_CUDA=ON
  bool use_rocm = false;      // USE_ROCM=ON
  // From "NVCC architecture flags: -gencode;arch=compute_90,code=sm_90;...": "sm_90" is machine
  // code for one architecture, "compute_90" PTX that newer devices compile at load. Only present
  // in show_config() once CUDA is initialised; C++ has no other public way to read it.
  std::vector<std::string> arch_list;
  std::string backend() const { return use_rocm ? "rocm" : use_cuda ? "cuda" : "none"; }
};

BuildSettings parse_build_settings(const std::string& show_config);

// Whether a device of this compute capability can run the build's kernels: machine code for
// exactly it, or PTX for it or an older architecture. nullopt when the list is unknown.
std::optional<bool> arch_covers(const std::vector<std::string>& arch_list, int major, int minor);

}  // namespace kd
