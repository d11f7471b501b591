#include "app_hints.h"

namespace kd {
namespace {

// An --extension library that did not load: the words fixtures/extensions.cpp chose say whose the missing piece is.
std::optional<Hint> extension_hint(const std::string& m) {
  if (mentions(m, "is not registered: load its extension"))
    return Hint{"the model calls a custom operator that no loaded library registered",
                "pass the library that defines it with --extension FILE (the file the application loads with "
                "torch.ops.load_library), built against this LibTorch"};
  if (mentions(m, "is not built into this LibTorch"))
    return Hint{"the model was saved by a newer torch than this LibTorch: it calls a built-in operator added since",
                "run the suite built against the LibTorch of the torch that saved the model, or save the model again "
                "with this LibTorch's torch version (the report's pytorch.version)"};
  if (!mentions(m, "extension '")) return std::nullopt;
  const char* rebuild = "rebuild the extension against this LibTorch (its headers and libraries, the version in the "
                        "report's pytorch.version), e.g. with torch.utils.cpp_extension of the matching torch or CMake's "
                        "find_package(Torch) pointed at it";
  if (mentions(m, "the other C++ ABI"))
    return Hint{"the extension was built with the other C++ ABI (_GLIBCXX_USE_CXX11_ABI) than this LibTorch: their "
                "std::string types differ",
                "rebuild it with -D_GLIBCXX_USE_CXX11_ABI set as this LibTorch's (torch.compiled_with_cxx11_abi()), "
                "against this LibTorch"};
  if (mentions(m, "GPU backend this one lacks"))
    return Hint{"the extension was built against a GPU build of LibTorch; the LibTorch loaded here has no such backend",
                "rebuild it against this LibTorch, or install the GPU build of LibTorch it was made for"};
  if (mentions(m, "LibTorch's"))
    return Hint{"the extension was built against another LibTorch (another version, or another installation) than "
                "the one this run loaded",
                rebuild};
  if (mentions(m, "built for another CUDA"))
    return Hint{"the extension was built for another CUDA version than this LibTorch and machine provide",
                "rebuild it against this LibTorch's CUDA (pytorch.cuda_compiled in the report), or install the CUDA "
                "runtime it was built for"};
  if (mentions(m, "from a newer C++ runtime"))
    return Hint{"the extension was built with a newer compiler or C library than this system has",
                "rebuild it on a system like this one (its compiler and libstdc++), or install a newer libstdc++"};
  if (mentions(m, "registers no operator"))
    return Hint{"the library loaded but registered no operator: not the custom-operator library, or one whose "
                "TORCH_LIBRARY blocks were left out of the build",
                "pass the library that defines the operators (the one the application loads with "
                "torch.ops.load_library), and check that it was built with its operator sources"};
  if (mentions(m, "fails while registering"))
    return Hint{"the library's operator registration threw: an operator defined twice (the same library loaded "
                "under two names, or two versions of it) or a schema this LibTorch rejects",
                "load each extension once, and rebuild it against this LibTorch"};
  if (mentions(m, "is missing"))
    return Hint{"no file at the path given to --extension", "check the path (the application's build folder, or "
                "its package's lib folder)"};
  if (mentions(m, "not a shared library for this machine"))
    return Hint{"the file is not a shared library for this machine's architecture", "pass the .so built for this "
                "machine (e.g. an x86_64 build on x86_64)"};
  if (mentions(m, "does not load"))
    return Hint{"the dynamic loader refused the extension: a symbol or a library it needs is not there", rebuild};
  return std::nullopt;
}

}  // namespace

std::optional<Hint> app_hint(Code code, const std::string& m) {
  if (code == Code::ModelLoadFailed && (mentions(m, "Permission denied") || mentions(m, "permission denied")))  // model_file_problem's and file_problem's words
    return Hint{"the file exists but this user may not read it (its permissions, or a folder above it without "
                "search permission)",
                "give this user read permission (chmod, chown, or the group), or run as the file's owner; in a "
                "container, check the user the volume is mounted for"};
  if (code == Code::ModelLoadFailed)
    if (auto h = extension_hint(m)) return h;
  if (mentions(m, "Expected all tensors to be on the same device") || mentions(m, "is on CPU, but expected it to be on GPU"))
    return Hint{"the model met tensors on two devices: an input left on the CPU while the model is on the GPU, or a "
                "tensor the model keeps or creates (a plain attribute instead of a registered buffer, a constant made "
                "in forward) that was not moved with the module",
                "move every input to the model's device (in the spec, \"device\": \"cpu\" marks an input the "
                "application really keeps on the host), register kept tensors as buffers so module.to() moves them, "
                "and create new tensors with device=x.device"};
  if (mentions(m, "not implemented for 'Half'") || mentions(m, "not implemented for 'BFloat16'"))
    return Hint{"an operator of the model has no kernel for this precision on this device",
                "run that operator in float32 (convert its input, or use autocast, which chooses per operator), or "
                "keep the model in float32 on this device"};
  if (mentions(m, "expected scalar type") || mentions(m, "have the same dtype") || mentions(m, "must have the same dtype") ||
      (mentions(m, "Input type (") && mentions(m, "should be the same")))
    return Hint{"an operation met two precisions: e.g. float16 inputs with float32 weights (a conversion made in one "
                "place only, or a spec whose dtype differs from the model's)",
                "give the inputs the dtype of the model's weights (the spec's \"dtype\"), convert the model and its "
                "inputs together (model.half() with half inputs), or use autocast"};
  return std::nullopt;
}

}  // namespace kd
