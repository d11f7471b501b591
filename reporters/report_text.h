// Phrases the human-facing reporters (terminal, Markdown summary) share, so that both say
// the same thing about the same report.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace kd::text {

// j[key], or null when j is not an object or has no such key (const operator[] on a missing
// key is undefined behaviour in nlohmann::json).
const nlohmann::json& field(const nlohmann::json& j, const char* key);

// j[key] when it is a string, else fallback.
std::string str(const nlohmann::json& j, const char* key, const char* fallback = "?");

// "2.11.0 (CUDA 13.0 build, found via python)", or "not loaded".
std::string libtorch(const nlohmann::json& pytorch);

// "NVIDIA H200 (compute capability 9.0, 139.8 GiB)" from the report's device object.
std::string device(const nlohmann::json& device);

// "cuda:0", "cpu" or "every visible GPU": what was asked for.
std::string target(const nlohmann::json& requested);

struct LayerCounts {
  int passed = 0, total = 0;
  std::string first_failure;  // "GPU_UNAVAILABLE at L2.gpu_available", or ""
};
LayerCounts count_layer(const nlohmann::json& layer);

}  // namespace kd::text
