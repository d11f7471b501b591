// AOTInductor packages through LibTorch's own loader. The loader extracts the package, dlopen()s its
// compiled model and picks the runner from the package's metadata (AOTI_DEVICE_KEY): a package runs only
// on the device type it was compiled for, so that is read first and named, not left to a cryptic error.
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <memory>
#include <string>

#include "probe_aoti.h"
#include "probe_status.h"
#include "pytree_names.h"

namespace kd::probe {
namespace {

std::unique_ptr<torch::inductor::AOTIModelPackageLoader>& loader() {
  static std::unique_ptr<torch::inductor::AOTIModelPackageLoader> l;
  return l;
}

std::vector<std::string>& output_names() {
  static std::vector<std::string> names;
  return names;
}

// The file is an AOTInductor archive (the suite checked): what fails is its content, or the memory.
kd_status refused(const std::string& m) { return make_status(looks_like_oom(m) ? KD_ERR_OUT_OF_MEMORY : KD_ERR_MODEL_FORMAT, m); }

}  // namespace

kd_status aoti_load(const char* path, at::Device device, char* desc, int desc_cap) {
  aoti_unload();
  try {
    const auto metadata = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, "model");
    const auto key = metadata.find("AOTI_DEVICE_KEY");
    const std::string compiled_for = key == metadata.end() ? "unknown" : key->second;
    if (compiled_for != c10::DeviceTypeName(device.type(), /*lower_case=*/true))
      return make_status(KD_ERR_MODEL_DEVICE, compiled_for);
    loader() = std::make_unique<torch::inductor::AOTIModelPackageLoader>(path, "model", /*run_single_threaded=*/false,
                                                                         /*num_runners=*/1, device.index());
    const std::vector<std::string> spec = loader()->get_call_spec();  // {inputs, outputs}
    output_names() = spec.size() == 2 ? pytree_leaf_names(spec[1]).value_or(std::vector<std::string>{}) : std::vector<std::string>{};
    copy_to(desc, static_cast<size_t>(desc_cap), "AOTInductor package (compiled for " + compiled_for + "), device " + device.str());
    return ok_status();
  } catch (const c10::Error& e) {
    return refused(e.what_without_backtrace());
  } catch (const std::exception& e) {
    return refused(e.what());
  }
}

bool aoti_loaded() { return loader() != nullptr; }

void aoti_unload() {
  loader().reset();
  output_names().clear();
}

std::vector<std::string> aoti_output_names() { return output_names(); }

std::vector<at::Tensor> aoti_run(const std::vector<at::Tensor>& inputs) { return loader()->run(inputs); }

}  // namespace kd::probe
