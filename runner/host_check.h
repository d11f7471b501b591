// --host-check: what nvidia-smi sees (driver version, total memory of each GPU), in at most
// 3 s, next to the worker, and NVML's health facts of every GPU (host.nvml, fixtures/nvml_facts.h)
// in the same 3 s. It informs the report; it never changes the verdict.
#pragma once
#include <future>
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

inline constexpr double kHostCheckLimitS = 3.0;

// The report's "host" object from nvidia-smi's output. Pure, unit-tested.
nlohmann::json host_from_nvidia_smi(bool found, bool timed_out, int exit_status, const std::string& output,
                                    double seconds);

// Starts the check on its own thread; get() the report's "host" object.
std::future<nlohmann::json> start_host_check();

}  // namespace kd
