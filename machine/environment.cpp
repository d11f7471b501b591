#include "environment.h"

#include <cstdlib>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "contract/report_parts.h"

namespace kd::machine {
namespace {

enum class VarKind { devices, container_devices, alloc_conf, flag, number, presence };

struct Variable {
  const char* name;
  VarKind kind;
  std::vector<const char*> values;  // a flag's accepted values
};

// What CUDA, LibTorch and NCCL read at start and what changes their behaviour (docs/machine.md lists them).
const std::vector<Variable>& variables() {
  static const std::vector<Variable> v = {
      {"CUDA_VISIBLE_DEVICES", VarKind::devices, {}},
      {"CUDA_DEVICE_ORDER", VarKind::flag, {"FASTEST_FIRST", "PCI_BUS_ID"}},
      {"CUDA_LAUNCH_BLOCKING", VarKind::flag, {"0", "1"}},
      {"CUDA_MODULE_LOADING", VarKind::flag, {"LAZY", "EAGER", "DEFAULT"}},
      {"CUDA_CACHE_DISABLE", VarKind::flag, {"0", "1"}},
      {"CUDA_FORCE_PTX_JIT", VarKind::flag, {"0", "1"}},
      {"CUDA_DISABLE_PTX_JIT", VarKind::flag, {"0", "1"}},
      {"CUDA_DEVICE_MAX_CONNECTIONS", VarKind::number, {}},
      {"CUDA_MPS_PIPE_DIRECTORY", VarKind::presence, {}},
      {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", VarKind::number, {}},
      {"NVIDIA_VISIBLE_DEVICES", VarKind::container_devices, {"all", "none", "void"}},
      {"HIP_VISIBLE_DEVICES", VarKind::devices, {}},
      {"ROCR_VISIBLE_DEVICES", VarKind::devices, {}},
      {"PYTORCH_CUDA_ALLOC_CONF", VarKind::alloc_conf, {}},
      {"PYTORCH_ALLOC_CONF", VarKind::alloc_conf, {}},
      {"PYTORCH_HIP_ALLOC_CONF", VarKind::alloc_conf, {}},
      {"PYTORCH_NO_CUDA_MEMORY_CACHING", VarKind::flag, {"0", "1"}},
      {"PYTORCH_NVML_BASED_CUDA_CHECK", VarKind::flag, {"0", "1"}},
      {"TORCH_USE_CUDA_DSA", VarKind::flag, {"0", "1"}},
      {"TORCH_SHOW_CPP_STACKTRACES", VarKind::flag, {"0", "1"}},
      {"OMP_NUM_THREADS", VarKind::number, {}},
      {"NCCL_DEBUG", VarKind::flag, {"VERSION", "WARN", "INFO", "TRACE"}},
      {"NCCL_IB_DISABLE", VarKind::flag, {"0", "1"}},
      {"NCCL_P2P_DISABLE", VarKind::flag, {"0", "1"}},
      {"NCCL_SHM_DISABLE", VarKind::flag, {"0", "1"}},
      {"NCCL_SOCKET_IFNAME", VarKind::presence, {}},
      {"GLOO_SOCKET_IFNAME", VarKind::presence, {}},
      {"LD_LIBRARY_PATH", VarKind::presence, {}},
      {"LD_PRELOAD", VarKind::presence, {}},
  };
  return v;
}

std::string trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool whole_number(const std::string& s, bool allow_minus = false) {
  const size_t start = allow_minus && !s.empty() && s[0] == '-' ? 1 : 0;
  return s.size() > start && s.find_first_not_of("0123456789", start) == std::string::npos;
}

bool uuid_like(const std::string& s) {  // "GPU-8932f937-d72c-..." or a MIG device's "MIG-<uuid>[/g/c]"
  for (const char* prefix : {"GPU-", "MIG-"})
    if (s.rfind(prefix, 0) == 0 && s.size() > 4 &&
        s.find_first_not_of("0123456789abcdefABCDEF-/GPU", 4) == std::string::npos)
      return true;
  return false;
}

// "k:v,k:[a:b,c:d]": the top-level items (a bracket keeps its commas).
std::vector<std::string> conf_items(const std::string& s) {
  std::vector<std::string> out;
  std::string item;
  int depth = 0;
  for (char c : s) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trimmed(item));
      item.clear();
    } else {
      item += c;
    }
  }
  out.push_back(trimmed(item));
  return out;
}

bool fraction(const std::string& v, bool one_included) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  return !v.empty() && end && *end == 0 && x > 0 && (one_included ? x <= 1 : x < 1);
}

