// The catalogue of signatures (docs/signatures.md): known error texts (as LibTorch, CUDA, NVML and the loader print
// them) and the facts that must agree -> the signature's id, cause and next action; facts that contradict -> none.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>

#include "verdict/signatures.h"

namespace kd {
namespace {

SignatureFacts cuda_context() {
  SignatureFacts c;
  c.cuda_compiled = "13.0";
  c.device_capability = "9.0";
  c.arch_list = {"sm_75", "sm_80", "sm_86"};
  return c;
}

std::string cause(Code code, const std::string& message, const SignatureFacts& c = cuda_context()) {
  const auto h = diagnose(code, message, c);
  return h ? h->cause : "";
}

std::string id(Code code, const std::string& message, const SignatureFacts& c = cuda_context()) {
  const auto h = diagnose(code, message, c);
  return h ? h->id : "";
}

TEST(Signatures, ModelNotTorchScriptAndNonFiniteOutput) {
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
TEST(Signatures, DeviceSideAssertIsAnIndexOutOfRangeMostOften) {
  const std::string m = "CUDA error: device-side assert triggered; on the CPU, in a fresh process: RuntimeError: index out "
                        "of range in self (operation: torch.embedding)";
  const auto h = diagnose(Code::RuntimeError, m, cuda_context());
  ASSERT_TRUE(h.has_value());
  EXPECT_NE(h->cause.find("index out of range"), std::string::npos);
  EXPECT_NE(h->cause.find("CUDA context is unusable"), std::string::npos);
  EXPECT_NE(h->action.find("vocabulary size"), std::string::npos);
  EXPECT_EQ(cause(Code::RuntimeError, "CUDA error: an illegal memory access was encountered"), "");
}

// L4 across devices: the other GPUs ran their shards, so the named one is at fault, not the workload's size.
TEST(Signatures, AShardThatFailsPointsAtItsGpu) {
  SignatureFacts c = cuda_context();
  c.stage = "L4.across_devices";
  const std::string oom = "the shard on GPU 1 failed: CUDA out of memory. Tried to allocate 2.00 GiB";
  EXPECT_NE(cause(Code::OutOfMemory, oom, c).find("one GPU could not hold its shard"), std::string::npos);
  EXPECT_NE(diagnose(Code::OutOfMemory, oom, c)->action.find("--device-index N"), std::string::npos);
  EXPECT_NE(cause(Code::RuntimeError, "the shard on GPU 1 failed: CUDA error: unspecified launch failure", c)
                .find("one GPU failed its shard"), std::string::npos);
  c.stage = "L5.oom.load";  // elsewhere an out-of-memory keeps its own hint
  EXPECT_EQ(cause(Code::OutOfMemory, oom, c).find("one GPU"), std::string::npos);
}

TEST(Signatures, PerformanceBelowFloorPointsAtThrottlingForCopyAndMatmul) {
  const auto copy = diagnose(Code::PerformanceBelowFloor, "copy 1.2 TB/s is 0.25 of the H200's 4.8 TB/s, below the floor 0.6", {});
  ASSERT_TRUE(copy.has_value());
  EXPECT_NE(copy->cause.find("moves memory"), std::string::npos);
  EXPECT_NE(copy->action.find("nvidia-smi -q -d PERFORMANCE"), std::string::npos);
  EXPECT_NE(cause(Code::PerformanceBelowFloor, "bf16 matmul 300 TFLOP/s is 0.30 of the H200's 989.5 TFLOP/s, below the floor 0.5")
                .find("multiplies matrices"), std::string::npos);
}

// --judge-shared-gpu applied the floor to a measurement others shared: the cause is the sharing, never the card.
TEST(Signatures, APerformanceJudgedOnASharedGpuBlamesTheSharingNotTheCard) {
  const auto h = diagnose(Code::PerformanceBelowFloor,
                          "bf16 matmul 289 TFLOP/s is 0.29 of the H200's 989.5 TFLOP/s, below the floor 0.5; other processes "
                          "used the GPU during the measurement: 2 other processes (40.00 GiB), up to 97 % of the SMs", {});
  ASSERT_TRUE(h);
  EXPECT_EQ(h->id, "device-below-floor-shared-gpu");
  EXPECT_NE(h->cause.find("--judge-shared-gpu applied the floor anyway"), std::string::npos) << h->cause;
  EXPECT_EQ(h->cause.find("healthy card"), std::string::npos) << h->cause;
  EXPECT_EQ(h->kind, Action::Rerun);  // never a reason to drain the node
  EXPECT_EQ(id(Code::PerformanceBelowFloor, "bf16 matmul 300 TFLOP/s is 0.30 of the H200's 989.5 TFLOP/s, below the floor 0.5"),
            "device-below-floor");  // the GPU to itself: the card's own figure
  // L8's floor on a rank whose GPU others used: the sharing, before the job's slow link.
  EXPECT_EQ(id(Code::PerformanceBelowFloor, "all-reduce bus bandwidth 1.20 GB/s at 16 MiB over 2 ranks is below "
                                            "--min-bus-bandwidth 50 GB/s (measured twice: 1.10 then 1.20 GB/s); other "
                                            "processes used the GPU during the measurement: 2 other processes (20.00 GiB)"),
            "device-below-floor-shared-gpu");
}

TEST(Signatures, DriverTooOldNamesBothVersions) {
  SignatureFacts c = cuda_context();
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

TEST(Signatures, NoKernelImageNamesTheDeviceAndTheCompiledList) {
  const std::string got =
      cause(Code::RuntimeError, "CUDA error: no kernel image is available for execution on the device");
  EXPECT_NE(got.find("sm_90"), std::string::npos) << got;
  EXPECT_NE(got.find("sm_75, sm_80, sm_86"), std::string::npos) << got;
}

TEST(Signatures, EachKnownSignature) {
  struct Case {
    Code code;
    const char* text;
    const char* expect;
  };
  SignatureFacts exclusive = cuda_context();
  exclusive.machine.compute_mode = "exclusive_process";
  SignatureFacts bare = cuda_context();  // a machine with no driver, outside any container
  for (const Case& c : std::vector<Case>{
           {Code::GpuUnavailable, "Failed to initialize NVML: Driver/library version mismatch", "kernel driver"},
           {Code::RuntimeError, "HIP error: invalid device function", "gfx target"},
           {Code::TorchImportFailed, "<path>/libkd_probe.so: undefined symbol: _ZN3c105ErrorC2ENS_14SourceLocationE",
            "ABI"},
       }) {
    EXPECT_NE(cause(c.code, c.text).find(c.expect), std::string::npos) << c.text;
  }
  EXPECT_NE(cause(Code::GpuUnavailable, "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU",
                  bare).find("no NVIDIA driver is loaded"), std::string::npos);
  for (const char* busy : {"CUDA error: all CUDA-capable devices are busy or unavailable",
                           "CUDA error: CUDA-capable device(s) is/are busy or unavailable"})
    EXPECT_NE(cause(Code::RuntimeError, busy, exclusive).find("exclusive-process"), std::string::npos) << busy;
}

// Issue 37: "busy or unavailable" was said to be exclusive-process mode on a GPU in the default mode with a low
// descriptor limit. Each cause now needs its facts; facts that contradict every signature give none.
TEST(Signatures, BusyOrUnavailableIsNamedOnlyByTheFactsThatAgree) {
  const std::string busy = "CUDA error: CUDA-capable device(s) is/are busy or unavailable";
  SignatureFacts c = cuda_context();
  c.machine.compute_mode = "default";
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "") << "default mode, ordinary limits: no cause is better than a wrong one";
  c.machine.open_files = 32;
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "open-files-limit");
  EXPECT_NE(cause(Code::RuntimeError, busy, c).find("ulimit -n) is 32"), std::string::npos);
  c.machine.open_files = 1024;
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "");
  c.machine.compute_mode = "exclusive_process";
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "exclusive-process-busy");
  c.machine.compute_mode = "prohibited";
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "compute-prohibited");
  c.machine.compute_mode.reset();
  EXPECT_EQ(id(Code::RuntimeError, busy, c), "") << "an unknown compute mode confirms nothing";
}

