#include "host_facts.h"

#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "cgroup.h"
#include "contract/report_parts.h"
#include "environment.h"
#include "read_text.h"

namespace kd::machine {
namespace {

using nlohmann::json;

bool exists(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0;
}

json limits() {
  json out = json::object();
  for (const auto& [key, resource] : {std::pair{"open_files", RLIMIT_NOFILE}, std::pair{"address_space_bytes", RLIMIT_AS},
                                      std::pair{"locked_memory_bytes", RLIMIT_MEMLOCK}, std::pair{"processes", RLIMIT_NPROC},
                                      std::pair{"stack_bytes", RLIMIT_STACK}}) {
    rlimit r{};
    json limit;
    const bool known = ::getrlimit(resource, &r) == 0;
    const auto value = [&](rlim_t v) { return known && v != RLIM_INFINITY ? std::optional<uint64_t>(v) : std::nullopt; };
    report::put(&limit, report::limit_soft, value(r.rlim_cur));
    report::put(&limit, report::limit_hard, value(r.rlim_max));
    out[key] = std::move(limit);
  }
  return out;
}

json container() {
  json out;
  const std::string kind = container_kind(exists("/.dockerenv"), exists("/run/.containerenv"), std::getenv("container"),
                                          std::getenv("KUBERNETES_SERVICE_HOST"), read_text("/proc/self/cgroup").value_or(""));
  report::put(&out, report::container_detected, !kind.empty());
  report::put(&out, report::container_kind, report::unless_empty(kind));
  const Cgroup c = read_own_cgroup();
  report::put(&out, report::cgroup_version, report::unless_empty(c.version));
  report::put(&out, report::cgroup_memory_limit_bytes, c.memory_limit);
  report::put(&out, report::cgroup_memory_used_bytes, c.memory_used);
  report::put(&out, report::cgroup_cpu_quota_cores, c.cpu_quota_cores);
  report::put(&out, report::cgroup_pids_limit, c.pids_limit);
  cpu_set_t set;
  CPU_ZERO(&set);
  const int64_t cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : ::sysconf(_SC_NPROCESSORS_ONLN);
  report::put(&out, report::process_cpus, cpus);
  return out;
}

json shm() {
  json out;
  struct statvfs s {};
  const bool known = ::statvfs("/dev/shm", &s) == 0;
  const auto bytes = [&](uint64_t blocks) { return known ? std::optional<uint64_t>(blocks * s.f_frsize) : std::nullopt; };
  report::put(&out, report::shm_size_bytes, bytes(s.f_blocks));
  report::put(&out, report::shm_free_bytes, bytes(s.f_bavail));
  return out;
}

// The /dev/nvidia* nodes (nvidiactl, nvidia0, nvidia-uvm, ...) and whether this user may read and write each.
json device_nodes() {
  std::vector<std::string> names;
  if (DIR* d = ::opendir("/dev")) {
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind("nvidia", 0) == 0 && e->d_type != DT_DIR && names.size() < 64) names.push_back(name);
    }
    ::closedir(d);
  }
  std::sort(names.begin(), names.end());
  json out = json::array();
  for (const std::string& name : names) {
    json node;
    report::put(&node, report::device_node_name, name);
    report::put(&node, report::device_node_accessible, ::access(("/dev/" + name).c_str(), R_OK | W_OK) == 0);
    out.push_back(std::move(node));
  }
  return out;
}

// A forward-compatibility libcuda (NVIDIA's cuda-compat package: .../compat/libcuda.so.1) in a folder of
// LD_LIBRARY_PATH, which the loader takes before the driver's own.
bool compat_libcuda_on_path() {
  const char* path = std::getenv("LD_LIBRARY_PATH");
  std::istringstream in(path ? path : "");
  for (std::string dir; std::getline(in, dir, ':');) {
    if (dir.empty() || !exists((dir + "/libcuda.so.1").c_str())) continue;
    std::istringstream parts(dir);
    for (std::string part; std::getline(parts, part, '/');)
      if (part == "compat") return true;
  }
  return false;
}

json nvidia() {
  json out;
  const std::optional<std::string> version = read_text("/proc/driver/nvidia/version", 4096);
  report::put(&out, report::nvidia_kernel_driver, version ? kernel_driver_version(*version) : std::nullopt);
  // /proc/modules lists a loaded module; /sys/module has one built into the kernel too.
  const std::optional<std::string> modules = read_text("/proc/modules");
  const bool in_sys = exists("/sys/module/nvidia_uvm");
  report::put(&out, report::nvidia_uvm_loaded,
              modules ? std::optional<bool>(in_sys || module_listed(*modules, "nvidia_uvm"))
                      : in_sys ? std::optional<bool>(true) : std::nullopt);
  report::put(&out, report::nvidia_device_nodes, device_nodes());
  report::put(&out, report::nvidia_compat_on_path, compat_libcuda_on_path());
  return out;
}

int64_t infiniband_devices() {
  int64_t n = 0;
  if (DIR* d = ::opendir("/sys/class/infiniband")) {
    while (const dirent* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace

std::optional<std::string> kernel_driver_version(const std::string& text) {
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.95.05  Tue ..." (or "... Open Kernel Module for x86_64  580...")
  const std::string first = text.substr(0, text.find('\n'));
  const size_t at = first.find("Kernel Module");
  if (at == std::string::npos) return std::nullopt;
  std::istringstream in(first.substr(at));
  for (std::string word; in >> word;)
    if (std::isdigit(static_cast<unsigned char>(word[0])) && word.find('.') != std::string::npos &&
        word.find_first_not_of("0123456789.") == std::string::npos)
      return word;
  return std::nullopt;
}

bool module_listed(const std::string& proc_modules, const std::string& module) {
  std::istringstream in(proc_modules);
  for (std::string line; std::getline(in, line);)
    if (line.compare(0, module.size() + 1, module + " ") == 0) return true;
  return false;
}

std::string container_kind(bool dockerenv, bool containerenv, const char* container_env, const char* kubernetes_env,
                           const std::string& cgroup_text) {
  if (kubernetes_env && *kubernetes_env) return "kubernetes";
  if (cgroup_text.find("kubepods") != std::string::npos) return "kubernetes";
  if (containerenv || cgroup_text.find("libpod") != std::string::npos) return "podman";
  if (dockerenv || cgroup_text.find("/docker") != std::string::npos) return "docker";
  if (container_env && *container_env) {
    const std::string c = container_env;
    return c == "podman" || c == "docker" || c == "lxc" ? c : "other";
  }
  if (cgroup_text.find("/lxc") != std::string::npos) return "lxc";
  return "";
}

void add_host_facts(nlohmann::json* host, const MadeFolder* temp) {
  if (!host->is_object()) *host = json::object();
  report::put(host, report::host_limits, limits());
  report::put(host, report::host_container, container());
  report::put(host, report::host_shm, shm());
  json t;
  report::put(&t, report::temp_folder, temp ? temp->source : std::string("none"));
  report::put(&t, report::temp_skipped, temp ? temp->skipped : std::vector<std::string>{});
  report::put(host, report::host_temp, t);
  report::put(host, report::host_nvidia, nvidia());
  report::put(host, report::host_infiniband_devices, infiniband_devices());
  report::put(host, report::host_environment, environment_facts());
}

}  // namespace kd::machine
