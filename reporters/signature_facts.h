// What the signatures (verdict/signatures.h) and the machine's warnings judge, read from a built report: the build's
// and the device's facts, the worker's NVML facts and the machine around the GPU (host, docs/machine.md).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "verdict/signatures.h"

namespace kd {

// visible_devices: CUDA_VISIBLE_DEVICES as machine::device_list_name says it (its value never reaches the report).
SignatureFacts signature_facts(const nlohmann::json& report, const std::string& visible_devices);

}  // namespace kd