// Each signature of the machine around the GPU, with the facts that confirm it and a neighbour that contradicts it.
TEST(Signatures, TheMachineAroundTheGpu) {
  struct Case {
    const char* name;
    Code code;
    std::string text;
    std::function<void(MachineFacts&)> facts;
    const char* expect;  // the id, "" for none
  };
  const std::string no_driver =
      "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver";
  const std::string no_gpus = "No CUDA GPUs are available";
  const std::string unknown = "CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing "
                              "env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be "
                              "zero.";
  const std::string unexpected = "Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before "
                                 "calling NumCudaDevices() that might have already set an error? ";
  const std::string not_ready = unexpected + "Error 802: system not yet initialized";
  const std::string mismatch = unexpected + "Error 803: system has unsupported display driver / cuda driver combination";
  const std::string no_compat_hw = unexpected + "Error 804: forward compatibility was attempted on non supported HW";
  const std::string not_permitted = unexpected + "Error 800: operation not permitted";
  const std::string out_of_memory = unexpected + "Error 2: out of memory";
  const std::string transport = "the all-reduce failed: NCCL error: unhandled system error";
  const auto nodes = [](MachineFacts& m, int n, int inaccessible) {
    m.device_nodes = n;
    m.inaccessible_nodes = inaccessible;
  };
  const std::vector<Case> cases = {
      {"no driver, no container", Code::GpuUnavailable, no_driver, [](MachineFacts&) {}, "no-driver"},
      {"no driver in a container without nodes", Code::GpuUnavailable, no_driver,
       [](MachineFacts& m) { m.in_container = true; }, "container-without-gpus"},
      {"no device in a container without nodes", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.in_container = true; }, "container-without-gpus"},
      {"a container with its nodes and no driver library", Code::GpuUnavailable, no_driver,
       [&](MachineFacts& m) {
         m.in_container = true;
         nodes(m, 3, 0);
         m.kernel_driver = "580.95.05";
       },
       "libcuda-not-found"},
      {"a kernel driver without its library", Code::GpuUnavailable, no_driver,
       [](MachineFacts& m) { m.kernel_driver = "580.95.05"; }, "libcuda-not-found"},
      {"nodes this user may not open", Code::GpuUnavailable, no_gpus, [&](MachineFacts& m) { nodes(m, 3, 2); },
       "device-nodes-inaccessible"},
      {"a driver without nodes", Code::GpuUnavailable, no_gpus, [](MachineFacts& m) { m.kernel_driver = "580.95.05"; },
       "device-nodes-missing"},
      {"no device, nodes there, no other fact", Code::GpuUnavailable, no_gpus, [&](MachineFacts& m) { nodes(m, 3, 0); }, ""},
      {"unknown error without nvidia-uvm", Code::GpuUnavailable, unknown, [](MachineFacts& m) { m.uvm_loaded = false; },
       "uvm-missing"},
      {"unknown error without /dev/nvidia-uvm", Code::GpuUnavailable, unknown,
       [&](MachineFacts& m) {
         m.uvm_loaded = true;
         nodes(m, 2, 0);
       },
       "uvm-missing"},
      {"unknown error, uvm there", Code::GpuUnavailable, unknown,
       [&](MachineFacts& m) {
         m.uvm_loaded = true;
         nodes(m, 3, 0);
         m.uvm_node = true;
       },
       ""},
      {"802 with the fabric not started", Code::GpuUnavailable, not_ready,
       [](MachineFacts& m) { m.fabric_state = "not_started"; }, "fabric-manager-not-running"},
      {"802 on NVSwitch nodes, fabric unknown", Code::GpuUnavailable, not_ready,
       [](MachineFacts& m) { m.nvswitch_nodes = true; }, "fabric-manager-not-running"},
      {"802 with the fabric completed", Code::GpuUnavailable, not_ready,
       [](MachineFacts& m) { m.fabric_state = "completed"; }, "system-not-ready"},
      {"803 with a compat libcuda loaded", Code::GpuUnavailable, mismatch,
       [](MachineFacts& m) { m.libcuda_source = "compat"; }, "compat-library-mismatch"},
      {"803 with a compat libcuda on the path", Code::GpuUnavailable, mismatch,
       [](MachineFacts& m) { m.compat_on_path = true; }, "compat-library-mismatch"},
      {"803 without a compat library", Code::GpuUnavailable, mismatch,
       [](MachineFacts& m) { m.libcuda_source = "system"; }, "driver-library-mismatch"},
      {"804", Code::GpuUnavailable, no_compat_hw, [](MachineFacts&) {}, "compat-unsupported-device"},
      {"800", Code::GpuUnavailable, not_permitted, [](MachineFacts&) {}, "not-permitted"},
      {"800 in prohibited mode", Code::GpuUnavailable, not_permitted,
       [](MachineFacts& m) { m.compute_mode = "prohibited"; }, "compute-prohibited"},
      {"out of memory at cudaGetDeviceCount under ulimit -v", Code::GpuUnavailable, out_of_memory,
       [](MachineFacts& m) { m.address_space = 8ULL << 30; }, "address-space-limit"},
      {"the same without a limit", Code::GpuUnavailable, out_of_memory, [](MachineFacts&) {}, ""},
      {"the allocator's own out-of-memory under ulimit -v", Code::OutOfMemory,
       "CUDA out of memory. Tried to allocate 4096.00 GiB.", [](MachineFacts& m) { m.address_space = 8ULL << 30; }, ""},
      {"an allocator setting LibTorch refuses", Code::RuntimeError, "Unrecognized key 'foo' in CUDA allocator config.",
       [](MachineFacts& m) { m.alloc_conf_set = {"PYTORCH_CUDA_ALLOC_CONF"}; }, "allocator-config-invalid"},
      {"its words with no variable set", Code::RuntimeError, "Unrecognized key 'foo' in CUDA allocator config.",
       [](MachineFacts&) {}, ""},
      {"a device named twice", Code::GpuUnavailable, no_gpus, [](MachineFacts& m) { m.visible_devices = "duplicate"; },
       "visible-devices-duplicate"},
      {"an entry neither index nor UUID", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.visible_devices = "malformed"; }, "visible-devices-malformed"},
      {"an empty list", Code::GpuUnavailable, no_gpus, [](MachineFacts& m) { m.visible_devices = "empty"; },
       "visible-devices-empty"},
      {"a list naming no device", Code::GpuUnavailable, no_gpus, [](MachineFacts& m) { m.visible_devices = "ok"; },
       "visible-devices-no-match"},
      {"MIG without an instance", Code::GpuUnavailable, no_gpus, [](MachineFacts& m) { m.mig_enabled = true; },
       "mig-without-instance"},
      {"too many open files", Code::RuntimeError, "socket: Too many open files",
       [](MachineFacts& m) { m.open_files = 64; }, "open-files-limit"},
      {"no GPU at all with the nodes there and a tiny open-files limit", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.open_files = 16, m.device_nodes = 4; }, "open-files-limit"},
      {"no GPU, a tiny limit, but no device node: not the limit", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.open_files = 16; }, ""},
      {"no GPU, a tiny limit, a node this user cannot open: the node", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.open_files = 16, m.device_nodes = 4, m.inaccessible_nodes = 1; }, "device-nodes-inaccessible"},
      {"no GPU with the nodes there and an ordinary limit: no cause", Code::GpuUnavailable, no_gpus,
       [](MachineFacts& m) { m.open_files = 1024, m.device_nodes = 4; }, ""},
      {"L8's transport over a small /dev/shm", Code::CollectiveUnreachable, transport,
       [](MachineFacts& m) { m.shm_size = 64ULL << 20; }, "collective-shm-small"},
      {"L8's transport, /dev/shm large", Code::CollectiveUnreachable, transport,
       [](MachineFacts& m) { m.shm_size = 32ULL << 30; }, "collective-transport"},
  };
  for (const Case& c : cases) {
    SignatureFacts f = cuda_context();
    c.facts(f.machine);
    EXPECT_EQ(id(c.code, c.text, f), c.expect) << c.name;
    if (*c.expect) EXPECT_FALSE(diagnose(c.code, c.text, f)->action.empty()) << c.name;
  }
}

