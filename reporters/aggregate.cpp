#include "aggregate.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "report_check.h"
#include "verdict/actions.h"
#include "contract/report_parts.h"
#include "report_text.h"

namespace kd {
namespace {

using nlohmann::json;

const char* problem_name(ReportSource::Problem p) {
  switch (p) {
    case ReportSource::Problem::Missing: return "missing";
    case ReportSource::Problem::Unreadable: return "unreadable";
    default: return "invalid";
  }
}

// The failing layer: the first layer marked failed, else the stage's prefix ("L2.gpu_available" -> "L2").
fleet::Text failing_layer(const json& r) {
  // The stage names the step that failed ("L2.gpu_available"), also when the test that reported it belongs to a
  // later layer (a run of L3 alone stops at L2's prerequisite); the failed layer only when the stage is no step.
  if (const auto stage = report::read(r, report::stage)) {
    const std::string& s = *stage;
    const size_t dot = s.find('.');
    if (s.size() > 1 && s[0] == 'L' && std::isdigit(static_cast<unsigned char>(s[1])) && dot != std::string::npos)
      return s.substr(0, dot);
  }
  for (const auto& l : report::read(r, report::layers))
    if (report::read(l, report::layer_status) == "failed") return report::read(l, report::layer_id);
  return std::nullopt;
}

// The driver nvidia-smi saw (--host-check), or null: one per machine, the first GPU's.
fleet::Text driver(const json& r) {
  const json& gpus = report::read(report::read(r, report::host), report::host_gpus);
  return gpus.empty() ? std::nullopt : report::read(gpus[0], report::host_gpu_driver_version);
}

// A file name is bytes, not always UTF-8; the aggregate's text is: invalid bytes read as U+FFFD.
std::string utf8_name(const std::string& name) {
  return json::parse(json(name).dump(-1, ' ', false, json::error_handler_t::replace)).get<std::string>();
}

// A checked report (report_problem() found none): its verdict fields are there.
fleet::Machine machine(const std::string& name, const json& r) {
  using report::read;
  const bool failed = read(r, report::status) == "failed";
  return {name,
          read(r, report::run_id).value_or(""),
          read(r, report::status).value_or(""),
          read(r, report::code).value_or(""),
          static_cast<int>(read(r, report::exit_code).value_or(0)),
          failed ? failing_layer(r) : std::nullopt,
          read(r, report::stage),
          read(r, report::error_message),
          text::target(read(r, report::requested)),
          read(read(r, report::device), report::device_name),
          read(r, report::pytorch_loaded) == true ? read(r, report::pytorch_version) : std::nullopt,
          read(r, report::pytorch_cuda_compiled),
          read(r, report::pytorch_hip_compiled),
          driver(r),
          read(r, report::runtime_suite_version),
          read(r, report::collective_rank),  // L8: this report's rank of its job, or null
          read(r, report::collective_world_size),
          failed ? read(r, report::error_action) : std::nullopt};
}

// L8's job, when the reports are ranks of one: one row per rank, the ranks that sent no report, and the
// job's verdict (the lowest failing rank's). None when no report is a rank.
std::optional<fleet::Job> collective_job(const std::vector<fleet::Machine>& machines) {
  std::map<int64_t, const fleet::Machine*> ranks;
  int64_t world = 0;
  for (const auto& m : machines)
    if (m.rank) {
      ranks.emplace(*m.rank, &m);
      world = std::max(world, m.world_size.value_or(0));
    }
  if (ranks.empty()) return std::nullopt;
  fleet::Job job;
  for (const auto& [rank, m] : ranks) {
    job.ranks.push_back({rank, m->report, m->status, m->code, m->stage});
    if (m->status == "failed" && !job.first_failing) job.first_failing = job.ranks.back();
  }
  for (int64_t r = 0; r < world && job.unreported_ranks.size() < 64; ++r)
    if (!ranks.count(r)) job.unreported_ranks.push_back(r);
  job.world_size = world;
  job.reported = static_cast<int>(ranks.size());
  job.status = !job.first_failing && job.unreported_ranks.empty() ? "passed" : "failed";
  return job;
}

// Each value of one version over the machines with its count, most frequent first; null means "not reported".
std::vector<fleet::Seen> seen(const std::vector<fleet::Machine>& machines, fleet::Text fleet::Machine::*value) {
  std::map<std::string, fleet::Seen> by_value;  // by the value's JSON text: strings before null, as listed
  for (const auto& m : machines) {
    const fleet::Text& v = m.*value;
    fleet::Seen& entry = by_value[v ? json(*v).dump() : "null"];
    entry.value = v;
    ++entry.count;
  }
  std::vector<fleet::Seen> list;
  for (auto& [_, entry] : by_value) list.push_back(entry);
  std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  return list;
}

std::vector<fleet::CodeCount> code_counts(const std::vector<fleet::Machine>& machines) {
  std::map<std::pair<int, std::string>, int> counts;  // ordered by exit code, then name
  for (const auto& m : machines) ++counts[{m.exit_code, m.code}];
  std::vector<fleet::CodeCount> out;
  for (const auto& [key, n] : counts) out.push_back({key.second, key.first, n});
  return out;
}

// The failing machines per action, in the vocabulary's order; a report without one (older than 1.10) as "unknown".
std::vector<fleet::ActionCount> action_counts(const std::vector<fleet::Machine>& failing) {
  std::vector<fleet::ActionCount> out;
  int unknown = 0;
  for (const ActionInfo& a : action_vocabulary()) {
    int n = 0;
    for (const auto& m : failing) n += m.action == a.word;
    if (n) out.push_back({std::string(a.word), a.node_at_fault, n});
  }
  for (const auto& m : failing) unknown += !m.action || !action_from_word(*m.action);
  if (unknown) out.push_back({"unknown", false, unknown});
  return out;
}

}  // namespace

fleet::Aggregate aggregate(const std::vector<ReportSource>& sources) {
  fleet::Aggregate a;
  std::map<std::string, std::string> first_with_run_id;
  for (const auto& s : sources) {
    const std::string name = utf8_name(s.name);
    std::optional<std::string> why;
    const char* problem = problem_name(s.problem);
    if (s.problem != ReportSource::Problem::None) {
      why = s.message;
    } else if (!(why = report_problem(s.report))) {
      const auto [it, fresh] = first_with_run_id.emplace(report::read(s.report, report::run_id).value_or(""), name);
      if (!fresh) {
        problem = "duplicate";  // a copy of one run would count one machine twice
        why = "the same run (run_id " + it->first + ") as " + it->second;
      }
    }
    if (why) {
      a.not_counted.push_back({name, problem, *why});
      continue;
    }
    // A test-only fault injection is no machine's result: listed apart, never counted (README "fault injection").
    const json& requested = report::read(s.report, report::requested);
    std::optional<std::string> fault = report::read(requested, report::requested_fault_injection);
    if (!fault && report::read(requested, report::requested_kernel_log_file) == true) fault = "kernel-log-file";
    if (fault) {
      a.injected.push_back({name, report::read(s.report, report::run_id).value_or(""), *fault,
                            report::read(s.report, report::code).value_or("")});
      continue;
    }
    a.machines.push_back(machine(name, s.report));
    if (a.machines.back().status == "failed") a.failing.push_back(a.machines.back());
  }
  const bool any_failed = !a.failing.empty(), any_not_counted = !a.not_counted.empty();
  a.exit_code = any_failed && any_not_counted ? kFleetBoth
                : any_failed                  ? kFleetMachineFailed
                : any_not_counted             ? kFleetReportNotCounted
                                              : 0;
  a.status = a.exit_code == 0 ? "passed" : "failed";
  const auto count = [](size_t n) { return static_cast<int>(n); };
  a.counts = {count(sources.size()), count(a.machines.size()), count(a.machines.size() - a.failing.size()),
              count(a.failing.size()), count(a.not_counted.size()), count(a.injected.size())};
  a.codes = code_counts(a.machines);
  a.actions = action_counts(a.failing);
  for (const fleet::VersionRow& row : fleet::kVersionRows) a.versions[row.key] = seen(a.machines, row.value);
  a.job = collective_job(a.machines);
  return a;
}

json aggregate_reports(const std::vector<ReportSource>& sources) { return fleet::to_json(aggregate(sources)); }

}  // namespace kd
