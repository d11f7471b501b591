// Known error texts (as LibTorch, CUDA, NVML and the loader print them) -> cause and action.
#include <gtest/gtest.h>

#include "verdict/hints.h"

namespace kd {
namespace {

HintContext cuda_context() {
  HintContext c;
  c.cuda_compiled = "13.0";
  c.device_capability = "9.0";
  c.arch_list = {"sm_75", "sm_80", "sm_86"};
  c.visible_devices_env = "unset";
  return c;
}

std::string cause(Code code, const std::string& message, const HintContext& c = cuda_context()) {
  const auto h = find_hint(code, message, c);
  return h ? h->cause : "";
}

TEST(Hints, ModelNotTorchScriptAndNonFiniteOutput) {
  EXPECT_NE(cause(Code::ModelLoadFailed, "wrongly formatted: not a TorchScript model: PytorchStreamReader failed")
                .find("neither a TorchScript archive nor an AOTInductor package"), std::string::npos);
  EXPECT_NE(cause(Code::ModelLoadFailed, "wrongly formatted: an AOTInductor package that does not load: dlopen failed")
                .find("does not load here"), std::string::npos);
  EXPECT_NE(cause(Code::ModelLoadFailed, "this LibTorch (1.13.0) cannot load AOTInductor packages (.pt2): ...")
                .find("predates"), std::string::npos);
  EXPECT_NE(cause(Code::ModelLoadFailed, "compiled for another device: this AOTInductor package was compiled for cpu ...")
                .find("only on the device type"), std::string::npos);
  EXPECT_EQ(cause(Code::ModelLoadFailed, "missing: no model file at '<path>'"), "");
  EXPECT_NE(cause(Code::AppCheckFailed, "rule 'finite', output 1: output 1 holds a non-finite value").find("NaN"),
            std::string::npos);
  EXPECT_EQ(cause(Code::AppCheckFailed, "rule 'shape', output 0: ..."), "");
}

// As LibTorch reports it after a kernel's assertion (the CPU's error appended by L4.model_run).
TEST(Hints, DeviceSideAssertIsAnIndexOutOfRangeMostOften) {
  const std::string m = "CUDA error: device-side assert triggered; on the CPU, in a fresh process: RuntimeError: index out "
                        "of range in self (operation: torch.embedding)";
  const auto h = find_hint(Code::RuntimeError, m, cuda_context());
  ASSERT_TRUE(h.has_value());
  EXPECT_NE(h->cause.find("index out of range"), std::string::npos);
  EXPECT_NE(h->cause.find("CUDA context is unusable"), std::string::npos);
  EXPECT_NE(h->action.find("vocabulary size"), std::string::npos);
  EXPECT_EQ(cause(Code::RuntimeError, "CUDA error: an illegal memory access was encountered"), "");
}

// L4 across devices: the other GPUs ran their shards, so the named one is at fault, not the workload's size.
TEST(Hints, AShardThatFailsPointsAtItsGpu) {
  HintContext c = cuda_context();
  c.stage = "L4.across_devices";
  const std::string oom = "the shard on GPU 1 failed: CUDA out of memory. Tried to allocate 2.00 GiB";
  EXPECT_NE(cause(Code::OutOfMemory, oom, c).find("one GPU could not hold its shard"), std::string::npos);
  EXPECT_NE(find_hint(Code::OutOfMemory, oom, c)->action.find("--device-index N"), std::string::npos);
  EXPECT_NE(cause(Code::RuntimeError, "the shard on GPU 1 failed: CUDA error: unspecified launch failure", c)
                .find("one GPU failed its shard"), std::string::npos);
  c.stage = "L5.oom.load";  // elsewhere an out-of-memory keeps its own hint
  EXPECT_EQ(cause(Code::OutOfMemory, oom, c).find("one GPU"), std::string::npos);
}

TEST(Hints, PerformanceBelowFloorPointsAtThrottlingForCopyAndMatmul) {
  const auto copy = find_hint(Code::PerformanceBelowFloor, "copy 1.2 TB/s is 0.25 of the H200's 4.8 TB/s, below the floor 0.6", {});
  ASSERT_TRUE(copy.has_value());
  EXPECT_NE(copy->cause.find("moves memory"), std::string::npos);
  EXPECT_NE(copy->action.find("nvidia-smi -q -d PERFORMANCE"), std::string::npos);
  EXPECT_NE(cause(Code::PerformanceBelowFloor, "bf16 matmul 300 TFLOP/s is 0.30 of the H200's 989.5 TFLOP/s, below the floor 0.5")
                .find("multiplies matrices"), std::string::npos);
}

TEST(Hints, DriverTooOldNamesBothVersions) {
  HintContext c = cuda_context();
  c.driver_version = "535.104.05";
  const std::string got =
      cause(Code::GpuUnavailable, "CUDA driver version is insufficient for CUDA runtime version", c);
  EXPECT_NE(got.find("13.0"), std::string::npos) << got;
  EXPECT_NE(got.find("535.104.05"), std::string::npos) << got;
  EXPECT_NE(cause(Code::GpuUnavailable,
                  "The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver")
                .find("newer than the installed driver"),
            std::string::npos);
}

TEST(Hints, NoKernelImageNamesTheDeviceAndTheCompiledList) {
  const std::string got =
      cause(Code::RuntimeError, "CUDA error: no kernel image is available for execution on the device");
  EXPECT_NE(got.find("sm_90"), std::string::npos) << got;
  EXPECT_NE(got.find("sm_75, sm_80, sm_86"), std::string::npos) << got;
}

TEST(Hints, EachKnownSignature) {
  struct Case {
    Code code;
    const char* text;
    const char* expect;
  };
  for (const Case& c : std::vector<Case>{
           {Code::GpuUnavailable,
            "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",
            "no NVIDIA driver is visible"},
           {Code::GpuUnavailable, "Failed to initialize NVML: Driver/library version mismatch", "kernel driver"},
           {Code::GpuUnavailable, "CUDA error: all CUDA-capable devices are busy or unavailable", "exclusive-process"},
           {Code::RuntimeError, "CUDA error: CUDA-capable device(s) is/are busy or unavailable", "exclusive-process"},
           {Code::RuntimeError, "HIP error: invalid device function", "gfx target"},
           {Code::TorchImportFailed, "<path>/libkd_probe.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationE",
            "ABI"},
       }) {
    EXPECT_NE(cause(c.code, c.text).find(c.expect), std::string::npos) << c.text;
  }
}

// The next action of a SUITE_INCOMPLETE verdict is the build command its message ends with, and nothing else.
TEST(Hints, SuiteIncompleteNextActionIsTheBuildCommand) {
  const auto h = find_hint(Code::SuiteIncomplete,
                           "the probe's heavy part (libkd_probe_heavy.so: layers L4 to L8) is not built beside "
                           "libkd_probe.so; build it with: cmake --build build --target kd_probe_heavy",
                           cuda_context());
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->action, "cmake --build build --target kd_probe_heavy");
  EXPECT_NE(h->cause.find("the machine was not checked"), std::string::npos) << h->cause;
  EXPECT_FALSE(find_hint(Code::SuiteIncomplete, "no command in this message", cuda_context()).has_value());
  // The same words under another code are not this hint.
  EXPECT_FALSE(find_hint(Code::TorchImportFailed, "x; build it with: cmake --build build", cuda_context()).has_value());
}

TEST(Hints, VisibleDevicesSetButEmptyOrWrongWithoutItsValue) {
  HintContext c = cuda_context();
  c.visible_devices_env = "empty";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c).find("set but empty"), std::string::npos);
  c.visible_devices_env = "set";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c).find("names no device"), std::string::npos);
  c.visible_devices_env = "unset";
  EXPECT_EQ(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c), "");
}

