// The application's own failures in L4, as LibTorch words them -> cause and next action.
#include <gtest/gtest.h>

#include "verdict/signatures.h"

namespace kd {
namespace {

std::string cause(Code code, const std::string& message) {
  const auto h = diagnose(code, message, SignatureFacts{});
  return h ? h->cause : "";
}

TEST(AppSignatures, TensorsOnTwoDevices) {
  for (const char* m : {"Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                        "RuntimeError: Expected all tensors to be on the same device, but got mat2 is on cpu, different "
                        "from other tensors on cuda:0 (when checking argument in method wrapper_CUDA_mm)"}) {
    EXPECT_NE(cause(Code::RuntimeError, m).find("an input left on the CPU"), std::string::npos) << m;
    EXPECT_NE(diagnose(Code::RuntimeError, m, {})->action.find("\"device\": \"cpu\""), std::string::npos);
  }
}

TEST(AppSignatures, PrecisionMismatchesAndMissingHalfKernels) {
  for (const char* m : {"RuntimeError: mat1 and mat2 must have the same dtype, but got Half and Float",
                        "RuntimeError: expected m1 and m2 to have the same dtype, but got: c10::Half != float",
                        "RuntimeError: expected scalar type Half but found Float",
                        "Input type (c10::Half) and bias type (float) should be the same"})
    EXPECT_NE(cause(Code::RuntimeError, m).find("two precisions"), std::string::npos) << m;
  EXPECT_NE(cause(Code::RuntimeError, "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'").find("no kernel"),
            std::string::npos);
  EXPECT_NE(cause(Code::RuntimeError, "\"LayerNormKernelImpl\" not implemented for 'BFloat16'").find("no kernel"),
            std::string::npos);
}

TEST(AppSignatures, AModelFileWithoutReadPermission) {
  const std::string m = "unreadable: cannot open '[path]/model.pt' (Permission denied)";  // model_file_problem's words
  EXPECT_NE(cause(Code::ModelLoadFailed, m).find("may not read it"), std::string::npos);
  EXPECT_EQ(cause(Code::ModelLoadFailed, "missing: no model file at '[path]/model.pt' (No such file or directory)"), "");
}

TEST(AppSignatures, TheSuitesOwnUndefinedSymbolIsNotAnExtensions) {
  // L1's probe load keeps its own hint; an extension's undefined symbol gets the extension's.
  EXPECT_NE(cause(Code::TorchImportFailed, "libkd_probe.so: undefined symbol: _ZN3c10...").find("this suite"),
            std::string::npos);
  EXPECT_NE(cause(Code::ModelLoadFailed, "extension 'libx.so' does not load: undefined symbol `c10::f()` (LibTorch's: "
                                         "built against another LibTorch version)").find("extension"),
            std::string::npos);
}

}  // namespace
}  // namespace kd
