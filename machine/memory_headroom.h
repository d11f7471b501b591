// What a process here may still allocate on the host: the kernel's MemAvailable and, under a cgroup memory limit
// (a container's, a batch job's), no more than the limit minus what the cgroup already uses. L5's CPU sweep keeps
// under it (the limit kills a process that passes it; MemAvailable is the whole machine's). Torch-free: the probe
// compiles it too.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace kd::machine {

std::optional<uint64_t> mem_available(const std::string& meminfo);  // "MemAvailable:  123 kB" in bytes
std::optional<uint64_t> available_memory_bytes();

}  // namespace kd::machine
