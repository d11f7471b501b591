#include "report_text.h"

#include <fmt/format.h>

namespace kd::text {

using nlohmann::json;

std::string str(const json& j, const char* key, const char* fallback) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

std::string libtorch(const json& pt) {
  if (pt.value("loaded", false) != true) return "not loaded";
  const std::string backend = str(pt, "backend", "none");
  std::string kind = backend == "cuda"   ? fmt::format("CUDA {} build", str(pt, "cuda_compiled"))
                     : backend == "rocm" ? fmt::format("ROCm/HIP {} build", str(pt, "hip_compiled"))
                                         : "CPU-only build";
  return fmt::format("{} ({}, found via {})", str(pt, "version"), kind, str(pt, "source"));
}

std::string device(const json& d) {
  return fmt::format("{} (compute capability {}, {:.1f} GiB)", str(d, "name"), str(d, "capability"),
                     d.value("total_memory_bytes", 0.0) / (1024.0 * 1024 * 1024));
}

std::string target(const json& req) {
  return str(req, "device") == "cpu" ? "cpu" : fmt::format("cuda:{}", req["device_index"].dump());
}

LayerCounts count_layer(const json& l) {
  LayerCounts c;
  for (const auto& t : l["tests"]) {
    ++c.total;
    if (t.value("status", "") == "passed") ++c.passed;
    if (t.value("status", "") == "failed" && c.first_failure.empty())
      c.first_failure = fmt::format("{} at {}", str(t, "code"), str(t, "stage"));
  }
  return c;
}

}  // namespace kd::text
