#include "aggregate.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "report_check.h"
#include "contract/report_fields.h"
#include "report_text.h"
#include "verdict/json_read.h"

namespace kd {
namespace {

using nlohmann::json;
using json_read::field;

const char* problem_name(ReportSource::Problem p) {
  switch (p) {
    case ReportSource::Problem::Missing: return "missing";
    case ReportSource::Problem::Unreadable: return "unreadable";
    default: return "invalid";
  }
}

// The failing layer: the first layer marked failed, else the stage's prefix ("L2.gpu_available" -> "L2").
json failing_layer(const json& r) {
  // The stage names the step that failed ("L2.gpu_available"), also when the test that reported it belongs to a
  // later layer (a run of L3 alone stops at L2's prerequisite); the failed layer only when the stage is no step.
  if (const auto stage = report::read(r, report::stage)) {
    const std::string& s = *stage;
    const size_t dot = s.find('.');
    if (s.size() > 1 && s[0] == 'L' && std::isdigit(static_cast<unsigned char>(s[1])) && dot != std::string::npos)
      return s.substr(0, dot);
  }
  for (const auto& l : report::read(r, report::layers))
    if (report::read(l, report::layer_status) == "failed") return report::to_value(report::read(l, report::layer_id));
  return nullptr;
}

// The driver nvidia-smi saw (--host-check), or null: one per machine, the first GPU's.
json driver(const json& r) {
  const json& gpus = field(report::read(r, report::host), "gpus");
  return gpus.is_array() && !gpus.empty() ? gpus[0]["driver_version"] : json();
}

// A file name is bytes, not always UTF-8; the aggregate's text is: invalid bytes read as U+FFFD.
std::string utf8_name(const std::string& name) {
  return json::parse(json(name).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

json string_or_null(const json& v) { return v.is_string() ? v : json(); }

json machine(const std::string& name, const json& r) {
  using report::to_value, report::read;
  return {{"report", name},
          {"run_id", to_value(read(r, report::run_id))},
          {"status", to_value(read(r, report::status))},
          {"code", to_value(read(r, report::code))},
          {"exit_code", to_value(read(r, report::exit_code))},
          {"layer", read(r, report::status) == "failed" ? failing_layer(r) : json()},
          {"stage", to_value(read(r, report::stage))},
          {"message", to_value(read(r, report::error_message))},
          {"target", text::target(read(r, report::requested))},
          {"device", string_or_null(field(read(r, report::device), "name"))},
          {"libtorch", read(r, report::pytorch_loaded) == true ? to_value(read(r, report::pytorch_version)) : json()},
          {"cuda", to_value(read(r, report::pytorch_cuda_compiled))},
          {"hip", to_value(read(r, report::pytorch_hip_compiled))},
          {"driver", driver(r)},
          {"suite", to_value(read(r, report::runtime_suite_version))},
          {"rank", to_value(read(r, report::collective_rank))},  // L8: this report's rank of its job, or null
          {"world_size", to_value(read(r, report::collective_world_size))}};
}

// L8's job, when the reports are ranks of one: one row per rank, the ranks that sent no report, and the
// job's verdict (the lowest failing rank's). Null when no report is a rank.
json collective_job(const json& machines) {
  std::map<int, json> ranks;
  int world = 0;
  for (const auto& m : machines)
    if (m["rank"].is_number_integer()) {
      ranks.emplace(m["rank"].get<int>(), m);
      world = std::max(world, m["world_size"].is_number_integer() ? m["world_size"].get<int>() : 0);
    }
  if (ranks.empty()) return json();
  json rows = json::array(), unreported = json::array(), first_failing;
  for (const auto& [rank, m] : ranks) {
    rows.push_back({{"rank", rank}, {"report", m["report"]}, {"status", m["status"]}, {"code", m["code"]},
                    {"stage", m["stage"]}});
    if (m["status"] == "failed" && first_failing.is_null()) first_failing = rows.back();
  }
  for (int r = 0; r < world && unreported.size() < 64; ++r)
    if (!ranks.count(r)) unreported.push_back(r);
  const bool passed = first_failing.is_null() && unreported.empty();
  return {{"world_size", world},
          {"reported", ranks.size()},
          {"unreported_ranks", unreported},
          {"status", passed ? "passed" : "failed"},
          {"first_failing", first_failing},
          {"ranks", rows}};
}

// [{"value": V, "count": N}] for one key over the machines, most frequent first; null means "not reported".
json seen(const json& machines, const char* key) {
  std::map<std::string, std::pair<json, int>> by_value;
  for (const auto& m : machines) {
    auto& entry = by_value[m[key].dump()];
    entry.first = m[key];
    ++entry.second;
  }
  std::vector<std::pair<json, int>> list;
  for (auto& [_, entry] : by_value) list.push_back(entry);
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json out = json::array();
  for (const auto& [value, count] : list) out.push_back({{"value", value}, {"count", count}});
  return out;
}

json code_counts(const json& machines) {
  std::map<std::pair<int, std::string>, int> counts;  // ordered by exit code, then name
  for (const auto& m : machines) ++counts[{m["exit_code"].get<int>(), m["code"].get<std::string>()}];
  json out = json::array();
  for (const auto& [key, n] : counts) out.push_back({{"code", key.second}, {"exit_code", key.first}, {"count", n}});
  return out;
}

}  // namespace

json aggregate_reports(const std::vector<ReportSource>& sources) {
  json machines = json::array(), failing = json::array(), not_counted = json::array(), injected = json::array();
  std::map<std::string, std::string> first_with_run_id;
  for (const auto& s : sources) {
    const std::string name = utf8_name(s.name);
    std::optional<std::string> why;
    const char* problem = problem_name(s.problem);
    if (s.problem != ReportSource::Problem::None) {
      why = s.message;
    } else if (!(why = report_problem(s.report))) {
      const auto [it, fresh] = first_with_run_id.emplace(s.report["run_id"].get<std::string>(), name);
      if (!fresh) {
        problem = "duplicate";  // a copy of one run would count one machine twice
        why = "the same run (run_id " + it->first + ") as " + it->second;
      }
    }
    if (why) {
      not_counted.push_back({{"report", name}, {"problem", problem}, {"message", *why}});
      continue;
    }
    // A test-only fault injection is no machine's result: listed apart, never counted (README "fault injection").
    if (const json& fault = field(field(s.report, "requested"), "fault_injection"); fault.is_string()) {
      injected.push_back({{"report", name}, {"run_id", s.report["run_id"]}, {"fault", fault}, {"code", s.report["code"]}});
      continue;
    }
    machines.push_back(machine(name, s.report));
    if (machines.back()["status"] == "failed") failing.push_back(machines.back());
  }
  const bool any_failed = !failing.empty(), any_not_counted = !not_counted.empty();
  const int exit = any_failed && any_not_counted ? kFleetBoth
                   : any_failed                  ? kFleetMachineFailed
                   : any_not_counted             ? kFleetReportNotCounted
                                                 : 0;
  json versions = json::object();
  for (const char* key : {"libtorch", "cuda", "hip", "driver", "device", "suite"}) versions[key] = seen(machines, key);
  return {{"schema_version", "1.2"},  // 1.2: job (L8's ranks), rank and world_size of each machine
          {"kind", "kernodeck-aggregate"},
          {"status", exit == 0 ? "passed" : "failed"},
          {"exit_code", exit},
          {"counts",
           {{"reports", sources.size()},
            {"counted", machines.size()},
            {"passed", machines.size() - failing.size()},
            {"failed", failing.size()},
            {"not_counted", not_counted.size()},
            {"injected", injected.size()}}},
          {"codes", code_counts(machines)},
          {"failing", failing},
          {"not_counted", not_counted},
          {"injected", injected},
          {"versions", versions},
          {"job", collective_job(machines)},
          {"machines", machines}};
}

}  // namespace kd
