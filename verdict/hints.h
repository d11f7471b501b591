// Known error signatures -> the likely cause and the next action, attached to the report's
// error and shown on the terminal. Pure: each rule is tested on the real error text.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "codes.h"
#include "memory_checks.h"

namespace kd {

// Whether an error message says a phrase (the hints and the app hints match by phrase).
inline bool mentions(const std::string& text, const char* needle) { return text.find(needle) != std::string::npos; }

struct HintContext {
  std::string cuda_compiled;            // the build's CUDA version, "" when unknown
  std::string driver_version;           // from --host-check, "" when unknown
  std::string device_capability;        // "9.0", "" when unknown
  std::vector<std::string> arch_list;   // the build's compiled architectures
  std::optional<bool> arch_supported;   // L2's prediction for the device
  std::string visible_devices_env;      // CUDA_VISIBLE_DEVICES: "unset", "empty" or "set" (never its value)
  std::string stage;                    // where it failed
  std::optional<memory::OomEvent> oom;  // L5's record of an out-of-memory: the phase and the numbers
};

struct Hint {
  std::string cause;
  std::string action;
};

std::optional<Hint> find_hint(Code code, const std::string& message, const HintContext& ctx);

}  // namespace kd
