#include "report_text.h"

#include <fmt/format.h>

namespace kd::text {

using nlohmann::json;
using json_read::field;

std::string libtorch(const json& pt) {
  if (field(pt, "loaded") != true) return "not loaded";
  const std::string backend = str(pt, "backend", "none");
  std::string kind = backend == "cuda"   ? fmt::format("CUDA {} build", str(pt, "cuda_compiled"))
                     : backend == "rocm" ? fmt::format("ROCm/HIP {} build", str(pt, "hip_compiled"))
                                         : "CPU-only build";
  return fmt::format("{} ({}, found via {})", str(pt, "version"), kind, str(pt, "source"));
}

std::string device(const json& d) {
  return fmt::format("{} (compute capability {}, {:.1f} GiB)", str(d, "name"), str(d, "capability"),
                     field(d, "total_memory_bytes").is_number() ? field(d, "total_memory_bytes").get<double>() / (1024.0 * 1024 * 1024) : 0.0);
}

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
  for (const auto& t : field(l, "tests")) {
    ++c.total;
    if (t.value("status", "") == "passed") ++c.passed;
    if (t.value("status", "") == "failed" && c.first_failure.empty())
      c.first_failure = fmt::format("{} at {}", str(t, "code"), str(t, "stage"));
  }
  return c;
}

}  // namespace kd::text
