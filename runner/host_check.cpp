#include "host_check.h"

#include <cctype>

#include "contract/report_parts.h"
#include "fixtures/nvml_facts.h"
#include "machine/kernel_log.h"
#include "process/run_process.h"
#include "reporters/redact.h"

namespace kd {
namespace {

constexpr const char* kNote =
    "nvidia-smi is an NVIDIA tool: this is not an equivalent check for ROCm (AMD GPUs are not looked at here)";

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// A count of MiB nvidia-smi could print: digits, few enough that no GPU's memory overflows it.
bool mib_count(const std::string& s) {
  if (s.empty() || s.size() > 15) return false;
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

nlohmann::json host_from_nvidia_smi(bool found, bool timed_out, int exit_status, const std::string& output,
                                    double seconds) {
  nlohmann::json host, gpus = nlohmann::json::array();
  report::put(&host, report::host_tool, "nvidia-smi");
  report::put(&host, report::host_status, "ok");
  report::put(&host, report::host_message, std::nullopt);
  report::put(&host, report::host_duration_ms, seconds * 1000);
  report::put(&host, report::host_note, kNote);
  const std::string first_line = trim(output.substr(0, output.find('\n')));
  if (!found) {
    report::put(&host, report::host_status, "absent");
  } else if (timed_out) {
    report::put(&host, report::host_status, "timed_out");
    report::put(&host, report::host_message, "nvidia-smi did not answer within 3 s and was stopped");
  } else if (exit_status != 0) {
    report::put(&host, report::host_status, "failed");
    report::put(&host, report::host_message,
                redact(first_line.empty() ? "nvidia-smi exited with status " + std::to_string(exit_status) : first_line));
  } else {
    size_t start = 0;
    while (start < output.size()) {
      const size_t nl = output.find('\n', start);
      const std::string line = trim(output.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
      start = nl == std::string::npos ? output.size() : nl + 1;
      if (line.empty()) continue;
      const size_t comma = line.find(',');
      const std::string driver = comma == std::string::npos ? "" : trim(line.substr(0, comma));
      const std::string memory = comma == std::string::npos ? "" : trim(line.substr(comma + 1));
      if (driver.empty() || !mib_count(memory)) {
        report::put(&host, report::host_status, "failed");
        report::put(&host, report::host_message, redact("unexpected output: " + line));
        break;
      }
      nlohmann::json gpu;
      report::put(&gpu, report::host_gpu_driver_version, driver);
      report::put(&gpu, report::host_gpu_memory_total_mib, std::stoll(memory));
      gpus.push_back(std::move(gpu));
    }
  }
  // What nvidia-smi listed counts only when it answered as expected throughout.
  report::put(&host, report::host_gpus, report::read(host, report::host_status) == "ok" ? gpus : nlohmann::json::array());
  return host;
}

std::future<nlohmann::json> start_host_check(const std::optional<std::string>& kernel_log_file) {
  return std::async(std::launch::async, [kernel_log_file] {
    // NVML's child runs next to nvidia-smi: the whole check still ends within 3 s.
    static_assert(kNvmlLimitS <= kHostCheckLimitS, "NVML's child must end within the host check's limit");
    std::future<nlohmann::json> nvml = std::async(std::launch::async, [] { return query_nvml_facts(true, true); });
    const std::string smi = find_executable("nvidia-smi");
    nlohmann::json host;
    if (smi.empty()) {
      host = host_from_nvidia_smi(false, false, 0, "", 0);
    } else {
      const ProcessResult r = run_process(
          {smi, "--query-gpu=driver_version,memory.total", "--format=csv,noheader,nounits"}, kHostCheckLimitS, true);
      host = host_from_nvidia_smi(true, r.timed_out, r.started ? r.exit_status : 127, r.output, r.seconds);
    }
    // host.nvml is a field of the report (the worker's NVML facts land there too): put it from the report's root.
    nlohmann::json report_root = {{"host", std::move(host)}};
    report::put(&report_root, report::host_kernel_log, machine::read_kernel_log(kernel_log_file, true));
    report::put(&report_root, report::host_nvml, nvml.get());
    return std::move(report_root["host"]);
  });
}

}  // namespace kd
