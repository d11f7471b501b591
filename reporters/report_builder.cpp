#include "report_builder.h"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "contract/option_table.h"
#include "contract/report_fields.h"
#include "redact.h"
#include "worker_events.h"

#ifndef KD_VERSION
#define KD_VERSION "unknown"
#endif
#include "verdict/hints.h"
#include "verdict/json_read.h"

namespace kd {
namespace {

using nlohmann::json;
using json_read::text;

json skeleton(const RunRecord& run) {
  json requested = requested_options(run.options);
  requested["gtest_environment_ignored"] = run.gtest_environment;
  return {
      {"schema_version", kSchemaVersion},
      {"run_id", run.run_id},
      {"started_at", run.started_at},
      {"duration_ms", run.duration_ms},
      {"requested", requested},
      {"runtime",
       {{"os_family", nullptr}, {"os_name", nullptr}, {"arch", nullptr}, {"libc", nullptr}, {"compiler", nullptr},
        {"suite_version", KD_VERSION}}},  // the supervisor's own: known even when L1 did not run
      {"pytorch",
       {{"loaded", false}, {"version", nullptr}, {"cuda_compiled", nullptr}, {"hip_compiled", nullptr},
        {"backend", nullptr}, {"source", nullptr}, {"gpu_available", nullptr}, {"visible_device_count", nullptr},
        {"arch_list", nullptr}}},
      {"device", nullptr},
      {"execution",
       {{"device", nullptr}, {"product_verified", false}, {"gradient_verified", false}, {"loss", nullptr},
        {"arch_supported", nullptr}}},
      {"host", run.host},
      {"python", nullptr},
      {"app", nullptr},
      {"timing", nullptr},
      {"memory", nullptr},
      {"peer", nullptr},
      {"collective", nullptr},
      {"layers", json::array()},
      {"markers", json::array()},
      {"warnings", json::array()},
      {"error", nullptr},
      {"after_failure", nullptr},
  };
}

json redacted(json v) {  // every string, at any depth
  if (v.is_string()) return redact(v.get<std::string>());
  if (v.is_structured())
    for (auto& item : v) item = redacted(item);
  return v;
}

// Facts come from the worker, which may be broken: one lands only at a field of the report's
// (contract/report_fields.h) and only with a value of that field's kind, so it never reshapes the report.
void apply_fact(json* report, const events::Fact& fact) {
  const report::FieldInfo* field = report::find_field(fact.path);
  if (!field || !report::fits(*field, fact.value)) return;
  try {
    (*report)[json::json_pointer(fact.path)] = redacted(fact.value);
  } catch (const json::exception&) {  // a key that is no pointer token, or a section of another type: dropped
  }
}

json layers_section(const std::vector<LayerInfo>& layers, const std::vector<events::Event>& events) {
  std::vector<events::TestEnd> tests;
  for (const auto& ev : events)
    if (const auto* t = std::get_if<events::TestEnd>(&ev)) tests.push_back(*t);
  json out = json::array();
  for (const auto& l : layers) out.push_back(layer_entry(l, tests));
  return out;
}

// Steps that finished, in order; a marker of another run (or without one) is not this run's.
json markers_section(const RunRecord& run, int* foreign) {
  json out = json::array();
  for (const auto& ev : run.events) {
    const auto* m = std::get_if<events::Marker>(&ev);
    if (!m) continue;
    if (m->run_id != run.run_id || m->name.empty()) {
      ++*foreign;
      continue;
    }
    const double t = m->t_mono_ms - run.start_mono_ms;
    out.push_back({{"name", m->name}, {"stage", m->stage.empty() ? json() : json(m->stage)},
                   {"t_ms", std::round(std::max(t, 0.0) * 1000) / 1000}});
  }
  return out;
}

std::string last_finished(const json& markers) {
  return markers.empty() ? "none" : markers.back()["name"].get<std::string>();
}

// L5's record of an out-of-memory, for the phase's cause and next action.
std::optional<memory::OomEvent> oom_event(const json& report) {
  const json& o = report::read(report, report::memory_oom);
  memory::OomEvent e;
  e.phase = text(o, "phase");
  if (e.phase.empty()) return std::nullopt;
  e.requested = json_read::count(o, "requested_bytes");
  e.device_numbers = json_read::count(o, "device_total_bytes").has_value();
  e.device_free = json_read::count(o, "device_free_bytes").value_or(0);
  e.device_total = json_read::count(o, "device_total_bytes").value_or(0);
  e.reserved = json_read::count(o, "reserved_bytes").value_or(0);
  e.allocated = json_read::count(o, "allocated_bytes").value_or(0);
  e.fraction = json_read::number(o, "fraction");
  return e;
}

HintContext hint_context(const json& report, const RunRecord& run) {
  HintContext c;
  c.cuda_compiled = report::read(report, report::pytorch_cuda_compiled).value_or("");
  c.device_capability = text(report::read(report, report::device), "capability");
  c.arch_list = report::read(report, report::pytorch_arch_list).value_or(std::vector<std::string>{});
  c.arch_supported = report::read(report, report::execution_arch_supported);
  if (run.host.is_object() && !run.host["gpus"].empty()) c.driver_version = text(run.host["gpus"][0], "driver_version");
  c.visible_devices_env = run.visible_devices_env;
  c.oom = oom_event(report);
  c.stage = text(report, "stage");
  return c;
}

// The cause and next action for a known error signature, from the unredacted message.
void attach_hint(json* report, Code code, const std::string& raw_message, const RunRecord& run) {
  if (!(*report)["error"].is_object()) return;
  const std::optional<Hint> h = find_hint(code, raw_message, hint_context(*report, run));
  (*report)["error"]["cause"] = h ? json(redact(h->cause)) : json();
  // One next action per report: the specific one replaces the code's fixed text in both places.
  if (h) (*report)["error"]["next_action"] = (*report)["next_action"] = h->action;
}

// A skipped test's kind, as the listener sent it (fixtures/listener.h): not_applicable, or blocked by a failure.
void add_skip_kind(const events::TestEnd& ev, json* t) {
  const std::string kind = ev.skip_kind.value_or("");
  if (kind != "not_applicable" && kind != "blocked") return;  // a broken worker's: no kind rather than a guess
  (*t)["skip_kind"] = kind;
  if (kind != "blocked" || !ev.blocked_by) return;
  const events::BlockedBy& by = *ev.blocked_by;
  if (!by.stage.empty() && code_from_name(by.code)) (*t)["blocked_by"] = {{"stage", by.stage}, {"code", by.code}};
}

// A layer whose tests all skipped: blocked when an earlier failure kept any of them from running (fixing it
// would run that one), with the first such test's blocked_by; not_applicable when none of them could apply here.
void add_layer_skip_kind(json* layer) {
  bool all_not_applicable = true;
  for (const auto& t : (*layer)["tests"]) {
    const std::string kind = text(t, "skip_kind");
    if (kind == "blocked") {
      (*layer)["skip_kind"] = kind;
      if (t.contains("blocked_by")) (*layer)["blocked_by"] = t["blocked_by"];
      return;
    }
    all_not_applicable = all_not_applicable && kind == "not_applicable";
  }
  if (all_not_applicable) (*layer)["skip_kind"] = "not_applicable";
}

// What the decision needs of this run, the report's own facts and markers included.
DecisionInput decision_input(const RunRecord& run, const json& report) {
  DecisionInput in;
  in.events = read_worker_events(run.events);
  in.worker = run.worker;
  in.last_finished_step = last_finished(report["markers"]);
  in.timeout_s = run.options.timeout_s;
  in.cpu_mode = run.options.cpu_mode();
  in.verified = report::read(report, report::execution_product_verified) == true &&
                report::read(report, report::execution_gradient_verified) == true;
  return in;
}

}  // namespace

json layer_entry(const LayerInfo& l, const std::vector<events::TestEnd>& ended) {
  json tests = json::array();
  std::set<std::string> statuses;
  for (const auto& ev : ended) {
    if (ev.suite != l.suite) continue;
    json t = {{"name", ev.test}, {"status", events::status_name(ev.status)}, {"duration_ms", ev.duration_ms}};
    if (ev.code) t["code"] = *ev.code;
    if (ev.stage) t["stage"] = *ev.stage;
    if (ev.message) t["message"] = redact(*ev.message);
    if (ev.status == events::TestStatus::skipped) add_skip_kind(ev, &t);
    statuses.insert(events::status_name(ev.status));
    tests.push_back(std::move(t));
  }
  const char* status = tests.empty()               ? "not_run"
                       : statuses.count("failed")  ? "failed"
                       : statuses.count("passed")  ? "passed"
                                                   : "skipped";
  json entry = {{"id", l.id}, {"suite", l.suite}, {"title", l.title}, {"status", status}, {"tests", tests}};
  if (entry["status"] == "skipped") add_layer_skip_kind(&entry);
  return entry;
}

void set_verdict(json* report, Code code, const std::string& stage, const std::string& message) {
  const CodeInfo& i = info(code);
  (*report)["code"] = i.name;
  (*report)["exit_code"] = i.exit_code;
  (*report)["status"] = is_pass(code) ? "passed" : "failed";
  (*report)["stage"] = stage.empty() ? json() : json(stage);
  if (is_pass(code)) {
    (*report)["error"] = nullptr;
  } else {
    (*report)["error"] = {{"code", i.name},
                          {"cause", nullptr},
                          {"exit_code", i.exit_code},
                          {"stage", stage.empty() ? json() : json(stage)},
                          {"meaning", i.meaning},
                          {"message", redact(message)},
                          {"next_action", i.next_action}};
  }
  (*report)["next_action"] = i.next_action;
  // --device-index all: a verdict set afterwards (e.g. OUTPUT_WRITE_FAILED) is no GPU's own.
  if (report->contains("device_index")) (*report)["device_index"] = nullptr;
}

json build_report(const RunRecord& run, const std::vector<LayerInfo>& layers) {
  json report = skeleton(run);
  for (const auto& ev : run.events)
    if (const auto* fact = std::get_if<events::Fact>(&ev)) apply_fact(&report, *fact);
  report["layers"] = layers_section(layers, run.events);
  int foreign_markers = 0;
  report["markers"] = markers_section(run, &foreign_markers);
  const Decision d = decide(decision_input(run, report));
  set_verdict(&report, d.code, d.stage, d.message);
  if (d.worker_message) attach_hint(&report, d.code, d.message, run);
  if (d.after_failure)
    report["after_failure"] = {{"event", d.after_failure->event},
                               {"code", info(d.after_failure->code).name},
                               {"stage", d.after_failure->stage.empty() ? json() : json(d.after_failure->stage)},
                               {"message", redact(d.after_failure->message)}};
  for (const auto& w : d.warnings) report["warnings"].push_back(w);
  for (const auto& ev : run.events)
    if (const auto* w = std::get_if<events::Warning>(&ev)) report["warnings"].push_back(redact(w->text));
  if (foreign_markers)
    report["warnings"].push_back(fmt::format("{} marker(s) without this run's id were ignored", foreign_markers));
  if (run.malformed_events)
    report["warnings"].push_back(fmt::format("{} unreadable event line(s) from the worker", run.malformed_events));
  if (!run.options.fault.empty())
    report["warnings"].push_back(fmt::format("test-only fault injection '{}' was active: this is not a diagnosis", run.options.fault));
  return report;
}

}  // namespace kd