TEST(Signatures, CausesNameTheFactsNeverAValue) {
  SignatureFacts f = cuda_context();
  f.machine.address_space = 8ULL << 30;
  EXPECT_NE(cause(Code::GpuUnavailable, "Error 2: out of memory", f).find("8192 MiB"), std::string::npos);
  f = cuda_context();
  f.machine.alloc_conf_set = {"PYTORCH_CUDA_ALLOC_CONF"};
  const auto d = diagnose(Code::RuntimeError, "Expected 'True' or 'False' at index 1 in ConfigTokenizer", f);
  ASSERT_TRUE(d);
  EXPECT_NE(d->cause.find("PYTORCH_CUDA_ALLOC_CONF holds a setting"), std::string::npos);
  f = cuda_context();
  f.machine.in_container = true;
  f.machine.kernel_driver = "580.95.05";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", f).find("driver (580.95.05) is loaded, but no"),
            std::string::npos);
}

// The next action of a SUITE_INCOMPLETE verdict is the build command its message ends with, and nothing else; a command
// that names a path of the machine is left to the message (redacted there), never made an action.
TEST(Signatures, SuiteIncompleteNextActionIsTheBuildCommand) {
  const auto h = diagnose(Code::SuiteIncomplete,
                          "the probe's heavy part (libkd_probe_heavy.so: layers L4 to L8) is not built beside "
                          "libkd_probe.so; build it with: cmake --build build --target kd_probe_heavy",
                          cuda_context());
  ASSERT_TRUE(h.has_value());
  EXPECT_EQ(h->id, "suite-incomplete");
  EXPECT_EQ(h->action, "cmake --build build --target kd_probe_heavy");
  EXPECT_NE(h->cause.find("nothing was checked on the machine"), std::string::npos) << h->cause;
  EXPECT_EQ(id(Code::SuiteIncomplete, "no command in this message"), "");
  EXPECT_EQ(id(Code::SuiteIncomplete, "x; build it with: cmake --build /home/u/kd/build --target kd_probe"), "");
  // The same words under another code are not this signature.
  EXPECT_NE(id(Code::TorchImportFailed, "x; build it with: cmake --build build --target kd_probe"), "suite-incomplete");
}

