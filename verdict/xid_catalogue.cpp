#include "xid_catalogue.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "json_read.h"

namespace kd::xid {
namespace {

using nlohmann::json;

// NVIDIA's Xid catalogue for Ampere and newer GPUs, "Resolution Bucket (Immediate Action)":
//   https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html
// (older GPUs: https://docs.nvidia.com/deploy/xid-errors/index.html). Its buckets in our words: RESTART_APP -> rerun
// (the application restarts; the GPU is fine), RESET_GPU -> reset_gpu and unusable until then, RESTART_BM (restart the
// bare-metal node) -> drain_node, IGNORE -> no action. Codes the suite does not list are warnings that name the code.
const std::vector<XidInfo> kCatalogue = {
    {8, "GPU stopped processing (a channel timed out)", false, Action::Rerun},
    {13, "graphics engine exception (most often the application's: an illegal address or instruction)", false,
     Action::Rerun},
    {31, "GPU memory page fault (most often the application's illegal access)", false, Action::Rerun},
    {43, "GPU stopped processing (a channel reset after another fault)", false, std::nullopt},
    {45, "preemptive cleanup after an earlier fault", false, std::nullopt},
    {46, "GPU stopped processing", true, Action::ResetGpu},
    {48, "double-bit ECC error (uncorrectable memory error)", true, Action::ResetGpu},
    {62, "internal micro-controller halt", true, Action::ResetGpu},
    {63, "ECC page retirement or row remapping recorded (it takes effect at the GPU's next reset)", false,
     std::nullopt},
    // The catalogue resets first; a remapping that could not be recorded means the memory has no spare row left
    // (NVML's row_remap_failed, docs/health.md): the card is replaced.
    {64, "ECC page retirement or row remapping failure", true, Action::ReplaceGpu},
    {69, "graphics engine class error", false, Action::Rerun},
    {74, "NVLink error", false, Action::ResetGpu},
    {79, "GPU has fallen off the bus", true, Action::DrainNode},
    {92, "high single-bit ECC error rate", false, std::nullopt},
    {94, "contained ECC error (the application that met it was stopped; the GPU goes on)", false, Action::Rerun},
    {95, "uncontained ECC error", true, Action::ResetGpu},
    {109, "context switch timeout", true, Action::ResetGpu},
    {110, "security fault", true, Action::ResetGpu},
    {119, "GSP RPC timeout (the GPU's system processor did not answer)", true, Action::ResetGpu},
    {120, "GSP error (the GPU's system processor failed)", true, Action::ResetGpu},
    {136, "link training failed", true, Action::ResetGpu},
    {140, "ECC unrecovered error", true, Action::ResetGpu},
    {143, "GPU initialization error", true, Action::ResetGpu},
    {154, "GPU recovery action changed", false, std::nullopt},  // judged by the action it names: recovery_info()
    {155, "NVLink software-defined error", false, Action::ResetGpu},
    {156, "resource retirement event", false, std::nullopt},
    {158, "GPU fatal timeout", true, Action::ResetGpu},
};

std::string ago(double s) { return s < 120 ? fmt::format("{:.0f} s ago", s) : fmt::format("{:.0f} min ago", s / 60); }

// "Xid 79 (GPU has fallen off the bus), 2 lines, the last 3 min ago"
std::string described(const json& e, const XidInfo& info) {
  const int64_t n = json_read::value_of<int64_t>(e, "count").value_or(0);
  const auto last = json_read::value_of<double>(e, "last_s_ago");
  return fmt::format("{} {} ({}), {} line{}{}", json_read::value_of<std::string>(e, "kind") == "sxid" ? "SXid" : "Xid",
                     json_read::value_of<int64_t>(e, "code").value_or(0), info.meaning, n, n == 1 ? "" : "s",
                     last ? ", the last " + ago(*last) : "");
}

}  // namespace

const std::vector<XidInfo>& catalogue() { return kCatalogue; }

XidInfo find_xid(int code) {
  for (const XidInfo& i : kCatalogue)
    if (i.code == code) return i;
  return {code, "not in this suite's table: see NVIDIA's Xid catalogue", false, std::nullopt};
}

std::optional<Recovery> recovery_from_line(std::string_view text) {
  const size_t at = text.find(" to 0x");
  if (at == std::string_view::npos) return std::nullopt;
  const std::string digits(text.substr(at + 6, 8));
  char* end = nullptr;
  const long v = std::strtol(digits.c_str(), &end, 16);
  if (end == digits.c_str() || v < 0 || v > 4) return std::nullopt;
  return static_cast<Recovery>(v);
}

std::string_view recovery_name(Recovery r) {
  switch (r) {
    case Recovery::None: return "none";
    case Recovery::GpuReset: return "gpu_reset";
    case Recovery::NodeReboot: return "node_reboot";
    case Recovery::DrainP2p: return "drain_p2p";
    default: return "drain_and_reset";
  }
}

std::optional<Recovery> recovery_from_name(std::string_view name) {
  for (int v = 0; v <= 4; ++v)
    if (recovery_name(static_cast<Recovery>(v)) == name) return static_cast<Recovery>(v);
  return std::nullopt;
}

XidInfo recovery_info(Recovery r) {
  switch (r) {
    case Recovery::None: return {154, "GPU recovery action changed to none (recovered)", false, std::nullopt};
    case Recovery::GpuReset: return {154, "GPU recovery action: a GPU reset is required", true, Action::ResetGpu};
    case Recovery::NodeReboot: return {154, "GPU recovery action: a node reboot is required", true, Action::DrainNode};
    case Recovery::DrainP2p:
      return {154, "GPU recovery action: peer-to-peer traffic must be drained", false, Action::ResetGpu};
    default: return {154, "GPU recovery action: drain, then reset the GPU", true, Action::ResetGpu};
  }
}

Judgement judge_gpu(const json& kernel_log, const std::string& pci_bus_id) {
  Judgement j;
  if (!kernel_log.is_object() || json_read::value_of<bool>(kernel_log, "readable") != true) return j;
  const json events = kernel_log.value("events", json::array());
  if (!events.is_array()) return j;
  for (const json& e : events) {
    if (!e.is_object()) continue;
    const std::string kind = json_read::value_of<std::string>(e, "kind").value_or("");
    const bool after_load = json_read::value_of<bool>(e, "after_driver_load").value_or(false);
    const int code = static_cast<int>(json_read::value_of<int64_t>(e, "code").value_or(0));
    if (kind == "sxid") {  // the node's NVSwitches serve every GPU: a fatal one since the driver's load is named
      if (json_read::value_of<std::string>(e, "severity") == "fatal" && after_load)
        j.warnings.push_back(fmt::format("the kernel log shows NVSwitch {} {}: the NVLink fabric may have lost links",
                                         json_read::value_of<std::string>(e, "pci_bus_id").value_or("?"),
                                         described(e, {code, "fatal", false, std::nullopt})));
      continue;
    }
    if (kind != "xid" || json_read::value_of<std::string>(e, "pci_bus_id") != pci_bus_id) continue;
    XidInfo info = find_xid(code);
    if (const auto r = json_read::value_of<std::string>(e, "recovery_action"); code == 154 && r && recovery_from_name(*r))
      info = recovery_info(*recovery_from_name(*r));
    const std::string what = described(e, info);
    if (info.unusable && after_load) {
      j.problems.push_back(what);
      j.action = j.action ? more_severe(*j.action, *info.action) : *info.action;
    } else {
      j.warnings.push_back(fmt::format("the kernel log shows {}{}", what,
                                       info.unusable ? ", before the driver's last load (not since)" : ""));
    }
  }
  return j;
}

}  // namespace kd::xid
