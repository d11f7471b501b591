// --host-check: what nvidia-smi sees (driver version, total memory of each GPU), in at most
// 3 s, next to the worker, NVML's health facts of every GPU (host.nvml, fixtures/nvml_facts.h)
// in the same 3 s, and the kernel log's Xid events (host.kernel_log, machine/kernel_log.h). It informs the report; it
// never changes the verdict.
#pragma once
#include <future>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

inline constexpr double kHostCheckLimitS = 3.0;

// The report's "host" object from nvidia-smi's output. Pure, unit-tested.
nlohmann::json host_from_nvidia_smi(bool found, bool timed_out, int exit_status, const std::string& output,
                                    double seconds);

// Starts the check on its own thread; get() the report's "host" object, with the kernel's Xid evidence of every GPU
// (host.kernel_log: kernel_log_file instead of the machine's log, TEST ONLY).
std::future<nlohmann::json> start_host_check(const std::optional<std::string>& kernel_log_file);

}  // namespace kd
