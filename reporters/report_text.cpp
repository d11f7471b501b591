#include "report_text.h"

#include <fmt/format.h>

namespace kd::text {

using nlohmann::json;

namespace {
std::string or_unknown(const std::optional<std::string>& v) { return v.value_or("?"); }
}  // namespace

std::string libtorch(const json& r) {
  if (report::read(r, report::pytorch_loaded) != true) return "not loaded";
  const std::string backend = report::read(r, report::pytorch_backend).value_or("none");
  std::string kind = backend == "cuda"   ? fmt::format("CUDA {} build", or_unknown(report::read(r, report::pytorch_cuda_compiled)))
                     : backend == "rocm" ? fmt::format("ROCm/HIP {} build", or_unknown(report::read(r, report::pytorch_hip_compiled)))
                                         : "CPU-only build";
  return fmt::format("{} ({}, found via {})", or_unknown(report::read(r, report::pytorch_version)), kind,
                     or_unknown(report::read(r, report::pytorch_source)));
}

std::string device(const json& r) {
  const json& d = report::read(r, report::device);
  if (!d.is_object()) return "";
  return fmt::format("{} (compute capability {}, {:.1f} GiB)", report::read(d, report::device_name).value_or("?"),
                     report::read(d, report::device_capability).value_or("?"),
                     static_cast<double>(report::read(d, report::device_total_memory_bytes).value_or(0)) / (1024.0 * 1024 * 1024));
}

std::string verified(const json& r) {
  if (report::read(r, report::execution_product_verified) != true) return "";
  const std::optional<double> loss = report::read(r, report::execution_loss);
  return fmt::format("product and gradient verified on {}, loss {}", or_unknown(report::read(r, report::execution_device)),
                     loss ? json(*loss).dump() : "null");
}

std::string suite_version(const json& r) { return or_unknown(report::read(r, report::runtime_suite_version)); }

std::string injected_fault(const json& r) {
  const auto fault = report::read(report::read(r, report::requested), report::requested_fault_injection);
  return fault ? fmt::format("injected fault {}: test only, not a diagnosis", *fault) : "";
}

std::string target(const json& req) {
  if (report::read(req, report::requested_device) == "cpu") return "cpu";
  if (const json& list = report::read(req, report::requested_device_list); list.is_array()) {
    std::vector<int> gpus;
    for (const auto& i : list)
      if (i.is_number_integer()) gpus.push_back(i.get<int>());
    return fmt::format("GPUs {}", fmt::join(gpus, ", "));
  }
  return report::read(req, report::requested_all_devices) == true
             ? "every visible GPU"
             : fmt::format("cuda:{}", report::json_at(req, report::requested_device_index).dump());
}

LayerCounts count_layer(const json& l) {
  LayerCounts c;
  for (const auto& t : report::read(l, report::layer_tests)) {
    ++c.total;
    const std::optional<std::string> status = report::read(t, report::test_status);
    if (status == "passed") ++c.passed;
    if (status == "failed" && c.first_failure.empty())
      c.first_failure = fmt::format("{} at {}", report::read(t, report::test_code).value_or("?"),
                                    report::read(t, report::test_stage).value_or("?"));
  }
  return c;
}

}  // namespace kd::text
