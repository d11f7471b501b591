// --host-check's lines on the machine around the GPU (host, docs/machine.md): limits, container, /dev/shm, the
// temporary folder, the NVIDIA driver's side and the variables set. The warnings themselves are the report's.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

std::string render_machine(const nlohmann::json& report);

}  // namespace kd
