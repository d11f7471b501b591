#include "signature_facts.h"

#include "contract/report_parts.h"
#include "verdict/xid_catalogue.h"

namespace kd {
namespace {

using nlohmann::json;
using report::read;

// L5's record of an out-of-memory, for the phase's cause and next action.
std::optional<memory::OomEvent> oom_event(const json& report) {
  const json& o = read(report, report::memory_oom);
  memory::OomEvent e;
  e.phase = read(o, report::oom_phase).value_or("");
  if (e.phase.empty()) return std::nullopt;
  e.requested = read(o, report::oom_requested_bytes);
  e.device_numbers = read(o, report::oom_device_total_bytes).has_value();
  e.device_free = read(o, report::oom_device_free_bytes).value_or(0);
  e.device_total = read(o, report::oom_device_total_bytes).value_or(0);
  e.reserved = read(o, report::oom_reserved_bytes).value_or(0);
  e.allocated = read(o, report::oom_allocated_bytes).value_or(0);
  e.fraction = read(o, report::oom_fraction);
  return e;
}

// A fabric state's progress: the least advanced GPU's counts (not_supported only when every GPU says so).
int fabric_rank(const std::string& state) {
  return state == "not_started" ? 0 : state == "in_progress" ? 1 : state == "completed" ? 2 : 3;
}

void add_nvml(const json& nvml, MachineFacts* m) {
  std::optional<std::string> mode, fabric;
  bool modes_agree = true;
  for (const json& g : read(nvml, report::nvml_gpus)) {
    const auto gpu_mode = read(g, report::nvml_gpu_compute_mode);
    modes_agree = modes_agree && gpu_mode && (!mode || *mode == *gpu_mode);
    mode = gpu_mode;
    if (const auto f = read(g, report::nvml_gpu_fabric_state); f && (!fabric || fabric_rank(*f) < fabric_rank(*fabric)))
      fabric = f;
    m->mig_enabled = m->mig_enabled || read(g, report::nvml_gpu_mig_mode) == "enabled";
  }
  if (!m->compute_mode && modes_agree && mode) m->compute_mode = mode;
  m->fabric_state = fabric;
}

MachineFacts machine_facts(const json& report, const std::string& visible_devices) {
  MachineFacts m;
  const json& host = read(report, report::host);
  m.compute_mode = read(read(report, report::device), report::device_compute_mode);
  add_nvml(read(report, report::host_nvml), &m);
  const json& limits = read(host, report::host_limits);
  if (limits.is_object()) {
    m.open_files = read(limits.value("open_files", json()), report::limit_soft);
    m.address_space = read(limits.value("address_space_bytes", json()), report::limit_soft);
  }
  m.in_container = read(read(host, report::host_container), report::container_detected).value_or(false);
  const json& nvidia = read(host, report::host_nvidia);
  m.kernel_driver = read(nvidia, report::nvidia_kernel_driver);
  m.uvm_loaded = read(nvidia, report::nvidia_uvm_loaded);
  m.compat_on_path = read(nvidia, report::nvidia_compat_on_path).value_or(false);
  for (const json& node : read(nvidia, report::nvidia_device_nodes)) {
    const std::string name = read(node, report::device_node_name).value_or("");
    ++m.device_nodes;
    if (!read(node, report::device_node_accessible).value_or(true)) ++m.inaccessible_nodes;
    m.uvm_node = m.uvm_node || name == "nvidia-uvm";
    m.nvswitch_nodes = m.nvswitch_nodes || name.rfind("nvidia-nvswitch", 0) == 0;
  }
  m.libcuda_source = read(read(report, report::host_libcuda), report::libcuda_source).value_or("");
  m.visible_devices = visible_devices;
  for (const json& e : read(host, report::host_environment)) {
    const std::string name = read(e, report::env_name).value_or("");
    if (name == "PYTORCH_CUDA_ALLOC_CONF" || name == "PYTORCH_ALLOC_CONF") m.alloc_conf_set.push_back(name);
  }
  m.shm_size = read(read(host, report::host_shm), report::shm_size_bytes);
  return m;
}

// The driver's version: nvidia-smi's (--host-check), else NVML's, else the kernel module's.
std::string driver_version(const json& report, const MachineFacts& m) {
  const json& host = read(report, report::host);
  if (const json& gpus = read(host, report::host_gpus); !gpus.empty())
    if (auto v = read(gpus[0], report::host_gpu_driver_version)) return *v;
  if (auto v = read(read(report, report::host_nvml), report::nvml_driver_version)) return *v;
  return m.kernel_driver.value_or("");
}

}  // namespace

SignatureFacts signature_facts(const json& report, const std::string& visible_devices) {
  SignatureFacts c;
  c.cuda_compiled = read(report, report::pytorch_cuda_compiled).value_or("");
  c.device_capability = read(read(report, report::device), report::device_capability).value_or("");
  c.arch_list = read(report, report::pytorch_arch_list).value_or(std::vector<std::string>{});
  c.arch_supported = read(report, report::execution_arch_supported);
  c.oom = oom_event(report);
  c.stage = read(report, report::stage).value_or("");
  c.machine = machine_facts(report, visible_devices);
  // The kernel's evidence for the run's GPU (its PCI address): the events that leave it unusable, and their action.
  if (const auto pci = read(read(report, report::device), report::device_pci_bus_id)) {
    const xid::Judgement x = xid::judge_gpu(read(report, report::host_kernel_log), *pci);
    c.unusable_xids = x.problems;
    c.xid_action = x.action;
  }
  c.driver_version = driver_version(report, c.machine);
  return c;
}

}  // namespace kd
