// Reports as build_report() makes them, and text helpers, for the tests of the human-facing reporters.
#pragma once
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

namespace kd {

// A report as build_report() makes it: L3's product check failed on cuda:0.
inline nlohmann::json failed_report() {
  return nlohmann::json::parse(R"({
    "schema_version": "1.0", "run_id": "r-42", "status": "failed", "code": "CHECK_FAILED", "exit_code": 8,
    "stage": "L3.product", "next_action": "read the reported stage before running a model",
    "requested": {"device": "cuda", "device_index": 0},
    "runtime": {"suite_version": "0.1.0"},
    "pytorch": {"loaded": true, "version": "2.11.0", "cuda_compiled": "13.0", "hip_compiled": null,
                "backend": "cuda", "source": "prefix"},
    "device": {"name": "NVIDIA H200", "capability": "9.0", "total_memory_bytes": 150109880320},
    "execution": {"device": "cuda:0", "product_verified": false, "gradient_verified": false, "loss": null},
    "layers": [
      {"id": "L1", "title": "runtime & import", "status": "passed",
       "tests": [{"name": "LibTorchLoads", "status": "passed"}]},
      {"id": "L2", "title": "backend & device", "status": "passed",
       "tests": [{"name": "BackendDeclared", "status": "passed"}, {"name": "GpuAvailable", "status": "passed"}]},
      {"id": "L3", "title": "tiny op", "status": "failed",
       "tests": [{"name": "Inputs", "status": "passed"},
                 {"name": "Product", "status": "failed", "code": "CHECK_FAILED", "stage": "L3.product"}]},
      {"id": "L4", "title": "representative input", "status": "not_run", "tests": []}],
    "warnings": ["test-only fault injection 'wrong-product' was active: this is not a diagnosis"],
    "error": {"code": "CHECK_FAILED", "message": "p = [[3,1],[7,2]], expected [[3,1],[7,3]]"}
  })");
}

inline nlohmann::json passed_cpu_report() {
  nlohmann::json r = failed_report();
  r["status"] = "passed";
  r["code"] = "CPU_CHECK_PASSED";
  r["exit_code"] = 0;
  r["stage"] = "L3.gradients";  // the last step that passed: synchronize is skipped on the CPU
  r["next_action"] = "conclude nothing about CUDA or ROCm";
  r["requested"] = {{"device", "cpu"}, {"device_index", nullptr}};
  r["pytorch"] = {{"loaded", true}, {"version", "1.13.0"}, {"backend", "none"}, {"source", "prefix"}};
  r["device"] = nullptr;
  r["execution"] = {{"device", "cpu"}, {"product_verified", true}, {"gradient_verified", true}, {"loss", 196.0}};
  r["layers"] = nlohmann::json::array();
  r["warnings"] = nlohmann::json::array();
  r["error"] = nullptr;
  return r;
}

// The first line of text that starts with start, or "".
inline std::string line_starting(const std::string& text, const std::string& start) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(start, 0) == 0) return line;
  return "";
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace kd
