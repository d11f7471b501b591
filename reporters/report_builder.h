// Builds the report (docs/contract.md "Report") from the worker's events and how the worker
// ended: the facts in their places, the layers, the markers, and the verdict that verdict/decision.h
// decides, rendered. Pure: unit-tested on recorded events. The supervisor alone calls it.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "contract/event_types.h"
#include "contract/options.h"
#include "verdict/codes.h"
#include "verdict/decision.h"

namespace kd {

// The report's schema_version (schema/report.schema.json); what each version added: CHANGELOG.md.
inline constexpr const char* kSchemaVersion = "1.14";

struct RunRecord {
  Options options;
  std::string run_id;
  std::string started_at;  // UTC, ISO 8601
  std::vector<events::Event> events;
  int malformed_events = 0;
  WorkerEnd worker;
  double duration_ms = 0;
  double start_mono_ms = 0;  // CLOCK_MONOTONIC at the run's start: markers are placed relative to it
  nlohmann::json host;                        // the machine around the GPU (machine/host_facts.h), with --host-check's
  std::string visible_devices_env = "unset";  // CUDA_VISIBLE_DEVICES as machine::device_list_name says it (signatures)
  std::vector<std::string> gtest_environment;  // names of the GTEST_* variables the worker neutralized
};

struct LayerInfo {  // the part of the layer registry the report needs
  std::string id, suite, title;
};

nlohmann::json build_report(const RunRecord& run, const std::vector<LayerInfo>& layers);

// One layer of the report's "layers" from the tests ended so far, the layer's own among them (the terminal's
// live lines use it too).
nlohmann::json layer_entry(const LayerInfo& layer, const std::vector<events::TestEnd>& ended);

// The code a finished report carries, e.g. to rewrite it as OUTPUT_WRITE_FAILED.
void set_verdict(nlohmann::json* report, Code code, const std::string& stage, const std::string& message);

}  // namespace kd
