#include "nvml_facts.h"

#include <dlfcn.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "host_check.h"
#include "process/run_process.h"
#include "reporters/redact.h"
#include "verdict/gpu_health.h"

namespace kd {
namespace {

using nlohmann::json;

// NVML's C ABI, as far as we use it (nvml.h is not needed to build: every driver has the same ABI).
using Ret = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
using Dev = void*;  // nvmlDevice_t
struct PciInfo {    // nvmlPciInfo_t (v1 to v3 all start like this); the rest is room for what follows
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char rest[128];
};
struct Memory {  // nvmlMemory_t
  unsigned long long total, free, used;
};

constexpr int kClockSm = 1, kClockMem = 2;                 // nvmlClockType_t
constexpr int kErrorUncorrected = 1, kErrorCorrected = 0;  // nvmlMemoryErrorType_t
constexpr int kVolatile = 0;                               // nvmlEccCounterType_t
constexpr int kTemperatureGpu = 0;                         // nvmlTemperatureSensors_t

// nvmlClocksEventReasons bits, named as nvidia-smi names them.
constexpr std::pair<unsigned long long, const char*> kReasons[] = {
    {0x1, "gpu_idle"},          {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},       {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"}};

const char* compute_mode_name(int m) {
  switch (m) {
    case 0: return "default";
    case 1: return "exclusive_thread";
    case 2: return "prohibited";
    case 3: return "exclusive_process";
    default: return "unknown";
  }
}

class Nvml {
 public:
  explicit Nvml(void* lib) : lib_(lib) {}
  // The first of `names` this library has, as a function of type F; nullptr when none.
  template <typename F>
  F fn(std::initializer_list<const char*> names) const {
    for (const char* n : names)
      if (void* p = ::dlsym(lib_, n)) return reinterpret_cast<F>(p);
    return nullptr;
  }
  std::string error(Ret r) const {
    if (auto f = fn<const char* (*)(Ret)>({"nvmlErrorString"}))
      if (const char* s = f(r)) return s;
    return fmt::format("NVML error {}", r);
  }

 private:
  void* lib_;
};

// Calls a device query if the library has it; the fact stays null otherwise or on an error
// (NVML_ERROR_NOT_SUPPORTED on a GPU without the feature is the usual one).
template <typename F, typename... A>
bool call(F f, A... args) {
  return f && f(args...) == 0;
}

json device_facts(const Nvml& n, Dev d, unsigned index) {
  json g = {{"index", index}};
  for (const char* key :
       {"name", "pci_bus_id", "memory_total_mib", "memory_used_mib", "ecc_mode", "ecc_volatile_corrected",
        "ecc_volatile_uncorrected", "retired_pages_pending", "row_remap_pending", "row_remap_failed", "pcie_gen",
        "pcie_gen_max", "pcie_width", "pcie_width_max", "sm_clock_mhz", "sm_clock_max_mhz", "mem_clock_mhz",
        "mem_clock_max_mhz", "clock_event_reasons", "temperature_c", "power_draw_w", "power_limit_w",
        "persistence_mode", "compute_mode", "mig_mode"})
    g[key] = nullptr;
  if (!d) return g;  // no handle for this index: every fact not reported
  char name[256] = {};
  if (call(n.fn<Ret (*)(Dev, char*, unsigned)>({"nvmlDeviceGetName"}), d, name, unsigned(sizeof name - 1)))
    g["name"] = std::string(name);
  PciInfo pci{};
  if (call(n.fn<Ret (*)(Dev, PciInfo*)>({"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"}), d,
           &pci))
    g["pci_bus_id"] = format_pci_bus_id({pci.domain, pci.bus, pci.device});
  Memory mem{};
  if (call(n.fn<Ret (*)(Dev, Memory*)>({"nvmlDeviceGetMemoryInfo"}), d, &mem)) {
    g["memory_total_mib"] = mem.total >> 20;
    g["memory_used_mib"] = mem.used >> 20;
  }
  int current = 0, pending = 0;
  if (call(n.fn<Ret (*)(Dev, int*, int*)>({"nvmlDeviceGetEccMode"}), d, &current, &pending))
    g["ecc_mode"] = current ? "enabled" : "disabled";
  auto ecc = n.fn<Ret (*)(Dev, int, int, unsigned long long*)>({"nvmlDeviceGetTotalEccErrors"});
  unsigned long long count = 0;
  if (g["ecc_mode"] == "enabled") {  // the counters mean nothing with ECC off
    if (call(ecc, d, kErrorCorrected, kVolatile, &count)) g["ecc_volatile_corrected"] = count;
    if (call(ecc, d, kErrorUncorrected, kVolatile, &count)) g["ecc_volatile_uncorrected"] = count;
  }
  int state = 0;
  if (call(n.fn<Ret (*)(Dev, int*)>({"nvmlDeviceGetRetiredPagesPendingStatus"}), d, &state))
    g["retired_pages_pending"] = state != 0;
  unsigned corrected = 0, uncorrected = 0, is_pending = 0, failed = 0;
  if (call(n.fn<Ret (*)(Dev, unsigned*, unsigned*, unsigned*, unsigned*)>({"nvmlDeviceGetRemappedRows"}), d, &corrected,
           &uncorrected, &is_pending, &failed)) {
    g["row_remap_pending"] = is_pending != 0;
    g["row_remap_failed"] = failed != 0;
  }
  unsigned v = 0;
  for (const auto& [key, fname] : {std::pair{"pcie_gen", "nvmlDeviceGetCurrPcieLinkGeneration"},
                                   std::pair{"pcie_gen_max", "nvmlDeviceGetMaxPcieLinkGeneration"},
                                   std::pair{"pcie_width", "nvmlDeviceGetCurrPcieLinkWidth"},
                                   std::pair{"pcie_width_max", "nvmlDeviceGetMaxPcieLinkWidth"}})
    if (call(n.fn<Ret (*)(Dev, unsigned*)>({fname}), d, &v)) g[key] = v;
  auto clock = n.fn<Ret (*)(Dev, int, unsigned*)>({"nvmlDeviceGetClockInfo"});
  auto max_clock = n.fn<Ret (*)(Dev, int, unsigned*)>({"nvmlDeviceGetMaxClockInfo"});
  if (call(clock, d, kClockSm, &v)) g["sm_clock_mhz"] = v;
  if (call(max_clock, d, kClockSm, &v)) g["sm_clock_max_mhz"] = v;
  if (call(clock, d, kClockMem, &v)) g["mem_clock_mhz"] = v;
  if (call(max_clock, d, kClockMem, &v)) g["mem_clock_max_mhz"] = v;
  unsigned long long reasons = 0;
  if (call(n.fn<Ret (*)(Dev, unsigned long long*)>(
               {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"}),
           d, &reasons)) {
    g["clock_event_reasons"] = json::array();
    for (const auto& [bit, reason] : kReasons)
      if (reasons & bit) g["clock_event_reasons"].push_back(reason);
  }
  if (call(n.fn<Ret (*)(Dev, int, unsigned*)>({"nvmlDeviceGetTemperature"}), d, kTemperatureGpu, &v))
    g["temperature_c"] = v;
  if (call(n.fn<Ret (*)(Dev, unsigned*)>({"nvmlDeviceGetPowerUsage"}), d, &v)) g["power_draw_w"] = v / 1000.0;
  if (call(n.fn<Ret (*)(Dev, unsigned*)>({"nvmlDeviceGetEnforcedPowerLimit"}), d, &v)) g["power_limit_w"] = v / 1000.0;
  if (call(n.fn<Ret (*)(Dev, int*)>({"nvmlDeviceGetPersistenceMode"}), d, &state))
    g["persistence_mode"] = state ? "enabled" : "disabled";
  if (call(n.fn<Ret (*)(Dev, int*)>({"nvmlDeviceGetComputeMode"}), d, &state)) g["compute_mode"] = compute_mode_name(state);
  unsigned mig = 0, mig_pending = 0;
  if (call(n.fn<Ret (*)(Dev, unsigned*, unsigned*)>({"nvmlDeviceGetMigMode"}), d, &mig, &mig_pending))
    g["mig_mode"] = mig ? "enabled" : "disabled";
  return g;
}

json collect() {
  void* lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return {{"status", "absent"}};
  const Nvml n(lib);
  auto init = n.fn<Ret (*)()>({"nvmlInit_v2", "nvmlInit"});
  if (!init) return {{"status", "failed"}, {"message", "libnvidia-ml.so.1 has no nvmlInit"}};
  if (const Ret r = init(); r != 0) return {{"status", "failed"}, {"message", "nvmlInit: " + n.error(r)}};
  json out = {{"status", "ok"}, {"driver_version", nullptr}, {"cuda_driver_version", nullptr}, {"gpus", json::array()}};
  char text[96] = {};
  if (call(n.fn<Ret (*)(char*, unsigned)>({"nvmlSystemGetDriverVersion"}), text, unsigned(sizeof text - 1)))
    out["driver_version"] = std::string(text);
  int cuda = 0;  // 13000 -> "13.0"
  if (call(n.fn<Ret (*)(int*)>({"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"}), &cuda))
    out["cuda_driver_version"] = fmt::format("{}.{}", cuda / 1000, cuda % 1000 / 10);
  unsigned count = 0;
  auto get_count = n.fn<Ret (*)(unsigned*)>({"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  const Ret r = get_count ? get_count(&count) : -1;
  if (r != 0) {
    out["status"] = "failed";
    out["message"] = r == -1 ? "libnvidia-ml.so.1 has no nvmlDeviceGetCount" : "nvmlDeviceGetCount: " + n.error(r);
  }
  auto handle = n.fn<Ret (*)(unsigned, Dev*)>({"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  for (unsigned i = 0; r == 0 && i < count && i < 64; ++i) {
    Dev d = nullptr;
    out["gpus"].push_back(device_facts(n, call(handle, i, &d) ? d : nullptr, i));
  }
  if (auto shutdown = n.fn<Ret (*)()>({"nvmlShutdown"})) shutdown();
  return out;
}

}  // namespace

int print_nvml_facts() {
  const std::string text = collect().dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return 0;
}

json nvml_from_child(bool started, bool timed_out, int exit_status, const std::string& output, double seconds) {
  json nvml = {{"status", "failed"}, {"message", nullptr}, {"duration_ms", seconds * 1000},
               {"driver_version", nullptr}, {"cuda_driver_version", nullptr}, {"gpus", json::array()}};
  if (timed_out) {
    nvml["status"] = "timed_out";
    nvml["message"] = "NVML did not answer within 3 s and was stopped (a hung driver or GPU)";
    return nvml;
  }
  const json got = started && exit_status == 0 ? json::parse(output, nullptr, false) : json();
  if (!got.is_object() || !got.contains("status") || !got["status"].is_string()) {
    nvml["message"] = started ? fmt::format("the NVML query ended with status {} and no facts", exit_status)
                              : std::string("the NVML query could not be started");
    return nvml;
  }
  nvml["status"] = got["status"];
  if (got.contains("message") && got["message"].is_string()) nvml["message"] = redact(got["message"].get<std::string>());
  for (const char* key : {"driver_version", "cuda_driver_version"})
    if (got.contains(key) && got[key].is_string()) nvml[key] = redact(got[key].get<std::string>());
  if (got.contains("gpus") && got["gpus"].is_array())
    for (json g : got["gpus"]) {
      if (!g.is_object()) continue;
      const GpuHealth h = judge_gpu_health(g);
      g["problems"] = h.problems;
      g["warnings"] = h.warnings;
      nvml["gpus"].push_back(std::move(g));
    }
  return nvml;
}

json query_nvml_facts(bool own_group) {
  const ProcessResult r = run_process({"/proc/self/exe", "--kd-nvml-facts"}, kHostCheckLimitS, false, own_group);
  return nvml_from_child(r.started, r.timed_out, r.exit_status, r.output, r.seconds);
}

}  // namespace kd
