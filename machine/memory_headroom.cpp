#include "memory_headroom.h"

#include <sstream>

#include "cgroup.h"
#include "read_text.h"

namespace kd::machine {

std::optional<uint64_t> mem_available(const std::string& meminfo) {
  std::istringstream in(meminfo);
  std::string key, unit;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    std::getline(in, unit);  // the rest of the line ("kB", or nothing)
  }
  return std::nullopt;
}

std::optional<uint64_t> available_memory_bytes() {
  std::optional<uint64_t> available = mem_available(read_text("/proc/meminfo").value_or(""));
  const Cgroup c = read_own_cgroup();
  if (c.memory_limit) {
    const uint64_t used = c.memory_used.value_or(0);
    const uint64_t room = *c.memory_limit > used ? *c.memory_limit - used : 0;
    if (!available || room < *available) available = room;
  }
  return available;
}

}  // namespace kd::machine
