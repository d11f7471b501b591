#include "codes.h"

#include <array>

namespace kd {
namespace {

constexpr std::array<CodeInfo, 22> kCodes{{
    {Code::GpuCheckPassed, "GPU_CHECK_PASSED", 0, "passed", "product and gradient confirmed on the selected GPU",
     "move to a small input of the application", std::nullopt},
    {Code::CpuCheckPassed, "CPU_CHECK_PASSED", 0, "passed", "confirmed on the CPU only (explicitly requested)",
     "conclude nothing about CUDA or ROCm", std::nullopt},
    {Code::SelectedTestsPassed, "SELECTED_TESTS_PASSED", 0,
     "passed", "the selected tests passed, but the fixed product-and-gradient check did not run in full",
     "run without a filter for a verdict on the device", std::nullopt},
    {Code::UsageError, "USAGE_ERROR", 2, "usage error", "bad command line; nothing ran", "the message says which argument and why",
     Action::FixCommand},
    {Code::TorchMissing, "TORCH_MISSING", 3, "LibTorch missing", "LibTorch is not there", "check the interpreter / library path, install",
     Action::FixInstall},
    {Code::TorchImportFailed, "TORCH_IMPORT_FAILED", 4, "LibTorch fails to load", "LibTorch is there but fails to load",
     "check the package and its dependencies (ABI, missing .so)", Action::FixInstall},
    {Code::GpuBackendAbsent, "GPU_BACKEND_ABSENT", 5, "no GPU backend in the build", "the build declares neither CUDA nor HIP",
     "install a build that matches your GPU stack", Action::FixInstall},
    {Code::GpuUnavailable, "GPU_UNAVAILABLE", 6, "GPU unavailable", "the GPU cannot be used from this process",
     "check device visibility, driver, permissions", Action::Triage},
    {Code::DeviceIndexInvalid, "DEVICE_INDEX_INVALID", 7, "device index invalid", "index outside the visible devices",
     "check the requested index and visibility", Action::FixCommand},
    {Code::CheckFailed, "CHECK_FAILED", 8, "wrong result", "the fixed computation gave a wrong result",
     "read the reported stage before running a model", Action::Triage},
    {Code::OutOfMemory, "OUT_OF_MEMORY", 9, "out of memory", "an allocation failed", "read the reported stage",
     Action::Rerun},
    {Code::RuntimeError, "RUNTIME_ERROR", 9, "runtime error", "a backend operation failed", "read the reported stage",
     Action::Triage},
    {Code::Timeout, "TIMEOUT", 10, "timeout", "stopped at the time limit", "treat as a failure; inspect the environment",
     Action::Triage},
    {Code::WorkerFailed, "WORKER_FAILED", 11, "worker failed", "the worker died or produced no usable report",
     "treat as a failure; inspect the environment", Action::Triage},
    {Code::OutputWriteFailed, "OUTPUT_WRITE_FAILED", 12, "report not written", "the report could not be saved where asked",
     "pick a new, writable file name", Action::FixCommand},
    {Code::ModelLoadFailed, "MODEL_LOAD_FAILED", 13, "model not loaded", "the model file is missing, unreadable or not a model",
     "check the path and permissions; export it with torch.jit.save (TorchScript) or, for the run's device, "
     "torch._inductor.aoti_compile_and_package (AOTInductor)", Action::FixModel},
    {Code::AppCheckFailed, "APP_CHECK_FAILED", 14, "application contract broken", "an application workload broke its output contract",
     "read which rule and which output; fix the model or the contract before increasing load", Action::FixModel},
    {Code::MemoryCheckFailed, "MEMORY_CHECK_FAILED", 15,
     "memory check failed (L5)", "a memory check failed: allocated memory grows across iterations, or the allocator's counters or emptyCache "
     "misbehave",
     "read the growth per iteration (or the failed check) in the message; find the tensors kept across iterations",
     Action::FixModel},
    {Code::PerformanceBelowFloor, "PERFORMANCE_BELOW_FLOOR", 16,
     "performance below the floor (L6, L8)", "a device ceiling (copy bandwidth or matrix product) is below the floor fraction of its reference",
     "check clocks, power and thermal limits, other processes on the GPU, and the PCIe/NVLink state; then rerun",
     Action::DrainNode},
    {Code::CollectiveUnreachable, "COLLECTIVE_UNREACHABLE", 17,
     "a rank unreachable (L8)", "a rank of the job did not join within the limit, or the transport between ranks failed",
     "read which ranks were missing and what was waited for; check those ranks' nodes, the network interface "
     "(GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME), firewalls and ports, and the InfiniBand/RDMA state", Action::Triage},
    {Code::GpuUnhealthy, "GPU_UNHEALTHY", 18,
     "GPU unhealthy (L2: NVML reports uncorrected ECC errors or a failed/pending remap)", "NVML reports uncorrected ECC errors, a failed or pending row remapping, or a pending page retirement on the "
     "target GPU",
     "reset the GPU or drain the node; a failed row remapping means the card must be replaced", Action::ResetGpu},
    {Code::SuiteIncomplete, "SUITE_INCOMPLETE", 19, "suite incomplete",
     "this build of the suite cannot run what was asked; nothing was concluded about the machine",
     "build what the message names (the exact command is in it), then run again", Action::FixInstall},
}};

}  // namespace

const CodeInfo& info(Code c) {
  for (const auto& i : kCodes)
    if (i.code == c) return i;
  return kCodes[static_cast<size_t>(Code::WorkerFailed)];
}
std::string_view name(Code c) { return info(c).name; }
int exit_code(Code c) { return info(c).exit_code; }
bool is_pass(Code c) { return info(c).exit_code == 0; }

std::optional<Code> code_from_name(std::string_view n) {
  for (const auto& i : kCodes)
    if (i.name == n) return i.code;
  return std::nullopt;
}

}  // namespace kd
