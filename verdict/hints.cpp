#include "hints.h"

#include "app_hints.h"
#include "fixtures/suite_build.h"
#include "text_scan.h"

#include <cstdlib>

#include <fmt/format.h>

namespace kd {
namespace {

std::string sm(const std::string& capability) {  // "9.0" -> "sm_90"
  std::string digits;
  for (char c : capability)
    if (c != '.') digits += c;
  return "sm_" + digits;
}

std::string arch_text(const HintContext& c) {
  return c.arch_list.empty() ? std::string("unknown") : fmt::format("{}", fmt::join(c.arch_list, ", "));
}

Hint arch_hint(const HintContext& c) {
  const std::string device = c.device_capability.empty() ? "this device's architecture" : sm(c.device_capability);
  return {fmt::format("the device's architecture ({}) is not in the build's compiled list ({})", device, arch_text(c)),
          "install a LibTorch built for this GPU's architecture"};
}

// "GPU 0 has a total capacity of 139.80 GiB of which 139.28 GiB is free. ... this process has 0 bytes memory in use."
std::optional<Hint> oom_hint(const std::string& m) {
  using namespace scan;
  const Piece unit = word({"GiB", "MiB", "KiB", "bytes"});
  const auto cap = search(m, {text("total capacity of "), number(), text(" GiB of which "), number(), text(" "), unit,
                              text(" is free")});
  const auto own = search(m, {text("this process has "), number(), text(" "), unit, text(" memory in use")});
  if (!cap) return std::nullopt;
  auto gib = [](const std::string& v, const std::string& unit) {
    const double x = std::atof(v.c_str());
    return unit == "GiB" ? x : unit == "MiB" ? x / 1024 : unit == "KiB" ? x / (1024 * 1024) : x / (1024.0 * 1024 * 1024);
  };
  const double total = gib((*cap)[0], "GiB"), free = gib((*cap)[1], (*cap)[2]);
  const double mine = own ? gib((*own)[0], (*own)[1]) : 0;
  const double others = total - free - mine;
  if (others > 0.5 && others > 0.05 * total)
    return Hint{fmt::format("other processes hold about {:.1f} GiB of the device's {:.1f} GiB ({:.1f} GiB free, "
                            "{:.1f} GiB used by this run)", others, total, free, mine),
                "free the GPU (nvidia-smi lists the processes holding it) or choose another device"};
  return Hint{fmt::format("the request is larger than the {:.1f} GiB free of {:.1f} GiB ({:.1f} GiB used by this run)",
                          free, total, mine),
              "reduce the batch or model size, or use a GPU with more memory"};
}

}  // namespace

// L8: which of the usual causes the message points at.
Hint collective_hint(const std::string& m) {
  if (mentions(m, "rendezvous store did not answer"))
    return Hint{"rank 0 is not running, or its address or port cannot be reached from this node (a wrong MASTER_ADDR, "
                "a firewall, or the port taken on rank 0's node)",
                "check that rank 0 started and what it reported; check MASTER_ADDR and MASTER_PORT, and that the port is "
                "open between the nodes (nc -z HOST PORT)"};
  if (mentions(m, "did not join"))
    return Hint{"the named ranks never started, started too late, or cannot reach rank 0 (a node that is down or "
                "still pulling its image, a job step that launched fewer tasks than the world size)",
                "look at the named ranks' nodes and their own reports; check that the job starts one task per rank and "
                "that --timeout leaves time for the slowest node to start"};
  if (mentions(m, "could not serve"))
    return Hint{"rank 0 could not listen on the rendezvous port (taken by another job, or not allowed)",
                "choose another MASTER_PORT (or --rendezvous HOST:PORT) that is free on rank 0's node"};
  return Hint{"the ranks met but the transport between them failed: a rank died, or the chosen network interface does "
              "not connect the nodes (a wrong interface, a firewall between them, InfiniBand/RDMA down on a node)",
              "read which ranks never reached the step; choose the interface (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME), "
              "check `ibstat`/`ibv_devinfo` on each node, and run again with NCCL_DEBUG=INFO"};
}

std::optional<Hint> find_hint(Code code, const std::string& m, const HintContext& c) {
  if (code == Code::SuiteIncomplete) {  // the message ends with the command that builds what is missing
    const size_t at = m.rfind(suite::kBuildItWith);
    if (at == std::string::npos) return std::nullopt;
    return Hint{"a part of this build of the suite is not built or is from another build: the machine was not checked",
                m.substr(at + suite::kBuildItWith.size())};
  }
  if (mentions(m, "driver version is insufficient for CUDA runtime version") || mentions(m, "NVIDIA driver on your system is too old")) {
    const std::string cuda = c.cuda_compiled.empty() ? "" : " " + c.cuda_compiled;
    const std::string driver = c.driver_version.empty() ? "" : fmt::format(" (driver {})", c.driver_version);
    return Hint{fmt::format("the build's CUDA{} is newer than the installed driver{} supports", cuda, driver),
                "update the NVIDIA driver, or install a LibTorch built for an older CUDA"};
  }
  if (mentions(m, "no kernel image is available for execution on the device")) return arch_hint(c);
  if (mentions(m, "device-side assert triggered"))
    return Hint{"a GPU kernel's own assertion failed, most often an index out of range (token ids at or above the "
                "embedding's vocabulary size, class labels at or above the number of classes, gather/scatter "
                "indices); afterwards the process's CUDA context is unusable",
                "fix the input (ids, labels and indices within range) or the model's vocabulary size; the CPU's "
                "error in the message names the operation"};
  if (mentions(m, "Found no NVIDIA driver on your system"))
    return Hint{"no NVIDIA driver is visible to this process (not installed, or not passed into the container)",
                "install the NVIDIA driver, or start the container with the GPUs passed in (e.g. --gpus all)"};
  if (mentions(m, "Driver/library version mismatch"))
    return Hint{"the loaded NVIDIA kernel driver and its user-space libraries differ (typically after a driver "
                "upgrade without a reboot)",
                "reboot, or reload the nvidia kernel modules"};
  if (mentions(m, "busy or unavailable"))
    return Hint{"the GPU is held by another process in exclusive-process compute mode, or is otherwise unavailable",
                "check `nvidia-smi` for the compute mode and the processes using the GPU"};
  if (mentions(m, "HIP error: invalid device function"))
    return Hint{"the device's gfx target is not among those this ROCm build was compiled for",
                "install a ROCm build of LibTorch that includes this GPU's gfx target"};
  if (auto h = app_hint(code, m)) return h;  // before the suite's own "undefined symbol": an extension's is not ours
  if (mentions(m, "undefined symbol"))
    return Hint{"a C++ ABI or version mismatch between this suite and the LibTorch it loaded (a symbol is missing)",
                "rebuild the suite against this LibTorch (scripts/build), or load the LibTorch it was built with"};
  if (code == Code::GpuUnavailable && c.visible_devices_env != "unset")
    return Hint{c.visible_devices_env == "empty" ? "CUDA_VISIBLE_DEVICES is set but empty: it hides every GPU"
                                                 : "CUDA_VISIBLE_DEVICES is set but names no device this process can use",
                "unset CUDA_VISIBLE_DEVICES, or set it to the index or UUID of a GPU that nvidia-smi lists"};
  // Before the generic out-of-memory hint: the other GPUs ran their shards, so it is this GPU.
  if (c.stage == "L4.across_devices" && mentions(m, "the shard on"))
    return Hint{code == Code::OutOfMemory
                    ? "one GPU could not hold its shard though GPU 0 held the whole workload: that GPU's memory is "
                      "taken by another process, or it is a smaller card"
                    : "one GPU failed its shard of a workload GPU 0 ran whole: that GPU, or its process, is at fault",
                "check the named GPU alone (--device-index N --layers app) and its other processes (nvidia-smi)"};
  if (code == Code::CollectiveUnreachable) return collective_hint(m);
  if (code == Code::OutOfMemory && c.oom) {  // L5 knows the phase: its cause and action are specific
    const memory::OomVerdict v = memory::classify_oom(*c.oom);
    return Hint{v.cause, v.action};
  }
  if (code == Code::OutOfMemory)
    if (auto h = oom_hint(m)) return h;
  if (code == Code::ModelLoadFailed && mentions(m, "wrongly formatted: an AOTInductor package"))
    return Hint{"the package's compiled model does not load here (made by another torch version, or for another "
                "platform or CPU)",
                "compile the package again with the torch version of this LibTorch, on a machine like this one"};
  if (code == Code::ModelLoadFailed && mentions(m, "wrongly formatted"))
    return Hint{"the file is neither a TorchScript archive nor an AOTInductor package (a state_dict, a pickled module, "
                "an export of another format, or a truncated file)",
                "export the model with torch.jit.script (or torch.jit.trace) and torch.jit.save, or with "
                "torch._inductor.aoti_compile_and_package, then pass that file"};
  if (code == Code::ModelLoadFailed && mentions(m, "cannot load AOTInductor packages"))
    return Hint{"this LibTorch predates the loader of AOTInductor packages",
                "run the suite built against a newer LibTorch (2.11), or export the model with torch.jit.save"};
  if (code == Code::ModelLoadFailed && mentions(m, "compiled for another device"))
    return Hint{"an AOTInductor package runs only on the device type it was compiled for",
                "compile it again on the run's device (model and example inputs there), or run on the device it was "
                "compiled for"};
  if (code == Code::AppCheckFailed && mentions(m, "rule 'finite'"))
    return Hint{"the model produced NaN or infinity on this input",
                "check the input ranges in the spec against what the model expects, and the model's numerics"};
  if (code == Code::PerformanceBelowFloor)
    return Hint{mentions(m, "copy") ? "the device moves memory slower than its datasheet figure allows for a healthy card"
                               : "the device multiplies matrices slower than its datasheet figure allows for a healthy card",
                "look for throttling (`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER`: power cap, thermal, clocks held low) "
                "and other processes on the GPU (`nvidia-smi`), then rerun; a repeat below the floor is a hardware or "
                "configuration question for the machine's owner"};
  if (code == Code::GpuUnhealthy && mentions(m, "row remapping failed"))
    return Hint{"the GPU's memory has a bad row it could not remap: no spare rows are left, the card is failing",
                "drain the node and have the card replaced; a reset does not repair it"};
  if (code == Code::GpuUnhealthy)
    return Hint{"the GPU's memory had uncorrectable errors, or a row remapping or a page retirement waits for a reset",
                "reset the GPU (nvidia-smi -r with no process on it, or reboot) or drain the node, then run again; "
                "errors that come back after a reset mean the card must be replaced"};
  if (code == Code::MemoryCheckFailed && mentions(m, "per iteration"))
    return Hint{"tensors are kept alive across iterations: a list of losses or outputs that keeps their autograd graphs, "
                "or a cache that only grows",
                "keep numbers (loss.item()) or detached tensors across iterations, compute evaluation losses under "
                "torch.no_grad(), and bound any cache; then rerun --layers L5"};
  if (code == Code::MemoryCheckFailed)
    return Hint{"the CUDA caching allocator's counters or emptyCache do not match what the workload held",
                "rerun once; if it repeats, keep the result bundle and check PYTORCH_CUDA_ALLOC_CONF and the LibTorch "
                "version (an allocator setting or bug)"};
  if (c.arch_supported == false && c.stage.rfind("L3.", 0) == 0) return arch_hint(c);
  return std::nullopt;
}

}  // namespace kd