// Every id of the catalogue has its row in docs/signatures.md, and the document names no other.
TEST(Signatures, EachIdHasItsRowInTheDocs) {
  std::ifstream in(KD_SIGNATURES_DOC);
  ASSERT_TRUE(in) << KD_SIGNATURES_DOC;
  std::set<std::string> documented;
  for (std::string line; std::getline(in, line);)
    if (line.rfind("| `", 0) == 0) documented.insert(line.substr(3, line.find('`', 3) - 3));
  std::set<std::string> ids;
  for (const std::string& i : signature_ids()) {
    ids.insert(i);
    EXPECT_TRUE(documented.count(i)) << i << " has no row in docs/signatures.md";
    EXPECT_EQ(i.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-"), std::string::npos) << i;
  }
  for (const std::string& d : documented) EXPECT_TRUE(ids.count(d)) << d << " is in docs/signatures.md only";
}

TEST(Signatures, VisibleDevicesSetButEmptyOrWrongWithoutItsValue) {
  SignatureFacts c = cuda_context();
  c.machine.visible_devices = "empty";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c).find("set but empty"), std::string::npos);
  c.machine.visible_devices = "ok";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c).find("names no device"), std::string::npos);
  c.machine.visible_devices = "duplicate";
  EXPECT_NE(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c).find("names one device twice"), std::string::npos);
  c.machine.visible_devices = "unset";
  EXPECT_EQ(cause(Code::GpuUnavailable, "No CUDA GPUs are available", c), "");
}

TEST(Signatures, OutOfMemoryTellsWhetherOthersHoldTheMemory) {
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

TEST(Signatures, ArchPredictionExplainsAnL3Failure) {
  SignatureFacts c = cuda_context();
  c.arch_supported = false;
  c.stage = "L3.product";
  EXPECT_NE(cause(Code::RuntimeError, "CUDA error: unspecified launch failure", c).find("sm_90"), std::string::npos);
  c.arch_supported = true;
  EXPECT_EQ(cause(Code::RuntimeError, "CUDA error: unspecified launch failure", c), "");
}

TEST(Signatures, UnknownTextGivesNoHint) {
  EXPECT_FALSE(diagnose(Code::RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x2 and 3x3)", cuda_context()));
}

}  // namespace
}  // namespace kd
