// The machine around the GPU, in the report's host (docs/machine.md): this process's limits, the container and its
// cgroup, /dev/shm, the NVIDIA driver's side without nvidia-smi (its kernel module's version, nvidia-uvm, the
// /dev/nvidia* nodes, a forward-compatibility libcuda on the library path), InfiniBand devices and the environment
// variables that change CUDA's and LibTorch's behaviour. Read in the supervisor with no other process and no GPU
// call (about 0.2 ms: docs/machine.md); never a path, a user or a variable's value beyond a known flag.
#pragma once
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "temp_folder.h"

namespace kd::machine {

// Fills host's always-present parts (limits, container, shm, temp, nvidia, infiniband_devices, environment).
void add_host_facts(nlohmann::json* host, const MadeFolder* temp);

// /proc/driver/nvidia/version's kernel module version ("580.95.05"), from its text.
std::optional<std::string> kernel_driver_version(const std::string& text);
// Whether /proc/modules lists `module` (e.g. "nvidia_uvm").
bool module_listed(const std::string& proc_modules, const std::string& module);
// The container this process runs in, from the marks runtimes leave ("docker", "podman", "kubernetes", "lxc",
// "other"), or "" when there is none. cgroup_text: /proc/self/cgroup.
std::string container_kind(bool dockerenv, bool containerenv, const char* container_env, const char* kubernetes_env,
                           const std::string& cgroup_text);

}  // namespace kd::machine
