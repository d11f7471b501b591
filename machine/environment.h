// The environment variables that change what CUDA, LibTorch or NCCL do (host.environment, docs/machine.md): the
// name of each one set, whether its value is one they accept, and the value itself only when it is one of a known
// flag's (never a path, a device list or anything else a person typed).
#pragma once
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kd::machine {

// CUDA_VISIBLE_DEVICES and its kin: indices, GPU-/MIG- UUIDs (or their leading part), comma-separated.
enum class DeviceList { unset, empty, ok, duplicate, malformed };
DeviceList check_device_list(const char* value);
const char* device_list_name(DeviceList d);  // "unset", "empty", "ok", "duplicate", "malformed"

// A value's validity: true, false, or unknown (nothing); the note says why, never quoting the value.
struct Validity {
  std::optional<bool> valid;
  std::string note;
};
// PYTORCH_CUDA_ALLOC_CONF (and PYTORCH_ALLOC_CONF): "key:value,..." with LibTorch 2.11's keys and value kinds.
Validity check_alloc_conf(const std::string& value);

using GetEnv = std::function<const char*(const char*)>;
nlohmann::json environment_facts(const GetEnv& get);  // host.environment: one entry per variable set
nlohmann::json environment_facts();                   // this process's

}  // namespace kd::machine
