#include "machine_text.h"

#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd {
namespace {

using nlohmann::json;
using report::read;

std::string bytes_text(std::optional<uint64_t> b) {
  if (!b) return "unlimited";
  if (*b >= (1ULL << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(*b) / (1ULL << 30));
  if (*b >= (1ULL << 20)) return fmt::format("{} MiB", *b >> 20);
  return fmt::format("{} KiB", *b >> 10);
}

std::string count_text(std::optional<uint64_t> n) { return n ? std::to_string(*n) : "unlimited"; }

std::string limits_line(const json& limits) {
  std::vector<std::string> parts;
  for (const auto& [key, label, bytes] : {std::tuple{"open_files", "open files", false},
                                          std::tuple{"address_space_bytes", "address space", true},
                                          std::tuple{"locked_memory_bytes", "locked memory", true},
                                          std::tuple{"processes", "processes", false},
                                          std::tuple{"stack_bytes", "stack", true}}) {
    const json& l = limits.is_object() ? limits.value(key, json()) : json();
    const auto soft = read(l, report::limit_soft), hard = read(l, report::limit_hard);
    const auto text = bytes ? bytes_text : count_text;
    parts.push_back(fmt::format("{} {}/{}", label, text(soft), text(hard)));
  }
  return fmt::format("Host limits (soft/hard): {}\n", fmt::join(parts, ", "));
}

std::string container_line(const json& c) {
  const bool in = read(c, report::container_detected).value_or(false);
  const auto quota = read(c, report::cgroup_cpu_quota_cores);
  const auto pids = read(c, report::cgroup_pids_limit);
  return fmt::format("Host container: {}, cgroup {}, memory {} used of {}, CPU quota {}, {} CPUs usable, pids {}\n",
                     in ? read(c, report::container_kind).value_or("other") : "none",
                     read(c, report::cgroup_version).value_or("none"), bytes_text(read(c, report::cgroup_memory_used_bytes)),
                     bytes_text(read(c, report::cgroup_memory_limit_bytes)),
                     quota ? fmt::format("{:g} cores", *quota) : "none", read(c, report::process_cpus).value_or(0),
                     pids ? std::to_string(*pids) : "unlimited");
}

std::string nvidia_line(const json& n, const json& libcuda) {
  std::vector<std::string> nodes;
  for (const json& node : read(n, report::nvidia_device_nodes))
    nodes.push_back(read(node, report::device_node_name).value_or("?") +
                    (read(node, report::device_node_accessible).value_or(false) ? "" : " (no access)"));
  const auto uvm = read(n, report::nvidia_uvm_loaded);
  std::string out = fmt::format("Host NVIDIA: kernel driver {}, nvidia-uvm {}, nodes {}, compat libcuda on "
                                "LD_LIBRARY_PATH: {}",
                                read(n, report::nvidia_kernel_driver).value_or("not loaded"),
                                !uvm ? "?" : *uvm ? "loaded" : "not loaded",
                                nodes.empty() ? std::string("none") : fmt::format("{}", fmt::join(nodes, " ")),
                                read(n, report::nvidia_compat_on_path).value_or(false) ? "yes" : "no");
  if (libcuda.is_object())
    out += read(libcuda, report::libcuda_loaded).value_or(false)
               ? fmt::format(", libcuda loaded: {} {} (CUDA {})", read(libcuda, report::libcuda_source).value_or("?"),
                             read(libcuda, report::libcuda_version).value_or("?"),
                             read(libcuda, report::libcuda_cuda_version).value_or("?"))
               : ", libcuda not loaded";
  return out + "\n";
}

std::string environment_line(const json& env) {
  std::vector<std::string> parts;
  for (const json& e : env) {
    const std::string name = read(e, report::env_name).value_or("?");
    const auto value = read(e, report::env_value);
    const auto valid = read(e, report::env_valid);
    parts.push_back(value ? name + "=" + *value : valid == false ? name + " (not valid)" : name);
  }
  return parts.empty() ? "Host environment: none of the variables that change CUDA or LibTorch is set\n"
                       : fmt::format("Host environment: {}\n", fmt::join(parts, ", "));
}

// "Host kernel log: kmsg, 4123 records since boot; the driver loaded 58 min ago; Xid 79 (...) ..." or why not.
std::string kernel_log_line(const json& k) {
  if (!k.is_object()) return "";
  if (!read(k, report::kernel_log_readable).value_or(false))
    return fmt::format("Host kernel log: not readable: {} (no Xid evidence)\n", read(k, report::kernel_log_why_not).value_or("?"));
  const auto loaded = read(k, report::kernel_log_driver_loaded_s_ago);
  std::string out = fmt::format("Host kernel log: {}, {} records{}{}; {}", read(k, report::kernel_log_source).value_or("?"),
                                read(k, report::kernel_log_records).value_or(0),
                                read(k, report::kernel_log_from_boot).value_or(false) ? " since boot" : " (the oldest kept)",
                                read(k, report::kernel_log_truncated).value_or(false) ? ", stopped at its bounds" : "",
                                loaded ? fmt::format("the NVIDIA driver loaded {:.0f} s ago", *loaded)
                                       : "no NVIDIA driver load in it");
  std::vector<std::string> events;
  for (const json& e : read(k, report::kernel_log_events)) {
    const bool sxid = read(e, report::xid_kind) == "sxid";
    events.push_back(fmt::format("{} {} {} ({}) x{}, the last {:.0f} s ago{}{}", read(e, report::xid_pci_bus_id).value_or("?"),
                                 sxid ? "SXid" : "Xid", read(e, report::xid_code).value_or(0),
                                 read(e, report::xid_meaning).value_or("?"), read(e, report::xid_count).value_or(0),
                                 read(e, report::xid_last_s_ago).value_or(0),
                                 read(e, report::xid_after_driver_load).value_or(false) ? "" : ", before the driver's load",
                                 read(e, report::xid_unusable).value_or(false) ? " [unusable until reset]" : ""));
  }
  return out + (events.empty() ? "; no Xid or SXid event\n" : fmt::format("; {}\n", fmt::join(events, "; ")));
}

}  // namespace

std::string render_machine(const json& r) {
  const json& host = read(r, report::host);
  if (!host.is_object() || !read(host, report::host_limits).is_object()) return "";
  const json& shm = read(host, report::host_shm);
  const json& temp = read(host, report::host_temp);
  return limits_line(read(host, report::host_limits)) + container_line(read(host, report::host_container)) +
         fmt::format("Host /dev/shm: {} ({} free); temporary folder: {}\n", bytes_text(read(shm, report::shm_size_bytes)),
                     bytes_text(read(shm, report::shm_free_bytes)), read(temp, report::temp_folder).value_or("?")) +
         nvidia_line(read(host, report::host_nvidia), read(r, report::host_libcuda)) +
         environment_line(read(host, report::host_environment)) + kernel_log_line(read(r, report::host_kernel_log));
}

}  // namespace kd
