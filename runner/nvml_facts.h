// GPU facts through NVML (libnvidia-ml.so.1, which every NVIDIA driver installs), loaded at
// run time: no build dependency, and a machine without it reports "absent", never a failure.
// NVML is only ever called in a child process (this executable with --kd-nvml-facts), under the
// host check's 3 s limit: a hung driver (nvmlInit can block on a sick GPU) must not hang the run,
// and the calling process (supervisor or worker) stays free of the driver's state.
#pragma once
#include <nlohmann/json.hpp>

namespace kd {

// The child's whole job: query NVML, print one JSON object on stdout, return 0.
// Every function is looked up on its own; a missing one (an older driver) leaves its facts null.
int print_nvml_facts();

// Runs the child (3 s limit) and returns the report's host.nvml object: status ok, absent,
// timed_out or failed, the facts of every GPU, and each GPU's problems and warnings
// (verdict/gpu_health.h). own_group as in run_process: the supervisor's own, the worker's not.
nlohmann::json query_nvml_facts(bool own_group);

// host.nvml from the child's outcome. Pure: unit-tested with made-up outputs.
nlohmann::json nvml_from_child(bool started, bool timed_out, int exit_status, const std::string& output, double seconds);

}  // namespace kd
