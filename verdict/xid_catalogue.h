// The NVIDIA driver's Xid and NVSwitch SXid events as the kernel log names them (docs/health.md "The kernel's
// evidence"): what a code means, whether it leaves the GPU unusable until it is reset, and the action
// (verdict/actions.h), from NVIDIA's published Xid catalogue. And the judgement of one GPU's events, read from the
// report's host.kernel_log (machine/kernel_log.h), for L2's health test and the signatures. Pure, unit-tested.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "actions.h"

namespace kd::xid {

struct XidInfo {
  int code;
  std::string_view meaning;
  bool unusable;                 // the GPU cannot be used until it is reset (or the node rebooted)
  std::optional<Action> action;  // none: informational, nothing to do about the GPU
};

// The catalogue's row for a code; a code it does not list gets "not in this suite's table", a warning.
XidInfo find_xid(int code);
const std::vector<XidInfo>& catalogue();

// Xid 154 says the recovery action the GPU now waits for ("... changed from 0x0 (None) to 0x1 (GPU Reset
// Required)"): its value, by NVML's numbering (nvmlDeviceGpuRecoveryAction_t).
enum class Recovery { None = 0, GpuReset = 1, NodeReboot = 2, DrainP2p = 3, DrainAndReset = 4 };
std::optional<Recovery> recovery_from_line(std::string_view text);  // the value after " to 0x"; nothing if absent
std::string_view recovery_name(Recovery r);                         // "gpu_reset", ...
std::optional<Recovery> recovery_from_name(std::string_view name);
// What a pending recovery action means for the GPU: unusable (a reset or a reboot waits) and its action.
XidInfo recovery_info(Recovery r);

// One GPU's events judged (an item of host.kernel_log.events has kind, pci_bus_id, code, count, last_s_ago,
// after_driver_load, unusable, recovery_action, severity).
struct Judgement {
  std::vector<std::string> problems;  // unusable until reset, newer than the driver's load: GPU_UNHEALTHY (18)
  std::vector<std::string> warnings;  // the rest: informs, never decides
  std::optional<Action> action;       // the most severe of the problems' actions
};

// The events of the GPU at pci_bus_id (NVML's form, "00000000:3B:00.0") in host.kernel_log, and the NVSwitch's
// fatal SXids (a node's switches serve every GPU). Nothing to judge when the log was not readable.
Judgement judge_gpu(const nlohmann::json& kernel_log, const std::string& pci_bus_id);

}  // namespace kd::xid
