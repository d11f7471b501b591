#include "report_text.h"

#include <fmt/format.h>

namespace kd::text {

using nlohmann::json;
using json_read::field;

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
  return fmt::format("{} (compute capability {}, {:.1f} GiB)", str(d, "name"), str(d, "capability"),
                     field(d, "total_memory_bytes").is_number() ? field(d, "total_memory_bytes").get<double>() / (1024.0 * 1024 * 1024) : 0.0);
}

std::string verified(const json& r) {
  if (report::read(r, report::execution_product_verified) != true) return "";
  const std::optional<double> loss = report::read(r, report::execution_loss);
  return fmt::format("product and gradient verified on {}, loss {}", or_unknown(report::read(r, report::execution_device)),
                     loss ? json(*loss).dump() : "null");
}

std::string suite_version(const json& r) { return or_unknown(report::read(r, report::runtime_suite_version)); }

std::string target(const json& req) {
  if (str(req, "device") == "cpu") return "cpu";
  if (field(req, "device_list").is_array()) {
    std::vector<int> list;
    for (const auto& i : field(req, "device_list"))
      if (i.is_number_integer()) list.push_back(i.get<int>());
    return fmt::format("GPUs {}", fmt::join(list, ", "));
  }
  return field(req, "all_devices") == true ? "every visible GPU" : fmt::format("cuda:{}", field(req, "device_index").dump());
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