TEST(Hints, OutOfMemoryTellsWhetherOthersHoldTheMemory) {
  // The H200's real text (2026-11-29), and the same card with 130 GiB held by another process.
  const std::string alone =
      "CUDA out of memory. Tried to allocate 1048576.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which "
      "139.28 GiB is free. Including non-PyTorch memory, this process has 520.00 MiB memory in use.";
  EXPECT_NE(cause(Code::OutOfMemory, alone).find("larger than the 139.3 GiB free"), std::string::npos)
      << cause(Code::OutOfMemory, alone);
  const std::string crowded =
      "CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity of 139.80 GiB of which "
      "9.28 GiB is free. Including non-PyTorch memory, this process has 520.00 MiB memory in use.";
  const std::string got = cause(Code::OutOfMemory, crowded);
  EXPECT_NE(got.find("other processes hold about 130.0 GiB"), std::string::npos) << got;
}

TEST(Hints, ArchPredictionExplainsAnL3Failure) {
  HintContext c = cuda_context();
  c.arch_supported = false;
  c.stage = "L3.product";
  EXPECT_NE(cause(Code::RuntimeError, "CUDA error: unspecified launch failure", c).find("sm_90"), std::string::npos);
  c.arch_supported = true;
  EXPECT_EQ(cause(Code::RuntimeError, "CUDA error: unspecified launch failure", c), "");
}

TEST(Hints, UnknownTextGivesNoHint) {
  EXPECT_FALSE(find_hint(Code::RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x2 and 3x3)", cuda_context()));
}

}  // namespace
}  // namespace kd
