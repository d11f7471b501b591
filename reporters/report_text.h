// Phrases the human-facing reporters (terminal, Markdown summary) share, so that both say
// the same thing about the same report.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "contract/report_parts.h"

namespace kd::text {

// These read a whole report's fields (contract/report_fields.h).
// "2.11.0 (CUDA 13.0 build, found via python)", or "not loaded".
std::string libtorch(const nlohmann::json& report);

// "NVIDIA H200 (compute capability 9.0, 139.8 GiB)", or "" when the report has no device.
std::string device(const nlohmann::json& report);

// "product and gradient verified on cuda:0, loss 196.0", or "" when the product was not verified.
std::string verified(const nlohmann::json& report);

// The suite's version the report names, "?" when it names none.
std::string suite_version(const nlohmann::json& report);

// "injected fault wrong-product: test only, not a diagnosis" when the run had a test-only --inject-fault, else "":
// beside every verdict the reporters show (the terminal's verdict line, --quiet's, the Markdown summary).
std::string injected_fault(const nlohmann::json& report);

// "cuda:0", "cpu" or "every visible GPU": what was asked for.
std::string target(const nlohmann::json& requested);

struct LayerCounts {
  int passed = 0, total = 0;
  std::string first_failure;  // "GPU_UNAVAILABLE at L2.gpu_available", or ""
};
LayerCounts count_layer(const nlohmann::json& layer);

}  // namespace kd::text