// The value of a known key: "" when it is one LibTorch 2.11 accepts, else what it needs.
std::string alloc_value_problem(const std::string& key, const std::string& v) {
  static const std::set<std::string> booleans = {"expandable_segments", "release_lock_on_cudamalloc",
                                                 "release_lock_on_hipmalloc", "pinned_use_cuda_host_register",
                                                 "pinned_use_hip_host_register", "pinned_use_background_threads",
                                                 "graph_capture_record_stream_reuse"};
  static const std::set<std::string> counts = {"max_split_size_mb", "max_non_split_rounding_mb",
                                               "pinned_num_register_threads", "pinned_reserve_segment_size_mb"};
  if (booleans.count(key)) return v == "True" || v == "False" ? "" : "True or False";
  if (counts.count(key)) return whole_number(v) ? "" : "a whole number";
  if (key == "garbage_collection_threshold") return fraction(v, false) ? "" : "a number between 0 and 1";
  if (key == "per_process_memory_fraction") return fraction(v, true) ? "" : "a number above 0, at most 1";
  if (key == "backend") return v == "native" || v == "cudaMallocAsync" ? "" : "native or cudaMallocAsync";
  if (key == "roundup_power2_divisions") {
    if (whole_number(v)) return "";
    return v.size() > 2 && v.front() == '[' && v.back() == ']' ? "" : "a whole number or a [size:divisions,...] list";
  }
  return "?";  // not a key of LibTorch 2.11
}

Validity device_list_validity(const char* value) {
  switch (check_device_list(value)) {
    case DeviceList::empty: return {true, "empty: hides every GPU"};
    case DeviceList::duplicate: return {false, "names one device twice (CUDA then shows none)"};
    case DeviceList::malformed: return {false, "an entry is neither a device index nor a GPU-/MIG- UUID"};
    default: return {true, ""};
  }
}

}  // namespace

DeviceList check_device_list(const char* value) {
  if (!value) return DeviceList::unset;
  const std::string s = trimmed(value);
  if (s.empty()) return DeviceList::empty;
  std::set<std::string> seen;
  for (const std::string& item : conf_items(s)) {
    if (!whole_number(item, true) && !uuid_like(item)) return DeviceList::malformed;
    // A number once with leading zeros is still that device ("00" is "0").
    const bool index = whole_number(item) && item.size() < 10;
    const std::string key = index ? std::to_string(std::stoll(item)) : item;
    if (!seen.insert(key).second) return DeviceList::duplicate;
  }
  return DeviceList::ok;
}

const char* device_list_name(DeviceList d) {
  switch (d) {
    case DeviceList::unset: return "unset";
    case DeviceList::empty: return "empty";
    case DeviceList::ok: return "ok";
    case DeviceList::duplicate: return "duplicate";
    case DeviceList::malformed: return "malformed";
  }
  return "unset";
}

Validity check_alloc_conf(const std::string& value) {
  if (trimmed(value).empty()) return {true, ""};
  Validity unknown;
  for (const std::string& item : conf_items(value)) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0)
      return {false, "not a list of key:value settings separated by commas"};
    const std::string key = trimmed(item.substr(0, colon)), v = trimmed(item.substr(colon + 1));
    const std::string problem = alloc_value_problem(key, v);
    if (problem == "?")
      unknown = {std::nullopt, "a key this tool does not know (a newer LibTorch's, or a misspelling)"};
    else if (!problem.empty())
      return {false, fmt::format("{} needs {}", key, problem)};
  }
  return unknown.note.empty() ? Validity{true, ""} : unknown;
}

nlohmann::json environment_facts(const GetEnv& get) {
  nlohmann::json out = nlohmann::json::array();
  for (const Variable& var : variables()) {
    const char* raw = get(var.name);
    if (!raw) continue;
    const std::string value = raw;
    Validity v{std::nullopt, ""};
    std::optional<std::string> shown;
    const auto known_flag = [&] {
      for (const char* accepted : var.values)
        if (value == accepted) return true;
      return false;
    };
    switch (var.kind) {
      case VarKind::devices: v = device_list_validity(raw); break;
      case VarKind::container_devices:
        if (known_flag()) {
          v = {true, value == "all" ? "" : "the container runtime passes no GPU"};
          shown = value;
        } else {
          v = device_list_validity(raw);
        }
        break;
      case VarKind::alloc_conf: v = check_alloc_conf(value); break;
      case VarKind::flag:
        v = known_flag() ? Validity{true, ""} : Validity{false, fmt::format("not one of {}", fmt::join(var.values, ", "))};
        if (known_flag()) shown = value;
        break;
      case VarKind::number: v = whole_number(trimmed(value)) ? Validity{true, ""} : Validity{false, "not a whole number"}; break;
      case VarKind::presence: break;
    }
    nlohmann::json entry;
    report::put(&entry, report::env_name, var.name);
    report::put(&entry, report::env_valid, v.valid);
    report::put(&entry, report::env_value, shown);
    report::put(&entry, report::env_note, report::unless_empty(v.note));
    out.push_back(std::move(entry));
  }
  return out;
}

nlohmann::json environment_facts() {
  return environment_facts([](const char* name) -> const char* { return std::getenv(name); });
}

}  // namespace kd::machine
