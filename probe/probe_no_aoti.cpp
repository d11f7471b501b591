// A LibTorch without torch::inductor::AOTIModelPackageLoader (Debian's 1.13): a package is a clear
// MODEL_LOAD_FAILED that names this version and what is needed, never a crash.
#include <stdexcept>

#include "probe_aoti.h"
#include "probe_status.h"

namespace kd::probe {

kd_status aoti_load(const char*, at::Device, char*, int) {
  return make_status(KD_ERR_UNSUPPORTED,
                     "this LibTorch (" KD_TORCH_VERSION ") cannot load AOTInductor packages (.pt2): that needs the "
                     "AOTIModelPackageLoader of a newer LibTorch, such as 2.11 (a suite built against it loads them)");
}

bool aoti_loaded() { return false; }

void aoti_unload() {}

std::vector<at::Tensor> aoti_run(const std::vector<at::Tensor>&) { throw std::logic_error("no AOTInductor loader"); }

std::vector<std::string> aoti_output_names() { return {}; }

}  // namespace kd::probe
