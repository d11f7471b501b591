#include "report_builder.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "contract/option_table.h"
#include "contract/report_parts.h"
#include "machine_warnings.h"
#include "redact.h"
#include "signature_facts.h"
#include "worker_events.h"

#ifndef KD_VERSION
#define KD_VERSION "unknown"
#endif

namespace kd {
namespace {

using nlohmann::json;

// A field set to null (an object of entries for a list), to be filled by facts or by the verdict.
void put_null(json* report, const report::FieldInfo& f) { (*report)[json::json_pointer(f.pointer)] = nullptr; }

json skeleton(const RunRecord& run) {
  using report::put;
  json r = json::object();
  // The fixed sections: every field of theirs is there, null until a fact fills it.
  for (const report::FieldInfo& f : report::all_fields())
    for (const report::FieldInfo* section : {&report::section_runtime.info, &report::section_pytorch.info,
                                             &report::section_execution.info})
      if (std::string_view(f.pointer).rfind(std::string(section->pointer) + "/", 0) == 0) put_null(&r, f);
  put(&r, report::runtime_suite_version, KD_VERSION);  // the supervisor's own: known even when L1 did not run
  put(&r, report::pytorch_loaded, false);
  put(&r, report::execution_product_verified, false);
  put(&r, report::execution_gradient_verified, false);
  json requested = requested_options(run.options);
  put(&requested, report::requested_gtest_environment_ignored, run.gtest_environment);
  put(&r, report::schema_version, kSchemaVersion);
  put(&r, report::run_id, run.run_id);
  put(&r, report::started_at, run.started_at);
  put(&r, report::duration_ms, run.duration_ms);
  put(&r, report::requested, requested);
  put(&r, report::host, run.host);
  for (const report::FieldInfo* f : {&report::device.info, &report::python.info, &report::section_app.info,
                                     &report::section_timing.info, &report::section_memory.info, &report::section_peer.info,
                                     &report::section_collective.info, &report::section_sharing.info, &report::error.info, &report::after_failure.info})
    put_null(&r, *f);
  put(&r, report::layers, json::array());
  put(&r, report::markers, json::array());
  put(&r, report::warnings, {});
  return r;
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
    json marker;
    report::put(&marker, report::marker_name, m->name);
    report::put(&marker, report::marker_stage, report::unless_empty(m->stage));
    report::put(&marker, report::marker_t_ms, std::round(std::max(t, 0.0) * 1000) / 1000);
    out.push_back(std::move(marker));
  }
  return out;
}

std::string last_finished(const json& markers) {
  return markers.empty() ? "none" : report::read(markers.back(), report::marker_name).value_or("none");
}

// The cause and next action of a known signature (verdict/signatures.h), from the unredacted message and the facts.
void attach_diagnosis(json* report, Code code, const std::string& raw_message, const RunRecord& run) {
  if (!report::read(*report, report::error).is_object()) return;
  const std::optional<Diagnosis> d = diagnose(code, raw_message, signature_facts(*report, run.visible_devices_env));
  // The catalogue's own words and the facts' values (versions, counts, sizes): no text of the message, so nothing to
  // redact (redacting would turn "/dev/nvidia*" into "<path>/nvidia*").
  report::put(report, report::error_cause, d ? std::optional<std::string>(d->cause) : std::nullopt);
  report::put(report, report::error_signature, d ? std::optional<std::string>(d->id) : std::nullopt);
  // One next action per report: the specific one replaces the code's fixed text in both places, and the signature's
  // word the code's.
  if (!d) return;
  report::put(report, report::error_action, std::string(action_word(d->kind)));
  report::put(report, report::error_next_action, d->action);
  report::put(report, report::next_action, d->action);
}

// A skipped test's kind, as the listener sent it (fixtures/listener.h): not_applicable, or blocked by a failure.
void add_skip_kind(const events::TestEnd& ev, json* t) {
  const std::string kind = ev.skip_kind.value_or("");
  if (kind != "not_applicable" && kind != "blocked") return;  // a broken worker's: no kind rather than a guess
  report::put(t, report::test_skip_kind, kind);
  if (kind != "blocked" || !ev.blocked_by) return;
  const events::BlockedBy& by = *ev.blocked_by;
  if (by.stage.empty() || !code_from_name(by.code)) return;
  json blocked_by;
  report::put(&blocked_by, report::blocked_by_stage, by.stage);
  report::put(&blocked_by, report::blocked_by_code, by.code);
  report::put(t, report::test_blocked_by, blocked_by);
}

// A layer whose tests all skipped: blocked when an earlier failure kept any of them from running (fixing it
// would run that one), with the first such test's blocked_by; not_applicable when none of them could apply here.
void add_layer_skip_kind(json* layer) {
  bool all_not_applicable = true;
  for (const auto& t : report::read(*layer, report::layer_tests)) {
    const std::string kind = report::read(t, report::test_skip_kind).value_or("");
    if (kind == "blocked") {
      report::put(layer, report::layer_skip_kind, kind);
      if (const json& by = report::read(t, report::test_blocked_by); by.is_object()) report::put(layer, report::layer_blocked_by, by);
      return;
    }
    all_not_applicable = all_not_applicable && kind == "not_applicable";
  }
  if (all_not_applicable) report::put(layer, report::layer_skip_kind, "not_applicable");
}

// What the decision needs of this run, the report's own facts and markers included.
DecisionInput decision_input(const RunRecord& run, const json& report) {
  DecisionInput in;
  in.events = read_worker_events(run.events);
  in.worker = run.worker;
  in.last_finished_step = last_finished(report::read(report, report::markers));
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
    json t;
    report::put(&t, report::test_name, ev.test);
    report::put(&t, report::test_status, events::status_name(ev.status));
    report::put(&t, report::test_duration_ms, ev.duration_ms);
    if (ev.code) report::put(&t, report::test_code, *ev.code);
    if (ev.stage) report::put(&t, report::test_stage, *ev.stage);
    if (ev.message) report::put(&t, report::test_message, redact(*ev.message));
    if (ev.status == events::TestStatus::skipped) add_skip_kind(ev, &t);
    statuses.insert(events::status_name(ev.status));
    tests.push_back(std::move(t));
  }
  const char* status = tests.empty()               ? "not_run"
                       : statuses.count("failed")  ? "failed"
                       : statuses.count("passed")  ? "passed"
                                                   : "skipped";
  json entry;
  report::put(&entry, report::layer_id, l.id);
  report::put(&entry, report::layer_suite, l.suite);
  report::put(&entry, report::layer_title, l.title);
  report::put(&entry, report::layer_status, status);
  report::put(&entry, report::layer_tests, tests);
  if (std::string_view(status) == "skipped") add_layer_skip_kind(&entry);
  return entry;
}

