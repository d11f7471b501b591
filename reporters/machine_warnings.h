// Warnings before failures (docs/machine.md): what the machine around the GPU says will make work fail or crawl
// later, though this run may pass — a small /dev/shm, low limits, a one-CPU quota, a cgroup about to be full, a
// debugging variable left on, a variable CUDA or LibTorch refuses. From the report's host facts.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kd {

// gpu_run: the run uses a GPU (the CUDA-only warnings say nothing about a CPU run).
std::vector<std::string> machine_warnings(const nlohmann::json& host, bool gpu_run);

}  // namespace kd
