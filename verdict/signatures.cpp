#include "signatures.h"

#include <cstdlib>
#include <set>

#include <fmt/format.h>

#include "signature_row.h"
#include "text_scan.h"

namespace kd {
namespace signature {
namespace {

// ---- Words of the CUDA runtime and of LibTorch, as they reach the report -------------------------------------------

// No device: cudaErrorNoDevice (100), which LibTorch turns into "No CUDA GPUs are available".
bool no_device(const Symptom& s) {
  return s.says_any({"No CUDA GPUs are available", "no CUDA-capable device is detected"});
}
// cudaErrorDevicesUnavailable (46).
bool busy(const Symptom& s) { return s.says("busy or unavailable"); }
// cudaErrorUnknown (999) at the first CUDA call, in LibTorch's words or the runtime's.
bool unknown_error(const Symptom& s) { return s.says_any({"CUDA unknown error", "Error 999: unknown error"}); }
bool no_driver_library(const Symptom& s) { return s.says("Found no NVIDIA driver on your system"); }
bool gpu_unavailable(const Symptom& s) { return s.code == Code::GpuUnavailable; }

// ---- Texts made from the facts ---------------------------------------------------------------------------------------

std::string sm(const std::string& capability) {  // "9.0" -> "sm_90"
  std::string digits;
  for (char c : capability)
    if (c != '.') digits += c;
  return "sm_" + digits;
}

std::string arch_cause(const Symptom& s) {
  const SignatureFacts& c = s.facts;
  const std::string device = c.device_capability.empty() ? "this device's architecture" : sm(c.device_capability);
  const std::string list = c.arch_list.empty() ? std::string("unknown") : fmt::format("{}", fmt::join(c.arch_list, ", "));
  return fmt::format("the device's architecture ({}) is not in the build's compiled list ({})", device, list);
}

std::string driver_too_old_cause(const Symptom& s) {
  const SignatureFacts& c = s.facts;
  const std::string cuda = c.cuda_compiled.empty() ? "" : " " + c.cuda_compiled;
  const std::string driver = c.driver_version.empty() ? "" : fmt::format(" (driver {})", c.driver_version);
  return fmt::format("the build's CUDA{} is newer than the installed driver{} supports", cuda, driver);
}

std::string driver_named(const MachineFacts& m) {
  return m.kernel_driver ? fmt::format(" ({})", *m.kernel_driver) : std::string();
}

std::string container_without_gpus_cause(const Symptom& s) {
  return s.machine().kernel_driver
             ? fmt::format("this container was started without its GPUs: the machine's NVIDIA driver{} is loaded, but no "
                           "NVIDIA device node (nvidiactl, nvidia0, ...) was passed in",
                           driver_named(s.machine()))
             : "this container has no NVIDIA device nodes (nvidiactl, nvidia0, ...) and sees no NVIDIA driver: it was "
               "started without its GPUs, or the machine has none";
}

std::string inaccessible_nodes_cause(const Symptom& s) {
  const MachineFacts& m = s.machine();
  return fmt::format("this user may not open {} of the {} NVIDIA device nodes (nvidiactl, nvidia0, ...): their "
                     "permissions or group, or the container's device rules",
                     m.inaccessible_nodes, m.device_nodes);
}

std::string uvm_cause(const Symptom& s) {
  return s.machine().uvm_loaded == false
             ? "the nvidia-uvm kernel module is not loaded (the kernel's module list lacks it): CUDA cannot manage "
               "memory without it"
             : "the nvidia-uvm device node is missing: CUDA cannot manage memory without it";
}

std::string system_not_ready_cause(const Symptom& s) {
  const bool fabric_done = s.machine().fabric_state == "completed" || s.machine().fabric_state == "not_supported";
  return std::string("the CUDA driver says the system is not yet ready: a driver service it needs is not running") +
         (fabric_done ? "" : " (on NVSwitch systems, the fabric manager: nvidia-fabricmanager)");
}

std::string compat_cause(const Symptom& s) {
  const MachineFacts& m = s.machine();
  const std::string which = m.libcuda_source == "compat" ? "is loaded" : "is on LD_LIBRARY_PATH";
  return fmt::format("a forward-compatibility libcuda (a folder named compat) {} and does not work with this kernel "
                     "driver{}: the compat package must match a supported driver branch and a data-center GPU",
                     which, driver_named(m));
}

std::string driver_library_cause(const Symptom& s) {
  return fmt::format("the CUDA driver library (libcuda.so.1) and the NVIDIA kernel driver{} are of different versions "
                     "(typically after a driver upgrade without a reboot, or a libcuda copied into a container or onto "
                     "LD_LIBRARY_PATH)",
                     driver_named(s.machine()));
}

std::string open_files_cause(const Symptom& s) {
  return fmt::format("the open-files limit (ulimit -n) is {}: too low for the CUDA driver, which opens a descriptor per "
                     "device node and more per context",
                     *s.machine().open_files);
}

std::string address_space_cause(const Symptom& s) {
  return fmt::format("an address-space limit (ulimit -v, {} MiB) is set: CUDA reserves far more virtual address space "
                     "than it uses (one range as large as the GPU's and the host's memory together), so it cannot start",
                     *s.machine().address_space >> 20);
}

std::string alloc_conf_cause(const Symptom& s) {
  return fmt::format("{} holds a setting this LibTorch refuses (the message names it)",
                     fmt::join(s.machine().alloc_conf_set, " or "));
}

std::string alloc_conf_action(const Symptom& s) {
  return fmt::format("fix or unset {}: keys such as expandable_segments:True, max_split_size_mb:N, "
                     "garbage_collection_threshold:0.N, backend:native|cudaMallocAsync, separated by commas",
                     fmt::join(s.machine().alloc_conf_set, " and "));
}

std::string not_permitted_cause(const Symptom& s) {
  return std::string("the CUDA driver refused to let this process use the GPU (operation not permitted)") +
         (s.machine().in_container ? ": in a container, its confinement (a seccomp profile, dropped capabilities, a "
                                     "sandboxing runtime) is the usual reason"
                                   : ": a policy of the driver or of the sandbox around this process");
}

std::string shm_cause(const Symptom& s) {
  return fmt::format("the shared-memory folder (dev/shm) is {} MiB: NCCL's shared-memory transport between "
                     "processes of one node needs more (a container's default is 64 MiB)",
                     *s.machine().shm_size >> 20);
}

// "GPU 0 has a total capacity of 139.80 GiB of which 139.28 GiB is free. ... this process has 0 bytes memory in use."
struct OomNumbers {
  double total = 0, free = 0, mine = 0;
  double others() const { return total - free - mine; }
  bool others_hold() const { return others() > 0.5 && others() > 0.05 * total; }
};
std::optional<OomNumbers> oom_numbers(const std::string& m) {
  using namespace scan;
  const Piece unit = word({"GiB", "MiB", "KiB", "bytes"});
  const auto cap = search(m, {text("total capacity of "), number(), text(" GiB of which "), number(), text(" "), unit,
                              text(" is free")});
  const auto own = search(m, {text("this process has "), number(), text(" "), unit, text(" memory in use")});
  if (!cap) return std::nullopt;
  auto gib = [](const std::string& v, const std::string& u) {
    const double x = std::atof(v.c_str());
    return u == "GiB" ? x : u == "MiB" ? x / 1024 : u == "KiB" ? x / (1024 * 1024) : x / (1024.0 * 1024 * 1024);
  };
  return OomNumbers{gib((*cap)[0], "GiB"), gib((*cap)[1], (*cap)[2]), own ? gib((*own)[0], (*own)[1]) : 0};
}

std::string oom_others_cause(const Symptom& s) {
  const OomNumbers n = *oom_numbers(s.message);
  return fmt::format("other processes hold about {:.1f} GiB of the device's {:.1f} GiB ({:.1f} GiB free, {:.1f} GiB used "
                     "by this run)",
                     n.others(), n.total, n.free, n.mine);
}

std::string oom_too_large_cause(const Symptom& s) {
  const OomNumbers n = *oom_numbers(s.message);
  return fmt::format("the request is larger than the {:.1f} GiB free of {:.1f} GiB ({:.1f} GiB used by this run)", n.free,
                     n.total, n.mine);
}

std::string l5_oom_cause(const Symptom& s) { return memory::classify_oom(*s.facts.oom).cause; }
std::string l5_oom_action(const Symptom& s) { return memory::classify_oom(*s.facts.oom).action; }

std::string slow_device_cause(const Symptom& s) {
  return s.says("copy") ? "the device moves memory slower than its datasheet figure allows for a healthy card"
                        : "the device multiplies matrices slower than its datasheet figure allows for a healthy card";
}

std::string xid_cause(const Symptom& s) {
  return fmt::format("the NVIDIA driver logged, for this GPU since its last load, {}: the GPU is unusable until it is "
                     "reset",
                     fmt::join(s.facts.unusable_xids, "; "));
}
std::string xid_next_action(const Symptom& s) {
  switch (*s.facts.xid_action) {
    case Action::ReplaceGpu: return "drain the node and have the card replaced: its memory could not remap a bad row";
    case Action::DrainNode:
      return "drain the node and reboot it (a GPU that fell off the bus, or a pending node reboot, needs the whole "
             "node); if it comes back, check the GPU's power, cooling and seating, then replace it";
    default:
      return "reset the GPU (nvidia-smi -r -i N with no process on it) or reboot the node, then run again; the same "
             "Xid after a reset means the card must be replaced";
  }
}
Action xid_action(const Symptom& s) { return *s.facts.xid_action; }

// The node's own software when outside a container; inside one, what the container was given.
Action node_unless_container(const Symptom& s) { return s.machine().in_container ? Action::FixEnvironment : Action::DrainNode; }
// nvidia-uvm not loaded is the node's (a container shares the host's modules); a missing node in a container is the
// container's.
Action uvm_action(const Symptom& s) {
  return s.machine().uvm_loaded == false ? Action::DrainNode : node_unless_container(s);
}

bool collective_transport(const Symptom& s) {  // L8: the ranks met, then their transport failed
  return s.code == Code::CollectiveUnreachable &&
         !s.says_any({"rendezvous store did not answer", "did not join", "could not serve"});
}

// ---- The catalogue, most specific first ------------------------------------------------------------------------------

// The build, the driver and the device: the CUDA runtime's and LibTorch's words, confirmed by the machine's facts.
const std::vector<Row>& driver_rows() {
  static const std::vector<Row> rows = {
      {"driver-too-old",
       [](const Symptom& s) {
         return s.says_any({"driver version is insufficient for CUDA runtime version", "NVIDIA driver on your system is too old"});
       },
       driver_too_old_cause, "update the NVIDIA driver, or install a LibTorch built for an older CUDA",
       Action::FixInstall},
      {"arch-not-compiled", [](const Symptom& s) { return s.says("no kernel image is available for execution on the device"); },
       arch_cause, "install a LibTorch built for this GPU's architecture", Action::FixInstall},
      {"device-side-assert", [](const Symptom& s) { return s.says("device-side assert triggered"); },
       "a GPU kernel's own assertion failed, most often an index out of range (token ids at or above the embedding's "
       "vocabulary size, class labels at or above the number of classes, gather/scatter indices); afterwards the "
       "process's CUDA context is unusable",
       "fix the input (ids, labels and indices within range) or the model's vocabulary size; the CPU's error in the "
       "message names the operation", Action::FixModel},
      {"nvml-driver-mismatch", [](const Symptom& s) { return s.says("Driver/library version mismatch"); },
       "the loaded NVIDIA kernel driver and its user-space libraries differ (typically after a driver upgrade without a "
       "reboot)",
       "reboot, or reload the nvidia kernel modules", Action::DrainNode},
      {"open-files-limit",
       [](const Symptom& s) {
         // "No CUDA GPUs are available" with every device node there and open to this user and nothing hiding one:
         // the driver could not open them (an H200 at ulimit -n 16, docs/evidence/gpu-machine-2026-12-04-h200.log).
         const bool nodes_but_no_device = no_device(s) && s.machine().device_nodes > 0 &&
                                          s.machine().inaccessible_nodes == 0 && s.machine().visible_devices == "unset";
         return s.machine().open_files && *s.machine().open_files < kLowOpenFiles &&
                (busy(s) || s.says("Too many open files") || nodes_but_no_device);
       },
       open_files_cause,
       "raise the limit (ulimit -n 4096, or the job's or container's nofile setting: Slurm's PropagateResourceLimits, "
       "docker run --ulimit nofile=65536), then run again", Action::FixEnvironment},
      {"address-space-limit",
       [](const Symptom& s) {
         return s.machine().address_space && !s.says("CUDA out of memory") &&
                (s.says("out of memory") || s.says("can't allocate memory"));
       },
       address_space_cause,
       "remove the limit (ulimit -v unlimited); a batch system limits memory with the cgroup instead (Slurm: --mem, "
       "not a virtual-memory limit)", Action::FixEnvironment},
      {"device-nodes-inaccessible",
       [](const Symptom& s) {
         return gpu_unavailable(s) && s.machine().inaccessible_nodes > 0 &&
                (no_device(s) || unknown_error(s) || s.says("CUDA driver initialization failed") || s.says("operation not permitted"));
       },
       inaccessible_nodes_cause,
       "add the user to the group that owns the NVIDIA device nodes (ls -l shows it in the dev folder; often video or "
       "render), or fix the nodes' mode; in a container, pass the devices with the NVIDIA Container Toolkit (--gpus)",
       Action::FixEnvironment},
      {"container-without-gpus",
       [](const Symptom& s) {
         return gpu_unavailable(s) && s.machine().in_container && s.machine().device_nodes == 0 &&
                (no_driver_library(s) || no_device(s));
       },
       container_without_gpus_cause,
       "start the container with its GPUs: docker run --gpus all (or --device nvidia.com/gpu=all with CDI, podman "
       "likewise), a Kubernetes pod with an nvidia.com/gpu resource; or run on a machine that has them",
       Action::FixEnvironment},
      {"libcuda-not-found",
       [](const Symptom& s) { return gpu_unavailable(s) && no_driver_library(s) && s.machine().kernel_driver.has_value(); },
       +[](const Symptom& s) {
         return fmt::format("the NVIDIA kernel driver{} is loaded but its user-space library libcuda.so.1 is not found by "
                            "the loader (not installed, or not mounted into this container)",
                            driver_named(s.machine()));
       },
       "install the driver's user-space libraries of the same version (e.g. libnvidia-compute), or start the container "
       "with the NVIDIA Container Toolkit, which mounts them",
       {node_unless_container, {Action::DrainNode, Action::FixEnvironment}}},
      {"no-driver",
       [](const Symptom& s) {
         return gpu_unavailable(s) && no_driver_library(s) && !s.machine().kernel_driver && !s.machine().in_container;
       },
       "no NVIDIA driver is loaded on this machine (no NVIDIA kernel module) and no libcuda.so.1 is found",
       "install the NVIDIA driver (or load it: modprobe nvidia); on a machine without an NVIDIA GPU, run with --device cpu",
       Action::DrainNode},
      {"device-nodes-missing",
       [](const Symptom& s) {
         return gpu_unavailable(s) && no_device(s) && s.machine().kernel_driver && s.machine().device_nodes == 0 &&
                !s.machine().in_container;
       },
       +[](const Symptom& s) {
         return fmt::format("the NVIDIA driver{} is loaded but its device nodes (nvidiactl, nvidia0, ...) do not exist",
                            driver_named(s.machine()));
       },
       "create them: run nvidia-modprobe -c 0 -u (or nvidia-smi once as root), and check the udev rules that make them "
       "at boot", Action::DrainNode},
      {"uvm-missing",
       [](const Symptom& s) {
         return gpu_unavailable(s) && unknown_error(s) &&
                (s.machine().uvm_loaded == false || (s.machine().device_nodes > 0 && !s.machine().uvm_node));
       },
       uvm_cause,
       "load it: modprobe nvidia-uvm (or nvidia-modprobe -u -c 0, which also makes its device node); in a container, "
       "pass the nvidia-uvm device in (the NVIDIA Container Toolkit does)",
       {uvm_action, {Action::DrainNode, Action::FixEnvironment}}},
      {"fabric-manager-not-running",
       [](const Symptom& s) {
         const auto& f = s.machine().fabric_state;
         return s.says("system not yet initialized") &&
                (f == "not_started" || f == "in_progress" || (s.machine().nvswitch_nodes && f != "completed"));
       },
       "this is an NVSwitch system whose fabric is not ready: the fabric manager (nvidia-fabricmanager) is not running, "
       "or has not finished registering the GPUs",
       "start it (systemctl enable --now nvidia-fabricmanager; its version must equal the driver's), wait until "
       "`nvidia-smi -q` shows the fabric state Completed, then run again", Action::DrainNode},
      {"system-not-ready", [](const Symptom& s) { return s.says("system not yet initialized"); }, system_not_ready_cause,
       "check the NVIDIA services (systemctl status nvidia-fabricmanager nvidia-persistenced) and the driver's log "
       "(dmesg | grep -i nvrm), then run again", Action::DrainNode},
      {"compat-library-mismatch",
       [](const Symptom& s) {
         return s.says("unsupported display driver / cuda driver combination") &&
                (s.machine().libcuda_source == "compat" || s.machine().compat_on_path);
       },
       compat_cause,
       "take the compat folder off LD_LIBRARY_PATH (or out of the image), or install the cuda-compat package made for "
       "this driver branch; a driver new enough for the build needs no compat library", Action::FixEnvironment},
      {"driver-library-mismatch",
       [](const Symptom& s) { return s.says("unsupported display driver / cuda driver combination"); },
       driver_library_cause,
       "reboot after a driver upgrade, or install the user-space libraries of the kernel driver's version; in a "
       "container, use the driver libraries the NVIDIA Container Toolkit mounts rather than copies in the image",
       {node_unless_container, {Action::DrainNode, Action::FixEnvironment}}},
      {"compat-unsupported-device", [](const Symptom& s) { return s.says("forward compatibility was attempted on non supported HW"); },
       "a forward-compatibility libcuda is loaded, but this GPU does not support forward compatibility (it is for "
       "data-center GPUs)",
       "take the compat library off LD_LIBRARY_PATH, and update the NVIDIA driver to one that supports the build's CUDA",
       Action::FixEnvironment},
      {"compute-prohibited",
       [](const Symptom& s) {
         return s.machine().compute_mode == "prohibited" && (busy(s) || no_device(s) || s.says("operation not permitted"));
       },
       "the GPU is in compute-prohibited mode: no process may create a CUDA context on it",
       "set it to the default compute mode (nvidia-smi -i N -c DEFAULT, as root), or use another GPU",
       Action::FixEnvironment},
      {"exclusive-process-busy",
       [](const Symptom& s) {
         const auto& mode = s.machine().compute_mode;
         return busy(s) && (mode == "exclusive_process" || mode == "exclusive_thread");
       },
       "the GPU is in exclusive-process compute mode and another process holds it: only one process may use it at a time",
       "wait for the other process (nvidia-smi lists it) or use another GPU; an administrator can set the default mode "
       "(nvidia-smi -c DEFAULT)", Action::Rerun},
      {"allocator-config-invalid",
       [](const Symptom& s) {
         return !s.machine().alloc_conf_set.empty() &&
                s.says_any({"allocator config", "Expected 'True' or 'False' at index", "Unknown allocator backend",
                            "garbage_collect_threshold is invalid", "max_split_size_mb too small", "For roundups"});
       },
       alloc_conf_cause, alloc_conf_action, Action::FixEnvironment},
      {"visible-devices-duplicate",
       [](const Symptom& s) { return gpu_unavailable(s) && s.machine().visible_devices == "duplicate"; },
       "CUDA_VISIBLE_DEVICES names one device twice: CUDA then shows no device at all",
       "list each GPU once (e.g. 0,1), or unset CUDA_VISIBLE_DEVICES", Action::FixEnvironment},
      {"visible-devices-malformed",
       [](const Symptom& s) { return gpu_unavailable(s) && s.machine().visible_devices == "malformed"; },
       "CUDA_VISIBLE_DEVICES has an entry that is neither a device index nor a GPU-/MIG- UUID: CUDA shows no device from "
       "that entry on",
       "set it to indices or UUIDs that nvidia-smi -L lists, separated by commas, or unset it", Action::FixEnvironment},
      {"visible-devices-empty",
       [](const Symptom& s) { return gpu_unavailable(s) && s.machine().visible_devices == "empty"; },
       "CUDA_VISIBLE_DEVICES is set but empty: it hides every GPU",
       "unset CUDA_VISIBLE_DEVICES, or set it to the index or UUID of a GPU that nvidia-smi lists",
       Action::FixEnvironment},
      {"visible-devices-no-match",
       [](const Symptom& s) { return gpu_unavailable(s) && no_device(s) && s.machine().visible_devices == "ok"; },
       "CUDA_VISIBLE_DEVICES names no device this process can use (an index past the machine's GPUs, or another "
       "machine's UUID)",
       "unset CUDA_VISIBLE_DEVICES, or set it to the index or UUID of a GPU that nvidia-smi lists",
       Action::FixEnvironment},
      {"mig-without-instance", [](const Symptom& s) { return gpu_unavailable(s) && no_device(s) && s.machine().mig_enabled; },
       "MIG is enabled on the GPU, and no MIG instance is visible to this process: a MIG GPU runs CUDA only in its "
       "instances",
       "create GPU and compute instances (nvidia-smi mig -cgi ... -C) and select one (CUDA_VISIBLE_DEVICES=MIG-<uuid>), "
       "or disable MIG (nvidia-smi -mig 0)", Action::FixEnvironment},
      {"not-permitted", [](const Symptom& s) { return gpu_unavailable(s) && s.says("operation not permitted"); },
       not_permitted_cause,
       "run the same check outside the container or sandbox, or with the runtime's GPU support (the NVIDIA Container "
       "Toolkit: --gpus); check the compute mode with nvidia-smi -q", Action::FixEnvironment},
      {"rocm-gfx-missing", [](const Symptom& s) { return s.says("HIP error: invalid device function"); },
       "the device's gfx target is not among those this ROCm build was compiled for",
       "install a ROCm build of LibTorch that includes this GPU's gfx target", Action::FixInstall},
  };
  return rows;
}

// SUITE_INCOMPLETE's message ends with the command that builds what is missing (kBuildItWith): that command
// is the next action, when it names the build folder as seen from the checkout (never a path of the machine).
std::string build_command_in(const std::string& message) {
  const size_t at = message.rfind(kBuildItWith);
  if (at == std::string::npos) return "";
  const std::string command = message.substr(at + kBuildItWith.size());
  return command.find(" /") == std::string::npos && command.find('\n') == std::string::npos ? command : "";
}

// The suite's own loading, the layers past L3, and the fallbacks that need the stage.
const std::vector<Row>& layer_rows() {
  static const std::vector<Row> rows = {
      {"suite-incomplete",
       [](const Symptom& s) { return s.code == Code::SuiteIncomplete && !build_command_in(s.message).empty(); },
       "a part of this build of the suite is not built or is from another build: nothing was checked on the machine",
       +[](const Symptom& s) { return build_command_in(s.message); }, Action::FixInstall},
      {"undefined-symbol", [](const Symptom& s) { return s.says("undefined symbol"); },
       "a C++ ABI or version mismatch between this suite and the LibTorch it loaded (a symbol is missing)",
       "rebuild the suite against this LibTorch (scripts/build), or load the LibTorch it was built with",
       Action::FixInstall},
      // Before the generic out-of-memory rows: the other GPUs ran their shards, so it is this GPU.
      {"shard-gpu-out-of-memory",
       [](const Symptom& s) {
         return s.code == Code::OutOfMemory && s.facts.stage == "L4.across_devices" && s.says("the shard on");
       },
       "one GPU could not hold its shard though GPU 0 held the whole workload: that GPU's memory is taken by another "
       "process, or it is a smaller card",
       "check the named GPU alone (--device-index N --layers app) and its other processes (nvidia-smi)", Action::Rerun},
      {"shard-gpu-failed", [](const Symptom& s) { return s.facts.stage == "L4.across_devices" && s.says("the shard on"); },
       "one GPU failed its shard of a workload GPU 0 ran whole: that GPU, or its process, is at fault",
       "check the named GPU alone (--device-index N --layers app) and its other processes (nvidia-smi)",
       Action::Triage},
      {"collective-rendezvous-unreachable",
       [](const Symptom& s) { return s.code == Code::CollectiveUnreachable && s.says("rendezvous store did not answer"); },
       "rank 0 is not running, or its address or port cannot be reached from this node (a wrong MASTER_ADDR, a firewall, "
       "or the port taken on rank 0's node)",
       "check that rank 0 started and what it reported; check MASTER_ADDR and MASTER_PORT, and that the port is open "
       "between the nodes (nc -z HOST PORT)", Action::FixEnvironment},
      {"collective-ranks-missing", [](const Symptom& s) { return s.code == Code::CollectiveUnreachable && s.says("did not join"); },
       "the named ranks never started, started too late, or cannot reach rank 0 (a node that is down or still pulling "
       "its image, a job step that launched fewer tasks than the world size)",
       "look at the named ranks' nodes and their own reports; check that the job starts one task per rank and that "
       "--timeout leaves time for the slowest node to start", Action::Rerun},
      {"collective-port-taken", [](const Symptom& s) { return s.code == Code::CollectiveUnreachable && s.says("could not serve"); },
       "rank 0 could not listen on the rendezvous port (taken by another job, or not allowed)",
       "choose another MASTER_PORT (or --rendezvous HOST:PORT) that is free on rank 0's node", Action::FixCommand},
      {"collective-shm-small",
       [](const Symptom& s) {
         return collective_transport(s) && s.machine().shm_size && *s.machine().shm_size < kSmallShmBytes;
       },
       shm_cause,
       "give the shared-memory folder room (docker run --shm-size=8g or --ipc=host; Kubernetes: an emptyDir with medium "
       "Memory mounted there), or set NCCL_SHM_DISABLE=1 to use another transport", Action::FixEnvironment},
      {"collective-transport", collective_transport,
       "the ranks met but the transport between them failed: a rank died, or the chosen network interface does not "
       "connect the nodes (a wrong interface, a firewall between them, InfiniBand/RDMA down on a node)",
       "read which ranks never reached the step; choose the interface (GLOO_SOCKET_IFNAME, NCCL_SOCKET_IFNAME), check "
       "`ibstat`/`ibv_devinfo` on each node, and run again with NCCL_DEBUG=INFO", Action::FixEnvironment},
      {"memory-oom-phase", [](const Symptom& s) { return s.code == Code::OutOfMemory && s.facts.oom.has_value(); },
       l5_oom_cause, l5_oom_action, Action::FixModel},  // L5 knows the phase: its cause and action are specific
      {"oom-held-by-others",
       [](const Symptom& s) {
         const auto n = oom_numbers(s.message);
         return s.code == Code::OutOfMemory && n && n->others_hold();
       },
       oom_others_cause, "free the GPU (nvidia-smi lists the processes holding it) or choose another device",
       Action::Rerun},
      {"oom-request-too-large",
       [](const Symptom& s) { return s.code == Code::OutOfMemory && oom_numbers(s.message).has_value(); },
       oom_too_large_cause, "reduce the batch or model size, or use a GPU with more memory", Action::FixModel},
      {"aoti-package-foreign",
       [](const Symptom& s) {
         return s.code == Code::ModelLoadFailed && s.says("wrongly formatted: an AOTInductor package");
       },
       "the package's compiled model does not load here (made by another torch version, or for another platform or CPU)",
       "compile the package again with the torch version of this LibTorch, on a machine like this one",
       Action::FixModel},
      {"model-format-unknown", [](const Symptom& s) { return s.code == Code::ModelLoadFailed && s.says("wrongly formatted"); },
       "the file is neither a TorchScript archive nor an AOTInductor package (a state_dict, a pickled module, an export "
       "of another format, or a truncated file)",
       "export the model with torch.jit.script (or torch.jit.trace) and torch.jit.save, or with "
       "torch._inductor.aoti_compile_and_package, then pass that file", Action::FixModel},
      {"aoti-loader-missing",
       [](const Symptom& s) { return s.code == Code::ModelLoadFailed && s.says("cannot load AOTInductor packages"); },
       "this LibTorch predates the loader of AOTInductor packages",
       "run the suite built against a newer LibTorch (2.11), or export the model with torch.jit.save",
       Action::FixInstall},
      {"aoti-other-device",
       [](const Symptom& s) { return s.code == Code::ModelLoadFailed && s.says("compiled for another device"); },
       "an AOTInductor package runs only on the device type it was compiled for",
       "compile it again on the run's device (model and example inputs there), or run on the device it was compiled "
       "for", Action::FixModel},
      {"output-not-finite", [](const Symptom& s) { return s.code == Code::AppCheckFailed && s.says("rule 'finite'"); },
       "the model produced NaN or infinity on this input",
       "check the input ranges in the spec against what the model expects, and the model's numerics", Action::FixModel},
      // --judge-shared-gpu applied a floor (L6's or L8's) to a measurement others shared (docs/shared-gpus.md): the
      // sharing, not the card or the link.
      {"device-below-floor-shared-gpu",
       [](const Symptom& s) {
         return s.code == Code::PerformanceBelowFloor && s.says("other processes used the GPU during the measurement");
       },
       "other processes computed on the GPU while it was measured, and --judge-shared-gpu applied the floor anyway: the "
       "figure is the shared GPU's, not the card's alone",
       "rerun when no other process computes on the GPU (nvidia-smi lists them), or without --judge-shared-gpu: a shared "
       "measurement is then recorded, not judged",
       Action::Rerun},
      // L8's floor is the job's: every rank measures the same slow link, so no one node is named.
      {"collective-below-floor",
       [](const Symptom& s) { return s.code == Code::PerformanceBelowFloor && s.says("bus bandwidth"); },
       "the job's all-reduce ran below its bus-bandwidth floor twice: one slow link, switch or node slows every rank, so "
       "this rank's figure does not say which",
       "compare the ranks' figures (kernodeck-diagnostic aggregate), then check each node alone (L7 peer bandwidth, "
       "`ibstat`, the NVLink and PCIe state); the node that is slow alone is the one to drain",
       Action::Triage},
      {"device-below-floor", [](const Symptom& s) { return s.code == Code::PerformanceBelowFloor; }, slow_device_cause,
       "look for throttling (`nvidia-smi -q -d PERFORMANCE,CLOCK,POWER`: power cap, thermal, clocks held low) and other "
       "processes on the GPU (`nvidia-smi`), then rerun; a repeat below the floor is a hardware or configuration "
       "question for the machine's owner", Action::DrainNode},
      {"gpu-row-remap-failed", [](const Symptom& s) { return s.code == Code::GpuUnhealthy && s.says("row remapping failed"); },
       "the GPU's memory has a bad row it could not remap: no spare rows are left, the card is failing",
       "drain the node and have the card replaced; a reset does not repair it", Action::ReplaceGpu},
      {"gpu-xid-unusable",
       [](const Symptom& s) {
         return s.code == Code::GpuUnhealthy && s.facts.xid_action && s.says("the kernel log shows");
       },
       xid_cause, xid_next_action, {xid_action, {Action::ResetGpu, Action::DrainNode, Action::ReplaceGpu}}},
      {"gpu-memory-errors", [](const Symptom& s) { return s.code == Code::GpuUnhealthy && s.says("NVML reports"); },
       "the GPU's memory had uncorrectable errors, or a row remapping or a page retirement waits for a reset",
       "reset the GPU (nvidia-smi -r with no process on it, or reboot) or drain the node, then run again; errors that "
       "come back after a reset mean the card must be replaced", Action::ResetGpu},
      {"memory-kept-across-iterations",
       [](const Symptom& s) { return s.code == Code::MemoryCheckFailed && s.says("per iteration"); },
       "tensors are kept alive across iterations: a list of losses or outputs that keeps their autograd graphs, or a "
       "cache that only grows",
       "keep numbers (loss.item()) or detached tensors across iterations, compute evaluation losses under "
       "torch.no_grad(), and bound any cache; then rerun --layers L5", Action::FixModel},
      {"allocator-counters", [](const Symptom& s) { return s.code == Code::MemoryCheckFailed; },
       "the CUDA caching allocator's counters or emptyCache do not match what the workload held",
       "rerun once; if it repeats, keep the result bundle and check PYTORCH_CUDA_ALLOC_CONF and the LibTorch version (an "
       "allocator setting or bug)", Action::Rerun},
      // L2 predicted it and L3 failed: the architecture, whatever the words.
      {"arch-not-compiled",
       [](const Symptom& s) { return s.facts.arch_supported == false && s.facts.stage.rfind("L3.", 0) == 0; }, arch_cause,
       "install a LibTorch built for this GPU's architecture", Action::FixInstall},
  };
  return rows;
}

// The whole catalogue in order: the driver's and the machine's, the application's (before the suite's own
// "undefined symbol": an extension's is not ours), then the layers'.
const std::vector<const std::vector<Row>*>& catalogue() {
  static const std::vector<const std::vector<Row>*> parts = {&driver_rows(), &app_rows(), &layer_rows()};
  return parts;
}

}  // namespace
}  // namespace signature

std::optional<Diagnosis> diagnose(Code code, const std::string& message, const SignatureFacts& facts) {
  const signature::Symptom s{code, message, facts};
  for (const auto* part : signature::catalogue())
    for (const signature::Row& row : *part)
      if (row.matches(s)) return Diagnosis{row.id, row.cause(s), row.action(s), row.kind(s)};
  return std::nullopt;
}

std::vector<std::string> signature_ids() {
  std::vector<std::string> ids;
  for (const auto& [id, _] : signature_actions()) ids.push_back(id);
  return ids;
}

std::vector<std::pair<std::string, std::vector<Action>>> signature_actions() {
  std::vector<std::pair<std::string, std::vector<Action>>> out;
  std::set<std::string> seen;
  for (const auto* part : signature::catalogue())
    for (const signature::Row& row : *part)
      if (seen.insert(row.id).second) out.emplace_back(row.id, row.kind.possible);
  return out;
}

}  // namespace kd