void set_verdict(json* report, Code code, const std::string& stage, const std::string& message) {
  using report::put;
  const CodeInfo& i = info(code);
  const std::optional<std::string> stage_or_null = report::unless_empty(stage);
  put(report, report::code, std::string(i.name));
  put(report, report::exit_code, i.exit_code);
  put(report, report::status, is_pass(code) ? "passed" : "failed");
  put(report, report::stage, stage_or_null);
  put(report, report::error, is_pass(code) ? json() : json::object());
  if (!is_pass(code)) {
    put(report, report::error_code, std::string(i.name));
    put(report, report::error_cause, std::nullopt);
    put(report, report::error_signature, std::nullopt);
    put(report, report::error_exit_code, i.exit_code);
    put(report, report::error_stage, stage_or_null);
    put(report, report::error_meaning, std::string(i.meaning));
    put(report, report::error_message, redact(message));
    put(report, report::error_next_action, std::string(i.next_action));
    put(report, report::error_action, std::string(action_word(i.action.value_or(Action::Triage))));
  }
  put(report, report::next_action, std::string(i.next_action));
  // --device-index all: a verdict set afterwards (e.g. OUTPUT_WRITE_FAILED) is no GPU's own.
  if (report->contains(json::json_pointer(report::device_index.info.pointer))) put(report, report::device_index, std::nullopt);
}

json build_report(const RunRecord& run, const std::vector<LayerInfo>& layers) {
  json report = skeleton(run);
  for (const auto& ev : run.events)
    if (const auto* fact = std::get_if<events::Fact>(&ev)) apply_fact(&report, *fact);
  // --host-check's NVML read also counts each GPU's compute processes, which the worker's own read (made at the same
  // moment, for L2 and the signatures) leaves out: where the host check's read answered, it stands (shared-gpus.md).
  const json asked_root = {{"host", run.host}};
  if (const json& asked = report::read(asked_root, report::host_nvml); report::read(asked, report::nvml_status) == "ok")
    report::put(&report, report::host_nvml, asked);
  report::put(&report, report::layers, layers_section(layers, run.events));
  int foreign_markers = 0;
  report::put(&report, report::markers, markers_section(run, &foreign_markers));
  const Decision d = decide(decision_input(run, report));
  set_verdict(&report, d.code, d.stage, d.message);
  if (d.worker_message) attach_diagnosis(&report, d.code, d.message, run);
  if (const auto& after = d.after_failure) {
    report::put(&report, report::after_failure_event, after->event);
    report::put(&report, report::after_failure_code, std::string(info(after->code).name));
    report::put(&report, report::after_failure_stage, report::unless_empty(after->stage));
    report::put(&report, report::after_failure_message, redact(after->message));
  }
  json& warnings = report::slot(&report, report::warnings);
  for (const auto& w : d.warnings) warnings.push_back(w);
  for (const auto& ev : run.events)
    if (const auto* w = std::get_if<events::Warning>(&ev)) warnings.push_back(redact(w->text));
  for (const std::string& w : machine_warnings(run.host, !run.options.cpu_mode())) warnings.push_back(w);
  if (foreign_markers) warnings.push_back(fmt::format("{} marker(s) without this run's id were ignored", foreign_markers));
  if (run.malformed_events) warnings.push_back(fmt::format("{} unreadable event line(s) from the worker", run.malformed_events));
  if (run.options.kernel_log_file)
    warnings.push_back("test-only kernel log (--kernel-log-file): the Xid evidence is that file's, not this machine's");
  if (!run.options.fault.empty())
    warnings.push_back(fmt::format("test-only fault injection '{}' was active: this is not a diagnosis", run.options.fault));
  return report;
}

}  // namespace kd
