// The application's own failures in L4 (docs/layers.md "Layer L4"): a model file it may not read, its --extension
// libraries (the words fixtures/extensions.cpp chose say whose the missing piece is), inputs on the wrong device,
// precision mismatches. Rows of the catalogue (verdict/signatures.h), asked before the suite's own "undefined symbol".
#include "signature_row.h"

namespace kd::signature {
namespace {

bool model_load(const Symptom& s) { return s.code == Code::ModelLoadFailed; }
bool extension(const Symptom& s) { return model_load(s) && s.says("extension '"); }

const char* const kRebuild =
    "rebuild the extension against this LibTorch (its headers and libraries, the version in the report's "
    "pytorch.version), e.g. with torch.utils.cpp_extension of the matching torch or CMake's find_package(Torch) "
    "pointed at it";

}  // namespace

const std::vector<Row>& app_rows() {
  static const std::vector<Row> rows = {
      {"model-unreadable",
       [](const Symptom& s) { return model_load(s) && s.says_any({"Permission denied", "permission denied"}); },
       "the file exists but this user may not read it (its permissions, or a folder above it without search permission)",
       "give this user read permission (chmod, chown, or the group), or run as the file's owner; in a container, check "
       "the user the volume is mounted for", Action::FixEnvironment},
      {"extension-operator-unregistered",
       [](const Symptom& s) { return model_load(s) && s.says("is not registered: load its extension"); },
       "the model calls a custom operator that no loaded library registered",
       "pass the library that defines it with --extension FILE (the file the application loads with "
       "torch.ops.load_library), built against this LibTorch", Action::FixCommand},
      {"operator-newer-than-libtorch",
       [](const Symptom& s) { return model_load(s) && s.says("is not built into this LibTorch"); },
       "the model was saved by a newer torch than this LibTorch: it calls a built-in operator added since",
       "run the suite built against the LibTorch of the torch that saved the model, or save the model again with this "
       "LibTorch's torch version (the report's pytorch.version)", Action::FixInstall},
      {"extension-other-cxx-abi", [](const Symptom& s) { return extension(s) && s.says("the other C++ ABI"); },
       "the extension was built with the other C++ ABI (_GLIBCXX_USE_CXX11_ABI) than this LibTorch: their std::string "
       "types differ",
       "rebuild it with -D_GLIBCXX_USE_CXX11_ABI set as this LibTorch's (torch.compiled_with_cxx11_abi()), against this "
       "LibTorch", Action::FixInstall},
      {"extension-gpu-backend-missing", [](const Symptom& s) { return extension(s) && s.says("GPU backend this one lacks"); },
       "the extension was built against a GPU build of LibTorch; the LibTorch loaded here has no such backend",
       "rebuild it against this LibTorch, or install the GPU build of LibTorch it was made for", Action::FixInstall},
      {"extension-other-libtorch", [](const Symptom& s) { return extension(s) && s.says("LibTorch's"); },
       "the extension was built against another LibTorch (another version, or another installation) than the one this "
       "run loaded",
       kRebuild, Action::FixInstall},
      {"extension-other-cuda", [](const Symptom& s) { return extension(s) && s.says("built for another CUDA"); },
       "the extension was built for another CUDA version than this LibTorch and machine provide",
       "rebuild it against this LibTorch's CUDA (pytorch.cuda_compiled in the report), or install the CUDA runtime it "
       "was built for", Action::FixInstall},
      {"extension-newer-cxx-runtime", [](const Symptom& s) { return extension(s) && s.says("from a newer C++ runtime"); },
       "the extension was built with a newer compiler or C library than this system has",
       "rebuild it on a system like this one (its compiler and libstdc++), or install a newer libstdc++",
       Action::FixInstall},
      {"extension-registers-nothing", [](const Symptom& s) { return extension(s) && s.says("registers no operator"); },
       "the library loaded but registered no operator: not the custom-operator library, or one whose TORCH_LIBRARY "
       "blocks were left out of the build",
       "pass the library that defines the operators (the one the application loads with torch.ops.load_library), and "
       "check that it was built with its operator sources", Action::FixCommand},
      {"extension-registration-fails", [](const Symptom& s) { return extension(s) && s.says("fails while registering"); },
       "the library's operator registration threw: an operator defined twice (the same library loaded under two names, "
       "or two versions of it) or a schema this LibTorch rejects",
       "load each extension once, and rebuild it against this LibTorch", Action::FixInstall},
      {"extension-missing", [](const Symptom& s) { return extension(s) && s.says("is missing"); },
       "no file at the path given to --extension",
       "check the path (the application's build folder, or its package's lib folder)", Action::FixCommand},
      {"extension-wrong-architecture",
       [](const Symptom& s) { return extension(s) && s.says("not a shared library for this machine"); },
       "the file is not a shared library for this machine's architecture",
       "pass the .so built for this machine (e.g. an x86_64 build on x86_64)", Action::FixInstall},
      {"extension-does-not-load", [](const Symptom& s) { return extension(s) && s.says("does not load"); },
       "the dynamic loader refused the extension: a symbol or a library it needs is not there", kRebuild,
       Action::FixInstall},
      {"tensors-on-two-devices",
       [](const Symptom& s) {
         return s.says_any({"Expected all tensors to be on the same device", "is on CPU, but expected it to be on GPU"});
       },
       "the model met tensors on two devices: an input left on the CPU while the model is on the GPU, or a tensor the "
       "model keeps or creates (a plain attribute instead of a registered buffer, a constant made in forward) that was "
       "not moved with the module",
       "move every input to the model's device (in the spec, \"device\": \"cpu\" marks an input the application really "
       "keeps on the host), register kept tensors as buffers so module.to() moves them, and create new tensors with "
       "device=x.device", Action::FixModel},
      {"precision-without-kernel",
       [](const Symptom& s) { return s.says_any({"not implemented for 'Half'", "not implemented for 'BFloat16'"}); },
       "an operator of the model has no kernel for this precision on this device",
       "run that operator in float32 (convert its input, or use autocast, which chooses per operator), or keep the "
       "model in float32 on this device", Action::FixModel},
      {"precision-mismatch",
       [](const Symptom& s) {
         return s.says_any({"expected scalar type", "have the same dtype", "must have the same dtype"}) ||
                (s.says("Input type (") && s.says("should be the same"));
       },
       "an operation met two precisions: e.g. float16 inputs with float32 weights (a conversion made in one place only, "
       "or a spec whose dtype differs from the model's)",
       "give the inputs the dtype of the model's weights (the spec's \"dtype\"), convert the model and its inputs "
       "together (model.half() with half inputs), or use autocast", Action::FixModel},
  };
  return rows;
}

}  // namespace kd::signature
